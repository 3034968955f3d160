// Shared by the fuzz targets: bytes as a file (memfd, no disk), and what counts as a
// finding. A loader may reject any input, but only with the errors it documents
// (InputError naming file and place, SignoffError, Cancelled); a crash, a sanitizer report,
// a hang or any other exception is a finding.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kcx::fuzz {

// A path that reads as `data` (an in-memory file, closed when the object goes).
class MemFile {
public:
    MemFile(const uint8_t* data, size_t size) {
        fd_ = memfd_create("kcx-fuzz", 0);
        if (fd_ < 0)
            std::abort();
        for (size_t at = 0; at < size;) {
            const ssize_t n = write(fd_, data + at, size - at);
            if (n <= 0)
                std::abort();
            at += size_t(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemFile() { close(fd_); }
    const std::string& path() const { return path_; }

private:
    int fd_ = -1;
    std::string path_;
};

[[noreturn]] inline void finding(const char* what, const char* message) {
    std::fprintf(stderr, "FINDING: %s: unexpected exception: %s\n", what, message);
    std::abort();
}

}  // namespace kcx::fuzz
