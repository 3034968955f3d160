// Opening input files safely (docs/reliability.md, "Opening files").
//
// Runs, contracts, sign-off records, keys and trusted-keys files are read from regular
// files only. A FIFO, a device or a socket is refused by name before anything is read from
// it (opening a FIFO for reading waits for a writer, /dev/zero never ends): the path is
// checked with stat(), opened with O_NONBLOCK (which never waits) and checked again with
// fstat() on what was opened. Every refusal is an InputError naming the file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace kcx {

// "a FIFO", "a character device", "a block device", "a socket", "a directory", ...
std::string fileKindName(mode_t mode);

// Opens `path` for reading (blocking reads, close-on-exec) and returns the descriptor;
// the caller closes it. Refuses anything but a regular file.
int openRegularFile(const std::string& path);

// Refuses `path` when it exists and is neither a regular file nor (when allowed) a
// directory. A missing path passes: the reader that opens it says so.
void requireRegularFile(const std::string& path, bool allowDirectory = false);

// The whole of a regular file of at most `maxBytes` bytes (refused with its size and the
// cap, `what` naming it: "sign-off record", "key", ...).
std::string readRegularFile(const std::string& path, uint64_t maxBytes, const std::string& what);

}  // namespace kcx
