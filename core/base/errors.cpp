#include "core/base/errors.h"

namespace kcx {

static std::string compose(const std::string& file, const std::string& place, const std::string& msg) {
    std::string s = file.empty() ? std::string("<input>") : file;
    if (!place.empty()) {
        s += place[0] == 'b' ? ": " : ":";
        s += place;
    }
    s += ": ";
    s += msg;
    return s;
}

InputError::InputError(const std::string& file, const std::string& place, const std::string& message)
    : std::runtime_error(compose(file, place, message)), file_(file), place_(place), message_(message) {}

InputError InputError::atText(const std::string& file, int64_t line, int64_t column,
                              const std::string& message) {
    std::string place = std::to_string(line);
    if (column > 0)
        place.append(1, ':').append(std::to_string(column));
    return InputError(file, place, message);
}

InputError InputError::atByte(const std::string& file, uint64_t offset, const std::string& message) {
    return InputError(file, "byte " + std::to_string(offset), message);
}

InputError InputError::inFile(const std::string& file, const std::string& message) {
    return InputError(file, "", message);
}

}  // namespace kcx
