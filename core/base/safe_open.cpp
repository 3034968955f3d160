// Opening input files safely: regular files only, refused before any read
// (core/base/safe_open.h).
#include "core/base/safe_open.h"
#include "core/base/prefault.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/errors.h"

namespace kcx {

std::string fileKindName(mode_t mode) {
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a file";
}

namespace {

[[noreturn]] void notRegular(const std::string& path, mode_t mode) {
    if (S_ISDIR(mode))
        throw InputError::inFile(path, "is a directory, not a file");
    throw InputError::inFile(path, "is not a regular file (" + fileKindName(mode) +
                                       "); kcx reads runs, contracts, records and keys from regular files only");
}

}  // namespace

void requireRegularFile(const std::string& path, bool allowDirectory) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return;
    if (S_ISREG(st.st_mode) || (allowDirectory && S_ISDIR(st.st_mode)))
        return;
    notRegular(path, st.st_mode);
}

int openRegularFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw InputError::inFile(path, std::string("cannot open: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        notRegular(path, st.st_mode);
    // O_NONBLOCK: should the name have become a FIFO since stat(), open() does not wait.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        throw InputError::inFile(path, std::string("cannot open: ") + std::strerror(errno));
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const mode_t mode = st.st_mode;
        ::close(fd);
        notRegular(path, mode);
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

std::string readRegularFile(const std::string& path, uint64_t maxBytes, const std::string& what) {
    const int fd = openRegularFile(path);
    struct stat st {};
    ::fstat(fd, &st);
    if (uint64_t(st.st_size) > maxBytes) {
        ::close(fd);
        throw InputError::inFile(path, "is " + std::to_string(st.st_size) + " bytes, more than a " + what +
                                           " may be (" + std::to_string(maxBytes) + " bytes)");
    }
    // Straight into the result, no bounce buffer; a large file into huge pages (prefault.h:
    // a fresh small page costs 15 us on this project's virtual machines).
    std::string bytes;
    bytes.reserve(size_t(st.st_size) + 1);
    prefault(bytes.data(), bytes.capacity());
    bytes.resize(bytes.capacity());   // at least one byte more than the size: growth shows
    size_t got = 0;
    for (;;) {
        if (got == bytes.size()) {
            if (got > maxBytes) {   // grew while being read
                ::close(fd);
                throw InputError::inFile(path, "is more than " + std::to_string(maxBytes) + " bytes, more than a " +
                                                   what + " may be");
            }
            bytes.resize(bytes.size() * 2);
        }
        const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw InputError::inFile(path, std::string("cannot read: ") + std::strerror(err));
        }
        if (n == 0)
            break;
        got += size_t(n);
    }
    bytes.resize(got);
    if (got > maxBytes) {   // grew while being read
        ::close(fd);
        throw InputError::inFile(path, "is more than " + std::to_string(maxBytes) + " bytes, more than a " + what +
                                           " may be");
    }
    ::close(fd);
    return bytes;
}

}  // namespace kcx
