// Writing files safely (docs/reliability.md, "Writing files"): every output of KCX goes
// through here.
//
// A file is written to a new temporary file with a unique name in the target's folder
// (created with O_CREAT|O_EXCL|O_NOFOLLOW, so a link or file planted at that name is never
// followed or reused), flushed to disk (fsync), renamed over the target, and the folder is
// flushed too. A reader, a crash or a kill sees the old file or the new one, never a part;
// writers racing for one path each rename a whole file, so the last one wins whole.
//
// The target itself must not be a symbolic link, nor anything but a regular file when it
// exists: writing through a link would replace a file elsewhere, renaming over it would
// silently turn the link into a file, so both are refused naming the path. The exception
// is a target that is (or links to) a FIFO or a character device (/dev/null, a shell's
// >(...), /dev/stdout on a pipe): there is no file to replace, it is written straight
// through. Every failure
// throws InputError naming the target and the reason (strerror) and removes the temporary.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kcx {

// Permission bits for new files, before the umask: outputs are 0666 (0644 with the usual
// umask 022), private keys 0600. A file that replaces an existing one keeps that file's
// permission bits, unless the mode is private (0600 always stays 0600).
inline constexpr mode_t kOutputMode = 0666;
inline constexpr mode_t kPrivateMode = 0600;

// A file written atomically, streamed: write() any number of times, then commit(). When
// destroyed without commit() (an error, an exception), the temporary is removed and the
// target is untouched.
class AtomicWriter {
public:
    explicit AtomicWriter(std::string path, mode_t mode = kOutputMode);
    AtomicWriter(const AtomicWriter&) = delete;
    AtomicWriter& operator=(const AtomicWriter&) = delete;
    ~AtomicWriter();

    void write(const void* data, size_t n);
    void write(std::string_view s) { write(s.data(), s.size()); }
    // Flushes, renames over the target and flushes the folder. With `replace` false the
    // target must not exist (checked atomically: link(), never a rename over a file that
    // appeared meanwhile), else "already exists" is thrown and nothing is replaced.
    void commit(bool replace = true);
    // Drops the temporary (also done by the destructor when not committed).
    void abort() noexcept;

    // The temporary's descriptor, for a writer of its own (gzdopen on a dup()): what it
    // wrote must be flushed and its dup closed before commit().
    int fd() const { return fd_; }
    const std::string& path() const { return path_; }
    const std::string& tempPath() const { return tmp_; }
    // Throws InputError "PATH: cannot WHAT: strerror(err)".
    [[noreturn]] void fail(const std::string& what, int err) const;

private:
    std::string path_, tmp_;
    int fd_ = -1;
    bool committed_ = false;
    bool passThrough_ = false;   // a FIFO or character device: written in place
};

// The one-shot form: `bytes` become the whole of `path`.
void writeFileAtomically(const std::string& path, std::string_view bytes, mode_t mode = kOutputMode);

// An input of a command, by its role ("run", "contract", "key", ...).
struct NamedInput {
    std::string role;
    std::string path;
};

// "refusing to write OUT: it is the input ROLE PATH" when `out` is the same file (device
// and inode, after following links) as one of `inputs`; empty when it is none of them or
// does not exist yet. Inputs that do not exist are skipped.
std::string sameFileRefusal(const std::string& out, const std::vector<NamedInput>& inputs);

}  // namespace kcx
