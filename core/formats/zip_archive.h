// Reading ZIP archives in place (the container of NumPy's .npz): the central directory,
// ZIP64 sizes and offsets, local headers, stored and deflated members. Every offset and
// size is checked against the file before it is used; errors are InputError naming the
// file and byte. Used by core/formats/import_numpy.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/base/errors.h"

namespace kcx::zip {

inline uint16_t le16(const unsigned char* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t le32(const unsigned char* p) {
    return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
inline uint64_t le64(const unsigned char* p) { return uint64_t(le32(p)) | (uint64_t(le32(p + 4)) << 32); }

struct Member {
    std::string name;
    uint16_t method = 0, flags = 0;
    uint32_t crc = 0;
    uint64_t compressedSize = 0, size = 0, localOffset = 0, dataOffset = 0;
};

// An archive held in memory (mapped): `data` must outlive it.
class Archive {
public:
    Archive(std::string path, const unsigned char* data, uint64_t size) : path_(std::move(path)), d_(data), n_(size) {}

    // The central directory's entries (names unique), ZIP64 fields resolved.
    std::vector<Member> members();
    // Checks the member's local header and where its data lies; sets m.dataOffset. Only
    // stored (0) and deflated (8) members pass, and no member may claim more than deflate
    // can produce from its compressed size (a zip bomb).
    void locate(Member& m) const;
    [[noreturn]] void fail(uint64_t at, const std::string& msg) const { throw InputError::atByte(path_, at, msg); }

private:
    void zip64Extra(const unsigned char* x, uint64_t len, Member& m, uint64_t entryAt) const;

    std::string path_;
    const unsigned char* d_;
    uint64_t n_;
};

// Inflates a located deflated member into exactly m.size bytes (the caller checks the
// CRC); tick(fraction) reports progress.
std::vector<unsigned char> inflateMember(const Archive& zip, const Member& m, const unsigned char* data,
                                         const std::function<void(double)>& tick);
// The CRC-32 of n bytes (zlib's), in steps that fit zlib's 32-bit lengths.
uint32_t crc32Of(const unsigned char* p, uint64_t n);

}  // namespace kcx::zip
