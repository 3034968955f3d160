// Errors that name the file and the place (SPEC 1.4).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kcx {

// A rejected input. what() reads "FILE:LINE:COL: message" for text,
// "FILE: byte N: message" for binary input, with the sequence id where known.
class InputError : public std::runtime_error {
public:
    InputError(const std::string& file, const std::string& place, const std::string& message);
    static InputError atText(const std::string& file, int64_t line, int64_t column,
                             const std::string& message);
    static InputError atByte(const std::string& file, uint64_t offset, const std::string& message);
    static InputError inFile(const std::string& file, const std::string& message);

    const std::string& file() const { return file_; }
    const std::string& place() const { return place_; }
    const std::string& message() const { return message_; }

private:
    std::string file_, place_, message_;
};

}  // namespace kcx
