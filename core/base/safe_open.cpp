// Opening input files safely: regular files only, refused before any read
// (core/base/safe_open.h).
#include "core/base/safe_open.h"

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
    std::string bytes;
    bytes.reserve(size_t(st.st_size));
    char buf[65536];
    for (;;) {
        const ssize_t got = ::read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            const int err = errno;
            ::close(fd);
            throw InputError::inFile(path, std::string("cannot read: ") + std::strerror(err));
        }
        if (got == 0)
            break;
        bytes.append(buf, size_t(got));
        if (bytes.size() > maxBytes) {   // grew while being read
            ::close(fd);
            throw InputError::inFile(path, "is more than " + std::to_string(maxBytes) + " bytes, more than a " +
                                               what + " may be");
        }
    }
    ::close(fd);
    return bytes;
}

}  // namespace kcx
