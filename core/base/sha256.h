#pragma once
#include <string>
namespace kcx {
// Lower-case hex SHA-256 of a file's bytes (OpenSSL's libcrypto: SHA-NI where present). For a directory (a run kept as
// NumPy arrays or trainer exports): the SHA-256 of "NAME\0SHA256\n" for each regular file
// in it, names in byte order. Throws std::runtime_error.
std::string sha256File(const std::string& path);
std::string sha256Hex(std::string_view bytes);
}  // namespace kcx
