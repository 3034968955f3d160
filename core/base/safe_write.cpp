// Writing files safely: a unique temporary beside the target, fsync, rename, fsync the
// folder (core/base/safe_write.h, docs/reliability.md "Writing files").
#include "core/base/safe_write.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/base/errors.h"
#include "core/base/safe_open.h"

namespace kcx {

namespace {

std::string folderOf(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    if (slash == 0)
        return "/";
    return path.substr(0, slash);
}

std::string baseOf(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// 16 random hex digits: the kernel's generator, or std::random_device where it is missing.
std::string randomSuffix() {
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != ssize_t(sizeof r)) {
        std::random_device rd;
        r = (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(::getpid()) << 16;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(r));
    return buf;
}

}  // namespace

AtomicWriter::AtomicWriter(std::string path, mode_t mode) : path_(std::move(path)) {
    if (path_.empty() || path_.back() == '/')
        throw InputError::inFile(path_, "not a file name to write");
    struct stat st {};
    bool replaces = false;
    if (::lstat(path_.c_str(), &st) == 0) {
        struct stat to {};
        const bool resolved = ::stat(path_.c_str(), &to) == 0;
        if (!S_ISREG(st.st_mode) && resolved && (S_ISFIFO(to.st_mode) || S_ISCHR(to.st_mode))) {
            // A pipe or a terminal-like device (/dev/null, /dev/stdout on a pipe, a shell's
            // >(...)): nothing to replace, written straight through.
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
            if (fd_ < 0)
                fail("write", errno);
            passThrough_ = true;
            return;
        }
        if (S_ISLNK(st.st_mode))
            throw InputError::inFile(path_, "is a symbolic link; kcx does not write through a link or replace it "
                                            "(give the file it points to, or remove the link)");
        if (!S_ISREG(st.st_mode))
            throw InputError::inFile(path_, "is not a regular file (" + fileKindName(st.st_mode) +
                                                "); kcx writes its outputs as regular files");
        replaces = true;
    } else if (errno != ENOENT) {
        fail("write", errno);
    }
    const std::string folder = folderOf(path_);
    // The temporary is hidden, names its target and ends in a random part: a file or link
    // already at that name makes O_EXCL fail, and another name is tried.
    std::string base = baseOf(path_);
    if (base.size() > 120)
        base.resize(120);
    for (int attempt = 0; attempt < 100; ++attempt) {
        tmp_ = (folder == "/" ? "" : folder) + "/." + base + "." + randomSuffix() + ".kcx-tmp";
        fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd_ >= 0 || errno != EEXIST)
            break;
    }
    if (fd_ < 0) {
        const int err = errno;
        tmp_.clear();
        throw InputError::inFile(path_, "cannot create a temporary file in " + folder + ": " + std::strerror(err));
    }
    // A private file is exactly 0600 whatever the umask; a replaced one keeps its bits.
    if ((mode == kPrivateMode || replaces) &&
        ::fchmod(fd_, mode == kPrivateMode ? kPrivateMode : (st.st_mode & 07777)) != 0) {
        const int err = errno;
        abort();
        fail("keep the permissions of the file it replaces", err);
    }
}

AtomicWriter::~AtomicWriter() {
    if (!committed_)
        abort();
}

void AtomicWriter::fail(const std::string& what, int err) const {
    throw InputError::inFile(path_, "cannot " + what + ": " + std::strerror(err));
}

void AtomicWriter::abort() noexcept {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (!tmp_.empty() && !committed_) {
        ::unlink(tmp_.c_str());
        tmp_.clear();
    }
}

void AtomicWriter::write(const void* data, size_t n) {
    if (fd_ < 0)
        throw InputError::inFile(path_, "cannot write: the file is already finished");
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t got = ::write(fd_, p, std::min<size_t>(n, size_t(1) << 30));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            const int err = got < 0 ? errno : EIO;
            abort();
            fail("write", err);
        }
        p += got;
        n -= size_t(got);
    }
}

void AtomicWriter::commit(bool replace) {
    if (fd_ < 0)
        throw InputError::inFile(path_, "cannot write: the file is already finished");
    if (passThrough_) {
        const int rc = ::close(fd_);
        fd_ = -1;
        committed_ = true;
        if (rc != 0)
            fail("write (closing)", errno);
        return;
    }
    if (::fsync(fd_) != 0) {
        const int err = errno;
        abort();
        fail("write (flushing to disk)", err);
    }
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) {
        const int err = errno;
        abort();
        fail("write (closing)", err);
    }
    // The target may have become a link meanwhile: rename() replaces the name itself, never
    // what a link points to, so the worst case is the link replaced by this file.
    if (!replace) {
        if (::link(tmp_.c_str(), path_.c_str()) != 0) {
            const int err = errno;
            abort();
            if (err == EEXIST)
                throw InputError::inFile(path_, "already exists; it is not replaced");
            fail("create the file", err);
        }
        ::unlink(tmp_.c_str());
    } else if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        abort();
        fail("replace the file", err);
    }
    committed_ = true;
    tmp_.clear();
    const std::string folder = folderOf(path_);
    const int dfd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        const int frc = ::fsync(dfd);
        const int err = errno;
        ::close(dfd);
        if (frc != 0 && err != EINVAL && err != EROFS)
            fail("flush its folder " + folder + " to disk", err);
    }
}

void writeFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
    AtomicWriter w(path, mode);
    w.write(bytes);
    w.commit();
}

std::string sameFileRefusal(const std::string& out, const std::vector<NamedInput>& inputs) {
    struct stat o {};
    if (out.empty() || out == "-" || ::stat(out.c_str(), &o) != 0)
        return {};
    for (const NamedInput& in : inputs) {
        struct stat i {};
        if (in.path.empty() || in.path == "-" || ::stat(in.path.c_str(), &i) != 0)
            continue;
        if (i.st_dev == o.st_dev && i.st_ino == o.st_ino)
            return "refusing to write " + out + ": it is the input " + in.role + " " + in.path;
    }
    return {};
}

}  // namespace kcx
