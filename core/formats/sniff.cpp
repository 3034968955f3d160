// Telling run formats apart by content (core/formats/sniff.h).
#include "core/formats/sniff.h"

#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>
#include <memory>

#include "core/base/errors.h"
#include "core/base/parallel.h"
#include "core/base/prefault.h"
#include "core/base/safe_open.h"

namespace kcx {

std::string fileHead(const std::string& path, size_t n) {
    const int fd = openRegularFile(path);   // a FIFO or a device is refused, never read
    std::string s(n, '\0');
    size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, s.data() + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += size_t(r);
    }
    ::close(fd);
    s.resize(got);
    return s;
}

namespace {

// The last n bytes of a regular file (fewer when it is shorter).
std::string fileTail(const std::string& path, size_t n) {
    const int fd = openRegularFile(path);
    std::string s;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
        const off_t from = st.st_size > off_t(n) ? st.st_size - off_t(n) : 0;
        s.resize(size_t(st.st_size - from));
        const ssize_t r = ::pread(fd, s.data(), s.size(), from);
        s.resize(r > 0 ? size_t(r) : 0);
    }
    ::close(fd);
    return s;
}

}  // namespace

gzFile openGzipRead(const std::string& path) {
    const int fd = openRegularFile(path);
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        ::close(fd);
        throw InputError::inFile(path, "cannot open a gzip stream");
    }
    return gz;
}

namespace {

[[noreturn]] void tooLarge(const std::string& path, size_t maxBytes, const char* what) {
    throw InputError::inFile(path, std::string("the ") + what + " is larger than " + std::to_string(maxBytes >> 20) +
                                       " MiB; KCX refuses it");
}

uint32_t le32(const std::string& s, size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
        v = (v << 8) | uint8_t(s[at + size_t(i)]);
    return v;
}

uint64_t le64(const std::string& s, size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = (v << 8) | uint8_t(s[at + size_t(i)]);
    return v;
}

std::atomic<uint64_t> parallelInflates{0};

// Deflate makes at most about 1,032 bytes of one (258 bytes a match of at most 2 bits).
constexpr size_t kDeflateMaxRatio = 1032;

using Decompressor = std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)>;
Decompressor newDecompressor() {
    Decompressor d(libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
    if (!d)
        throw std::bad_alloc();
    return d;
}

// Every member of `in` inflated at once, each on a free CPU, when every member says its own
// size in a "KX" subfield of its header (writeGzipMember) and the sizes tile the file: where
// each member's bytes go is then known before any is inflated. False, with `out` and
// `memberStarts` as they were, when they do not, or when any member is not what its header
// and trailer say (the caller then inflates member by member, and its errors say what is wrong).
bool inflateMembersInParallel(const std::string& in, size_t maxBytes, std::string& out,
                              std::vector<size_t>* memberStarts) {
    struct Member {
        size_t at, size, to, isize;
    };
    std::vector<Member> members;
    size_t at = 0, total = 0;
    while (at < in.size()) {
        // ID1 ID2 CM=8 FLG=FEXTRA only, MTIME XFL OS, XLEN=12, 'K' 'X' LEN=8, the member's size
        if (in.size() - at < 24 || uint8_t(in[at]) != 0x1f || uint8_t(in[at + 1]) != 0x8b || in[at + 2] != 8 ||
            in[at + 3] != 4 || le32(in, at + 8) >> 16 != 12 || in[at + 12] != 'K' || in[at + 13] != 'X' ||
            (le32(in, at + 14) & 0xffff) != 8)
            return false;
        const uint64_t size = le64(in, at + 16);
        if (size < 24 + 2 + 8 || size > in.size() - at)   // header, the least deflate, trailer
            return false;
        const size_t isize = le32(in, at + size_t(size) - 4);
        if (isize / kDeflateMaxRatio > size)   // no member makes that much: the trailer lies
            return false;
        members.push_back({at, size_t(size), total, isize});
        total += isize;
        if (total > maxBytes)
            return false;
        at += size_t(size);
    }
    if (members.size() < 2)
        return false;
    std::string made;
    made.reserve(total);
    prefault(made.data(), made.capacity());
    made.resize(total);
    std::atomic<bool> ok{true};
    parallelChunks(members.size(), members.size(), 0, [&](size_t i, size_t, size_t) {
        if (!ok)
            return;
        const Member& m = members[i];
        const Decompressor d = newDecompressor();
        size_t used = 0, wrote = 0;
        if (libdeflate_gzip_decompress_ex(d.get(), in.data() + m.at, m.size, made.data() + m.to, m.isize, &used,
                                          &wrote) != LIBDEFLATE_SUCCESS ||
            used != m.size || wrote != m.isize)
            ok = false;
    });
    if (!ok)
        return false;
    out = std::move(made);
    if (memberStarts)
        for (size_t i = 1; i < members.size(); ++i)
            memberStarts->push_back(members[i].to);
    ++parallelInflates;
    return true;
}

}  // namespace

uint64_t gzipParallelInflates() { return parallelInflates; }

void writeGzipMember(std::string_view text, int level, std::string& out) {
    z_stream z{};
    // windowBits 15 + 16: a gzip wrapper; its header has mtime 0 and no name, so equal text,
    // equal bytes, and an extra field "KX" of 8 bytes: the member's size, filled in after.
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("zlib: deflateInit2 failed");
    unsigned char extra[12] = {'K', 'X', 8, 0};
    gz_header h{};
    h.os = 3;   // Unix, what zlib writes without a header of ours
    h.extra = extra;
    h.extra_len = sizeof extra;
    deflateSetHeader(&z, &h);
    const size_t at = out.size();
    out.resize(at + deflateBound(&z, uLong(text.size())) + 64);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = uInt(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data() + at);
    z.avail_out = uInt(out.size() - at);
    const int rc = deflate(&z, Z_FINISH);
    const size_t n = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END)
        throw std::runtime_error("zlib: deflate did not finish");
    out.resize(at + n);
    if (uint8_t(out[at + 3]) != 4 || out[at + 12] != 'K' || out[at + 13] != 'X')
        throw std::logic_error("zlib: the gzip header is not the one asked for");
    for (int i = 0; i < 8; ++i)
        out[at + 16 + size_t(i)] = char(uint64_t(n) >> (8 * i));
}

// Read whole, then inflated member by member with libdeflate (about three times zlib's gzread
// here: a 1,000-step summary is 27 MB of gzip and 82 MB of bytes). The output is sized from the
// last member's ISIZE (exact for a file of one member), after each member from the ratio so far
// for the members left, and grows when a member needs more, never past maxBytes: a gzip bomb
// is refused, not inflated. As with gzread, bytes after a member that
// do not start another one are ignored.
std::string readPlainOrGzip(const std::string& path, size_t maxBytes, const char* what, std::vector<size_t>* memberStarts) {
    // Deflate never makes data much larger than they are: a file over the limit is refused
    // whether it is compressed or not.
    const std::string in = readRegularFile(path, maxBytes, what);
    if (in.size() < 2 || uint8_t(in[0]) != 0x1f || uint8_t(in[1]) != 0x8b)
        return in;
    std::string out;
    if (inflateMembersInParallel(in, maxBytes, out, memberStarts))
        return out;
    const Decompressor d = newDecompressor();
    const size_t cap = maxBytes == SIZE_MAX ? SIZE_MAX : maxBytes + 1;
    // (an ISIZE no member could reach is not believed: memory is not asked for on its word)
    out.reserve(in.size() >= 18 ? std::min<size_t>({std::max<size_t>(le32(in, in.size() - 4), 1), cap,
                                                    in.size() * kDeflateMaxRatio})
                                : 1);
    prefault(out.data(), out.capacity());
    out.resize(out.capacity());
    size_t at = 0, written = 0;
    while (at + 2 <= in.size() && uint8_t(in[at]) == 0x1f && uint8_t(in[at + 1]) == 0x8b) {
        size_t used = 0, made = 0;
        const libdeflate_result r = libdeflate_gzip_decompress_ex(d.get(), in.data() + at, in.size() - at,
                                                                  out.data() + written, out.size() - written, &used,
                                                                  &made);
        if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
            if (out.size() >= cap)
                tooLarge(path, maxBytes, what);
            out.resize(std::min(cap, std::max<size_t>(out.size() * 2, size_t(1) << 20)));
            continue;   // the same member again, with room
        }
        if (r != LIBDEFLATE_SUCCESS)
            throw InputError::inFile(path, "corrupt gzip data (the member that starts at byte " + std::to_string(at) +
                                               " is cut short or damaged)");
        if (memberStarts && written)
            memberStarts->push_back(written);
        at += used;
        written += made;
        if (written > maxBytes)
            tooLarge(path, maxBytes, what);
        // More members (writeSummary writes one every 8 MiB): room for the rest at the ratio
        // so far, grown once now instead of doubling (each time a copy, and fresh memory).
        if (at + 2 <= in.size() && at > 0) {
            const double rest = double(in.size() - at) * (double(written) / double(at)) * 1.0625;
            const size_t want = size_t(std::min(double(cap), double(written) + rest + double(1 << 20)));
            if (want > out.size())
                out.resize(want);
        }
    }
    out.resize(written);
    return out;
}

namespace {

bool has(const std::vector<std::string>& keys, const char* k) {
    return std::find(keys.begin(), keys.end(), k) != keys.end();
}

// Collects the top-level keys of JSON objects fed to it in pieces.
class KeyScan {
public:
    // Returns true when the first record (not a kcx_header line) has ended, or the text is
    // not a JSON object.
    bool feed(const char* p, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            const char c = p[i];
            if (inString_) {
                if (escape_)
                    escape_ = false;
                else if (c == '\\')
                    escape_ = true;
                else if (c == '"') {
                    inString_ = false;
                    if (capturing_) {
                        keys_.push_back(key_);
                        capturing_ = false;
                    }
                    continue;
                }
                if (capturing_ && key_.size() < 64)
                    key_ += c;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
                continue;
            if (depth_ == 0) {
                if (c != '{') {
                    bad_ = true;
                    return true;
                }
                depth_ = 1;
                expectKey_ = true;
                continue;
            }
            switch (c) {
            case '"':
                inString_ = true;
                if (depth_ == 1 && expectKey_) {
                    capturing_ = true;
                    expectKey_ = false;
                    key_.clear();
                }
                break;
            case '{':
            case '[': ++depth_; break;
            case '}':
            case ']':
                if (--depth_ == 0) {
                    if (keys_.size() == 1 && keys_[0] == "kcx_header") {
                        keys_.clear();   // the header line: the record is the next one
                        break;
                    }
                    complete_ = true;
                    return true;
                }
                break;
            case ',':
                if (depth_ == 1)
                    expectKey_ = true;
                break;
            default: break;
            }
        }
        return false;
    }
    const std::vector<std::string>& keys() const { return keys_; }
    bool complete() const { return complete_ && !bad_; }

private:
    int depth_ = 0;
    bool inString_ = false, escape_ = false, expectKey_ = false, capturing_ = false, complete_ = false, bad_ = false;
    std::string key_;
    std::vector<std::string> keys_;
};

}  // namespace

std::vector<std::string> firstRecordKeys(const std::string& path, size_t maxBytes, bool& complete) {
    complete = false;
    gzFile gz = openGzipRead(path);
    KeyScan scan;
    std::vector<char> buf(size_t(1) << 16);
    size_t total = 0;
    bool done = false;
    // Stops at the record's end, or as soon as its keys decide (a SPEC 1.1 record with full
    // logits can be very long; its first keys tell).
    const auto decided = [](const std::vector<std::string>& k) {
        return (has(k, "logp_train") && has(k, "logp_inf")) || has(k, "choices") || has(k, "kcx_summary") || has(k, "meta_info") ||
               (has(k, "token_ids") &&
                (has(k, "loss_mask") || has(k, "inference_logprobs") || has(k, "trainer_logprobs") ||
                 has(k, "token_loss_mask") || has(k, "generation_logprobs") || has(k, "prev_logprobs")));
    };
    while (!done && total < maxBytes && !decided(scan.keys())) {
        const int got = gzread(gz, buf.data(), unsigned(buf.size()));
        if (got <= 0)
            break;   // end, or broken gzip: the loader reports that with its place
        total += size_t(got);
        done = scan.feed(buf.data(), size_t(got));
    }
    gzclose(gz);
    complete = scan.complete();
    return scan.keys();
}

Sniffed classifyRecordKeys(const std::vector<std::string>& keys, bool complete) {
    if (!keys.empty() && keys.front() == "kcx_summary")
        return {RunKind::Summary, {}};
    if (has(keys, "token_ids") &&
        (has(keys, "loss_mask") || has(keys, "inference_logprobs") || has(keys, "trainer_logprobs") ||
         has(keys, "token_loss_mask") || has(keys, "generation_logprobs") || has(keys, "prev_logprobs")))
        return {RunKind::TrainerExport, {}};
    if (has(keys, "choices"))
        return {RunKind::OneSide, "OpenAI chat or completions responses"};
    if (has(keys, "response") && has(keys, "custom_id"))
        return {RunKind::OneSide, "OpenAI batch output"};
    if (has(keys, "meta_info"))
        return {RunKind::OneSide, "SGLang /generate output"};
    if (has(keys, "details") && has(keys, "generated_text"))
        return {RunKind::OneSide, "TGI /generate output"};
    if (has(keys, "output") && !has(keys, "logp_train") && !has(keys, "logp_inf"))
        return {RunKind::OneSide, "OpenAI Responses API output"};
    // Plain one-sided arrays go to the SPEC 1.1 loader, which names the missing key and its
    // place; `detail` is the hint added to that error. What a record lacks counts only when
    // the whole record was seen.
    const bool train = has(keys, "logp_train"), inf = has(keys, "logp_inf");
    if (complete && has(keys, "logp") && !train && !inf)
        return {RunKind::SpecJsonl, "plain \"logp\" arrays"};
    if (complete && train != inf)
        return {RunKind::SpecJsonl, std::string("plain \"") + (train ? "logp_train" : "logp_inf") + "\" arrays only"};
    return {RunKind::SpecJsonl, {}};
}

std::string foreignFormat(std::string_view head, std::string_view tail) {
    const auto u = [&](size_t i) { return (unsigned char)head[i]; };
    // torch.save (PyTorch 1.6 and later): a ZIP whose first member is ARCHIVE/data.pkl.
    if (head.size() >= 30 && head.starts_with("PK\3\4")) {
        const size_t nameLength = u(26) | size_t(u(27)) << 8;
        if (30 + nameLength <= head.size()) {
            const std::string_view name = head.substr(30, nameLength);
            if (name == "data.pkl" || name.ends_with("/data.pkl"))
                return "a PyTorch file (torch.save: a ZIP archive holding data.pkl)";
        }
        return {};
    }
    // Pickle protocols 2 to 5 start with PROTO (0x80) and the protocol number; torch.save's
    // legacy format and verl's DataProto.save_to_disk write these.
    // (No pickle opcode is 0: a safetensors header length of 0x2_80 starts 80 02 00.)
    if (head.size() >= 3 && u(0) == 0x80 && u(1) >= 2 && u(1) <= 5 && u(2) != 0)
        return "a Python pickle (torch.save's legacy format, verl's DataProto.save_to_disk, pickle.dump)";
    if (head.starts_with("PAR1") && tail.size() >= 4 && tail.ends_with("PAR1"))
        return "a Parquet file";
    if (head.starts_with("ARROW1"))
        return "an Arrow IPC file (Feather v2)";
    if (head.starts_with("FEA1"))
        return "a Feather v1 file";
    return {};
}

std::string foreignFormatMessage(const std::string& what) {
    return "is " + what + ", which KCX does not read; write it as KCX JSON Lines, one record per sequence "
           "{\"id\", \"tokens\", \"logp_train\", \"logp_inf\", \"step\"}, with the few lines of Python in "
           "docs/formats.md (\"Converting .pt, pickle, Parquet and Arrow files\")";
}

Sniffed sniffRun(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        bool npy = false, jsonl = false;
        for (const auto& e : fs::directory_iterator(path, ec)) {
            const std::string name = e.path().filename().string();
            if (name == "offsets.npy")
                npy = true;
            else if (!name.empty() && name[0] != '.' && (name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")))
                jsonl = true;
        }
        // A trainer's tree (prime-rl: token_exports/step_N/rank_R.jsonl): exports below it.
        if (!npy && !jsonl) {
            fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
            for (; !ec && it != end && !jsonl; it.increment(ec)) {
                const std::string name = it->path().filename().string();
                if (!name.empty() && name[0] == '.') {
                    it.disable_recursion_pending();
                    continue;
                }
                if (it.depth() >= 16)
                    it.disable_recursion_pending();
                jsonl = name.ends_with(".jsonl") || name.ends_with(".jsonl.gz");
            }
        }
        if (npy)
            return {RunKind::NpyDirectory, {}};
        if (jsonl)
            return {RunKind::TrainerDirectory, {}};
        return {RunKind::UnknownDirectory, {}};
    }
    const std::string h = fileHead(path, 512);
    const auto u = [&](size_t i) { return (unsigned char)h[i]; };
    if (h.empty())
        return {RunKind::Empty, {}};
    if (std::string what = foreignFormat(h, h.starts_with("PAR1") ? fileTail(path, 4) : std::string());
        !what.empty())
        return {RunKind::Foreign, std::move(what)};
    if (h.size() >= 6 && h.compare(0, 6, "\x93NUMPY") == 0)
        return {RunKind::Npy, {}};
    if (h.size() >= 4 && h[0] == 'P' && h[1] == 'K' && ((u(2) == 3 && u(3) == 4) || (u(2) == 5 && u(3) == 6)))
        return {RunKind::Npz, {}};
    const bool gzip = h.size() >= 2 && u(0) == 0x1f && u(1) == 0x8b;
    // safetensors: 8-byte little-endian header length, then a JSON object.
    if (!gzip && h.size() >= 9 && h[8] == '{' && h[0] != '{')
        return {RunKind::Safetensors, {}};
    const size_t first = h.find_first_not_of(" \t\r\n");
    // Neither starts a SPEC 1.1 file: a saved chat completion stream, an array of responses.
    if (first != std::string::npos && (h.compare(first, 5, "data:") == 0 || h.compare(first, 6, "event:") == 0))
        return {RunKind::OneSide, "a server-sent-event stream of chat completion chunks"};
    if (first != std::string::npos && h[first] == '[') {
        // An array is one side when its first element is a response; anything else is left
        // to the SPEC 1.1 reader, which says a record must be an object.
        const std::string text = fileHead(path, size_t(1) << 16);
        const size_t element = text.find_first_not_of(" \t\r\n", first + 1);
        KeyScan scan;
        if (element != std::string::npos && text[element] == '{')
            scan.feed(text.data() + element, text.size() - element);
        if (classifyRecordKeys(scan.keys(), scan.complete()).kind == RunKind::OneSide)
            return {RunKind::OneSide, "a JSON array of responses, as SGLang's batch /generate returns"};
        return {RunKind::SpecJsonl, {}};
    }
    if (h.starts_with(kSummaryBinaryMagic))
        return {RunKind::Summary, {}};
    if (gzip) {
        gzFile gz = openGzipRead(path);
        char head[kSummaryBinaryMagic.size()];
        const int got = gzread(gz, head, unsigned(sizeof head));
        gzclose(gz);
        if (got == int(sizeof head) && std::string_view(head, sizeof head) == kSummaryBinaryMagic)
            return {RunKind::Summary, {}};
    }
    if (gzip || (first != std::string::npos && h[first] == '{')) {
        bool complete = false;
        const auto keys = firstRecordKeys(path, size_t(64) << 20, complete);
        return classifyRecordKeys(keys, complete);
    }
    if (path.ends_with(".safetensors"))
        return {RunKind::Safetensors, {}};
    if (path.ends_with(".npz"))
        return {RunKind::Npz, {}};
    return {RunKind::SpecJsonl, {}};
}

}  // namespace kcx
