// ZIP archives read in place (core/formats/zip_archive.h).
#include "core/formats/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>

namespace kcx::zip {

namespace {
// Deflate's best ratio is 1032:1; a member claiming more is corrupt or hostile.
constexpr uint64_t kMaxDeflateRatio = 1032;
}  // namespace

std::vector<Member> Archive::members() {
    if (n_ < 4 || std::memcmp(d_, "PK", 2) != 0)
        fail(0, "not a ZIP archive (an .npz starts with \"PK\")");
    // The end of central directory record: 22 bytes plus a comment of up to 65535.
    uint64_t eocd = std::numeric_limits<uint64_t>::max();
    if (n_ >= 22)
        for (uint64_t at = n_ - 22;; --at) {
            if (le32(d_ + at) == 0x06054b50 && at + 22 + le16(d_ + at + 20) == n_) {
                eocd = at;
                break;
            }
            if (at == 0 || n_ - at > 22 + 65535)
                break;
        }
    if (eocd == std::numeric_limits<uint64_t>::max())
        fail(n_, "no end-of-central-directory record: the archive is truncated or not a ZIP file (" +
                     std::to_string(n_) + " bytes)");
    const unsigned char* e = d_ + eocd;
    if (le16(e + 4) != 0 || le16(e + 6) != 0)
        fail(eocd, "multi-disk (split) archives are not supported");
    uint64_t count = le16(e + 10), cdSize = le32(e + 12), cdOffset = le32(e + 16);
    if (count == 0xFFFF || cdSize == 0xFFFFFFFF || cdOffset == 0xFFFFFFFF) {
        // ZIP64: a locator right before the record points at the ZIP64 end record.
        if (eocd < 20 || le32(d_ + eocd - 20) != 0x07064b50)
            fail(eocd, "ZIP64 fields without a ZIP64 end-of-central-directory locator");
        const uint64_t z = le64(d_ + eocd - 20 + 8);
        if (z > n_ || n_ - z < 56 || le32(d_ + z) != 0x06064b50)
            fail(eocd - 20, "the ZIP64 end-of-central-directory record is missing or out of range");
        count = le64(d_ + z + 32);
        cdSize = le64(d_ + z + 40);
        cdOffset = le64(d_ + z + 48);
    }
    if (cdOffset > n_ || cdSize > n_ - cdOffset)
        fail(eocd, "the central directory [" + std::to_string(cdOffset) + ", +" + std::to_string(cdSize) +
                       ") runs past the end of the file (" + std::to_string(n_) + " bytes): truncated?");
    if (count > cdSize / 46)
        fail(eocd, std::to_string(count) + " members cannot fit in a central directory of " +
                       std::to_string(cdSize) + " bytes");
    std::vector<Member> out;
    std::set<std::string> seen;
    uint64_t at = cdOffset;
    const uint64_t cdEnd = cdOffset + cdSize;
    for (uint64_t i = 0; i < count; ++i) {
        if (cdEnd - at < 46 || le32(d_ + at) != 0x02014b50)
            fail(at, "central directory entry " + std::to_string(i) + " is damaged (no signature PK\\1\\2)");
        const unsigned char* c = d_ + at;
        Member m;
        m.flags = le16(c + 8);
        m.method = le16(c + 10);
        m.crc = le32(c + 16);
        m.compressedSize = le32(c + 20);
        m.size = le32(c + 24);
        const uint64_t nameLen = le16(c + 28), extraLen = le16(c + 30), commentLen = le16(c + 32);
        m.localOffset = le32(c + 42);
        if (cdEnd - at - 46 < nameLen + extraLen + commentLen)
            fail(at, "central directory entry " + std::to_string(i) + " runs past the directory");
        m.name.assign(reinterpret_cast<const char*>(c + 46), size_t(nameLen));
        zip64Extra(c + 46 + nameLen, extraLen, m, at);
        if (!seen.insert(m.name).second)
            fail(at, "member '" + m.name + "' appears twice");
        at += 46 + nameLen + extraLen + commentLen;
        out.push_back(std::move(m));
    }
    return out;
}

// Checks the member's local header and where its data lies.
void Archive::locate(Member& m) const {
    const std::string who = "member '" + m.name + "': ";
    if (m.localOffset > n_ || n_ - m.localOffset < 30 || le32(d_ + m.localOffset) != 0x04034b50)
        fail(m.localOffset, who + "no local header at byte " + std::to_string(m.localOffset) + " (truncated or damaged)");
    const unsigned char* l = d_ + m.localOffset;
    const uint64_t nameLen = le16(l + 26), extraLen = le16(l + 28);
    if (n_ - m.localOffset - 30 < nameLen + extraLen)
        fail(m.localOffset, who + "the local header runs past the end of the file: truncated");
    if (std::string_view(reinterpret_cast<const char*>(l + 30), size_t(nameLen)) != m.name)
        fail(m.localOffset + 30, who + "the local header names a different file");
    m.dataOffset = m.localOffset + 30 + nameLen + extraLen;
    if (m.flags & 1)
        fail(m.localOffset, who + "is encrypted");
    if (m.method != 0 && m.method != 8)
        fail(m.localOffset, who + "compression method " + std::to_string(m.method) +
                                " is not supported (np.savez stores, np.savez_compressed deflates)");
    if (m.dataOffset > n_ || m.compressedSize > n_ - m.dataOffset)
        fail(m.dataOffset, who + "its " + std::to_string(m.compressedSize) + " bytes of data run past the end of " +
                               "the file (" + std::to_string(n_) + " bytes): the archive is truncated");
    if (m.method == 0 && m.size != m.compressedSize)
        fail(m.localOffset, who + "a stored member whose sizes differ (" + std::to_string(m.size) + " and " +
                                std::to_string(m.compressedSize) + ")");
    if (m.method == 8 && m.size / kMaxDeflateRatio > m.compressedSize + 1)
        fail(m.localOffset, who + "claims " + std::to_string(m.size) + " bytes from " +
                                std::to_string(m.compressedSize) + " compressed, more than deflate can produce");
}

void Archive::zip64Extra(const unsigned char* x, uint64_t len, Member& m, uint64_t entryAt) const {
    const bool needSize = m.size == 0xFFFFFFFF, needComp = m.compressedSize == 0xFFFFFFFF,
               needOff = m.localOffset == 0xFFFFFFFF;
    if (!needSize && !needComp && !needOff)
        return;
    for (uint64_t p = 0; p + 4 <= len;) {
        const uint16_t id = le16(x + p), sz = le16(x + p + 2);
        if (p + 4 + sz > len)
            break;
        if (id == 0x0001) {
            const unsigned char* f = x + p + 4;
            uint64_t left = sz;
            auto take = [&](uint64_t& v) {
                if (left < 8)
                    fail(entryAt, "member '" + m.name + "': the ZIP64 extra field is too short");
                v = le64(f);
                f += 8;
                left -= 8;
            };
            if (needSize)
                take(m.size);
            if (needComp)
                take(m.compressedSize);
            if (needOff)
                take(m.localOffset);
            return;
        }
        p += 4 + sz;
    }
    fail(entryAt, "member '" + m.name + "': 64-bit sizes without a ZIP64 extra field");
}

std::vector<unsigned char> inflateMember(const Archive& zip, const Member& m, const unsigned char* data,
                                         const std::function<void(double)>& tick) {
    struct Stream {
        z_stream z{};
        bool open = false;
        ~Stream() {
            if (open)
                inflateEnd(&z);
        }
    } s;
    z_stream& z = s.z;
    const std::string who = "member '" + m.name + "': ";
    if (inflateInit2(&z, -15) != Z_OK)
        zip.fail(m.dataOffset, who + "cannot start inflating");
    s.open = true;
    std::vector<unsigned char> out(size_t(m.size));
    constexpr uint64_t kChunk = uint64_t(1) << 26;
    uint64_t inDone = 0, outDone = 0;
    for (;;) {
        if (z.avail_in == 0 && inDone < m.compressedSize) {
            z.next_in = const_cast<Bytef*>(data + inDone);
            z.avail_in = uInt(std::min(kChunk, m.compressedSize - inDone));
            inDone += z.avail_in;
        }
        if (z.avail_out == 0 && outDone < m.size) {
            z.next_out = out.data() + outDone;
            z.avail_out = uInt(std::min(kChunk, m.size - outDone));
            outDone += z.avail_out;
        }
        const int rc = inflate(&z, Z_NO_FLUSH);
        const uint64_t produced = z.total_out;
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            zip.fail(m.dataOffset, who + "corrupt deflate data after " + std::to_string(produced) +
                                       " inflated bytes: " + (z.msg ? z.msg : "error " + std::to_string(rc)));
        if (rc == Z_BUF_ERROR) {   // no progress possible
            if (z.avail_out == 0 && outDone >= m.size)
                zip.fail(m.dataOffset, who + "the deflate stream does not end within the " + std::to_string(m.size) +
                                           " bytes the archive declares: damaged");
            zip.fail(m.dataOffset, who + "the deflate stream ends early, after " + std::to_string(produced) + " of " +
                                       std::to_string(m.size) + " bytes: truncated or damaged");
        }
        if (tick)
            tick(m.size ? double(produced) / double(m.size) : 1.0);
    }
    if (z.total_out != m.size)
        zip.fail(m.dataOffset, who + "inflates to " + std::to_string(z.total_out) + " bytes but the archive declares " +
                                   std::to_string(m.size));
    return out;
}

uint32_t crc32Of(const unsigned char* p, uint64_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        const uInt step = uInt(std::min<uint64_t>(n, uint64_t(1) << 30));
        c = crc32(c, p, step);
        p += step;
        n -= step;
    }
    return uint32_t(c);
}

}  // namespace kcx::zip
