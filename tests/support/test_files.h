// Helpers the reader tests share: little-endian bytes, files written into a temporary
// folder, and the message of the InputError a call throws.
#pragma once

#include <QTemporaryDir>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include <zlib.h>

#include "core/base/errors.h"

namespace kcx::test {

// The bytes of `values` in this (little-endian) machine's order.
template <class T>
std::string le(std::initializer_list<T> values) {
    std::string s;
    for (T v : values)
        s.append(reinterpret_cast<const char*>(&v), sizeof v);
    return s;
}

// What f throws as an InputError; any other exception is named as such, and no exception
// is "(no error)", so that a test comparing messages fails on both.
inline std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("NOT AN InputError: ") + e.what();
    }
    return "(no error)";
}

// Files in a temporary folder that lives as long as this object; names may hold folders.
class TempFiles {
public:
    std::string path(const std::string& name) const { return dir_.path().toStdString() + "/" + name; }
    std::string write(const std::string& name, const std::string& bytes) const {
        std::filesystem::create_directories(std::filesystem::path(path(name)).parent_path());
        std::ofstream(path(name), std::ios::binary) << bytes;
        return path(name);
    }
    // The same, gzip-compressed.
    std::string writeGz(const std::string& name, const std::string& bytes) const {
        std::filesystem::create_directories(std::filesystem::path(path(name)).parent_path());
        gzFile gz = gzopen(path(name).c_str(), "wb");
        gzwrite(gz, bytes.data(), unsigned(bytes.size()));
        gzclose(gz);
        return path(name);
    }

private:
    QTemporaryDir dir_;
};

}  // namespace kcx::test
