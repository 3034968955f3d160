#pragma once
#include <string>
namespace kcx {
// Lower-case hex SHA-256 of a file's bytes (libsodium). Throws std::runtime_error.
std::string sha256File(const std::string& path);
std::string sha256Hex(std::string_view bytes);
}  // namespace kcx
