// NumPy runs: .npy parsing, .npz archives (ZIP reading is core/formats/zip_archive.*), and the
// SPEC 1.2 tensors they hold (core/formats/import_numpy.h). The run's rules are core/formats/tensor_run.cpp's, shared with safetensors.
//
// Resource safety: every length read from the file (ZIP records, .npy header length, shape)
// is checked against what the file or member really holds before anything is allocated or
// read; a deflated member may not claim more than deflate can produce from its compressed
// size, and inflates into exactly the size the archive declares (CRC-32 checked).
#include "core/formats/import_numpy.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "core/base/json_depth.h"
#include "core/formats/json_scan.h"
#include "core/formats/tensor_run.h"
#include "core/formats/zip_archive.h"

namespace kcx {

using nlohmann::json;
using tensors::DT;
using tensors::DType;
using tensors::Tensor;

namespace {

constexpr uint64_t kMaxNpyHeader = uint64_t(1) << 20;

// The tensors and metadata entries of SPEC 1.2; other members are ignored.
const std::set<std::string>& tensorNames() {
    static const std::set<std::string> names = {
        "offsets",      "tokens",         "logp_train",     "logp_inf",     "topk_train_ids", "topk_inf_ids",
        "topk_train_logp", "topk_inf_logp", "logits_rows",  "logits_train", "logits_inf",     "reward_train",
        "reward_inf",   "slice_codes",    "text_offsets",   "text_bytes"};
    return names;
}
const std::set<std::string>& metadataNames() {
    static const std::set<std::string> names = {"ids", "slice_keys", "slice_values", "header", "runtime"};
    return names;
}

using zip::le16;
using zip::le32;
using zip::le64;

// ---- the .npy header's Python dict ------------------------------------------------------------
class DictParser {
public:
    DictParser(std::string_view s, uint64_t base, const std::function<InputError(uint64_t, const std::string&)>& fail)
        : s_(s), base_(base), fail_(fail) {}

    void parse(NpyHeader& h) {
        bool haveDescr = false, haveOrder = false, haveShape = false;
        ws();
        expect('{');
        for (;;) {
            ws();
            if (peek() == '}') {
                ++p_;
                break;
            }
            const size_t keyAt = p_;
            const std::string key = pyString("a quoted key");
            ws();
            expect(':');
            ws();
            if (key == "descr") {
                if (peek() == '[')
                    fail("descr is a list: structured (record) dtypes are not supported; save plain arrays");
                h.descr = pyString("the dtype string");
                haveDescr = true;
            } else if (key == "fortran_order") {
                if (word("True"))
                    h.fortranOrder = true;
                else if (word("False"))
                    h.fortranOrder = false;
                else
                    fail("fortran_order must be True or False");
                haveOrder = true;
            } else if (key == "shape") {
                shape(h.shape);
                haveShape = true;
            } else {
                p_ = keyAt;
                fail("unexpected key '" + key + "' (a .npy header holds descr, fortran_order and shape)");
            }
            ws();
            if (peek() == ',') {
                ++p_;
                continue;
            }
            ws();
            if (peek() == '}') {
                ++p_;
                break;
            }
            fail("expected ',' or '}' in the header dict");
        }
        if (!haveDescr || !haveOrder || !haveShape)
            fail(std::string("the header dict lacks '") + (!haveDescr ? "descr" : !haveOrder ? "fortran_order" : "shape") +
                 "'");
    }

private:
    [[noreturn]] void fail(const std::string& msg) const { throw fail_(base_ + p_, msg); }
    char peek() const { return p_ < s_.size() ? s_[p_] : '\0'; }
    void ws() {
        while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r'))
            ++p_;
    }
    void expect(char c) {
        if (peek() != c)
            fail(std::string("expected '") + c + "' in the header dict");
        ++p_;
    }
    bool word(std::string_view w) {
        if (s_.substr(p_, w.size()) != w)
            return false;
        p_ += w.size();
        return true;
    }
    std::string pyString(const char* what) {
        const char q = peek();
        if (q != '\'' && q != '"')
            fail(std::string("expected ") + what);
        const size_t start = ++p_;
        while (p_ < s_.size() && s_[p_] != q) {
            if (s_[p_] == '\\')
                fail("escapes are not expected in a .npy header string");
            ++p_;
        }
        if (p_ >= s_.size())
            fail("unterminated string in the header dict");
        return std::string(s_.substr(start, p_++ - start));
    }
    void shape(std::vector<uint64_t>& out) {
        expect('(');
        for (;;) {
            ws();
            if (peek() == ')') {
                ++p_;
                return;
            }
            if (peek() < '0' || peek() > '9')
                fail("shape must be a tuple of non-negative integers");
            uint64_t v = 0;
            while (peek() >= '0' && peek() <= '9') {
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, uint64_t(peek() - '0'), &v))
                    fail("a shape dimension does not fit in 64 bits");
                ++p_;
            }
            if (peek() == 'L')   // Python 2 longs in old files
                ++p_;
            out.push_back(v);
            ws();
            if (peek() == ',')
                ++p_;
            else if (peek() != ')')
                fail("expected ',' or ')' in shape");
        }
    }

    std::string_view s_;
    size_t p_ = 0;
    uint64_t base_;
    const std::function<InputError(uint64_t, const std::string&)>& fail_;
};

// The element size a descr announces ("<f4" -> 4, "<U7" -> 28); 0 when it cannot tell.
uint64_t descrItemSize(const std::string& d) {
    if (d.size() < 3)
        return 0;
    uint64_t n = 0;
    for (size_t i = 2; i < d.size(); ++i) {
        if (d[i] < '0' || d[i] > '9' || __builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, uint64_t(d[i] - '0'), &n))
            return 0;
    }
    if (d[1] == 'U' && __builtin_mul_overflow(n, 4, &n))
        return 0;
    return n;
}

// ---- dtypes ---------------------------------------------------------------------------------
enum class Category { Numeric, String, Unsupported };
struct NpyType {
    Category cat = Category::Unsupported;
    const DType* dtype = nullptr;   // Numeric
    bool utf32 = false;             // String: <U (else |S)
    std::string why;                // Unsupported
};

NpyType classify(const std::string& d, bool bf16) {
    NpyType t;
    const std::string supported =
        " (KCX reads <f2 <f4 <f8 <i4 <i8 |u1 |b1, and bfloat16 stored as <u2 or <V2 with --bf16)";
    if (d.size() < 3) {
        t.why = "unsupported dtype '" + d + "'" + supported;
        return t;
    }
    const char order = d[0];
    const std::string body = d.substr(1);
    if (order == '>' || order == '!') {
        if (body != "u1" && body != "b1" && body != "i1") {
            t.why = "dtype '" + d + "' is big-endian; save little-endian (arr.astype('<" + body + "'))";
            return t;
        }
    } else if (order != '<' && order != '|' && order != '=') {
        t.why = "unsupported dtype '" + d + "'" + supported;
        return t;
    }
    static const std::map<std::string, DT> numeric = {
        {"f2", DT::F16}, {"f4", DT::F32}, {"f8", DT::F64}, {"i1", DT::I8}, {"i2", DT::I16},
        {"i4", DT::I32}, {"i8", DT::I64}, {"u1", DT::U8},  {"b1", DT::Bool}};
    if (const auto it = numeric.find(body); it != numeric.end()) {
        t.cat = Category::Numeric;
        t.dtype = &tensors::dtypeOf(it->second);
        return t;
    }
    if (body == "u2" || body == "V2") {
        if (bf16) {
            t.cat = Category::Numeric;
            t.dtype = &tensors::dtypeOf(DT::BF16);
            return t;
        }
        t.why = "dtype '" + d + "' is 16-bit raw data; if it holds bfloat16 bits (torch bf16 via .view(torch.uint16) "
                "or ml_dtypes.bfloat16), read it with --bf16 (kcx convert --bf16 IN --out RUN.safetensors)";
        return t;
    }
    if ((body[0] == 'U' || body[0] == 'S') && descrItemSize(d) > 0) {
        t.cat = Category::String;
        t.utf32 = body[0] == 'U';
        return t;
    }
    if (body[0] == 'O') {
        t.why = "dtype 'object' holds pickled Python objects, which KCX does not read; save strings as "
                "np.array(list_of_str) (dtype <U) and numbers as numeric arrays";
        return t;
    }
    t.why = "unsupported dtype '" + d + "'" + supported;
    return t;
}

// ---- one array, wherever its bytes are -----------------------------------------------------------
struct Located {
    std::string name;          // tensor / metadata name
    std::string label;         // "member 'x.npy'" or "" (a .npy file of its own)
    std::string file;          // the file errors name
    uint64_t fileOffset = 0;   // where `bytes` starts in that file (stored members, .npy files)
    bool deflated = false;     // bytes are inflated: offsets within them are not file offsets
    std::string_view bytes;    // the whole .npy (header and data)
    NpyHeader header;
};

InputError errorAt(const Located& a, uint64_t offsetInNpy, const std::string& msg) {
    // A deflated member's bytes have no file offset: name where its data starts, and the
    // offset within the inflated member.
    if (a.deflated)
        return InputError::atByte(a.file, a.fileOffset,
                                  a.label + " (deflated; byte " + std::to_string(offsetInNpy) + " inflated): " + msg);
    return InputError::atByte(a.file, a.fileOffset + offsetInNpy, a.label.empty() ? msg : a.label + ": " + msg);
}

void parseLocated(Located& a) {
    a.header = parseNpyHeader(a.bytes, [&](uint64_t off, const std::string& m) { return errorAt(a, off, m); });
}

// The strings of a <U / |S array (trailing NULs dropped, as numpy does).
std::vector<std::string> stringsOf(const Located& a, bool utf32) {
    const NpyHeader& h = a.header;
    std::vector<std::string> out;
    const unsigned char* p = reinterpret_cast<const unsigned char*>(a.bytes.data()) + h.dataOffset;
    for (uint64_t i = 0; i < h.elements; ++i, p += h.itemSize) {
        std::string s;
        if (utf32) {
            for (uint64_t c = 0; c < h.itemSize / 4; ++c) {
                const uint32_t cp = le32(p + 4 * c);
                if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
                    throw errorAt(a, h.dataOffset + i * h.itemSize + 4 * c,
                                  "not a Unicode code point: " + std::to_string(cp));
                appendUtf8(s, cp);
            }
        } else {
            s.assign(reinterpret_cast<const char*>(p), size_t(h.itemSize));
        }
        while (!s.empty() && s.back() == '\0')
            s.pop_back();
        if (const size_t bad = firstInvalidUtf8(s); bad != std::string::npos)   // |S bytes: KCX's text is UTF-8
            throw errorAt(a, h.dataOffset + i * h.itemSize + bad, "invalid UTF-8 in a byte string (|S): ids and labels are UTF-8 text");
        out.push_back(std::move(s));
    }
    return out;
}

// A metadata member as the JSON that safetensors __metadata__ would hold.
json metadataOf(const Located& a, bool bf16) {
    const NpyHeader& h = a.header;
    const NpyType t = classify(h.descr, bf16);
    const bool listOk = a.name == "ids" || a.name == "slice_keys";
    if (t.cat == Category::String) {
        std::vector<std::string> strings = stringsOf(a, t.utf32);
        if (h.shape.empty() || (h.shape.size() == 1 && h.shape[0] == 1 && !listOk)) {
            const std::string& text = strings.at(0);
            if (const size_t deep = jsonDepthExceeded(text); deep != std::string::npos)
                throw errorAt(a, h.dataOffset, "'" + a.name + "' is " + jsonDepthMessage() + ", at character " +
                                                   std::to_string(deep + 1) + " of its text");
            try {
                return json::parse(text);
            } catch (const json::parse_error& e) {
                throw errorAt(a, h.dataOffset, "'" + a.name + "' is not valid JSON: " + e.what());
            }
        }
        if (listOk && h.shape.size() == 1)
            return json(strings);
    } else if (t.cat == Category::Numeric && t.dtype->kind == tensors::Kind::Int && a.name == "ids" &&
               h.shape.size() == 1) {
        json ids = json::array();
        const unsigned char* p = reinterpret_cast<const unsigned char*>(a.bytes.data()) + h.dataOffset;
        for (uint64_t i = 0; i < h.elements; ++i) {
            int64_t v = 0;
            switch (t.dtype->dt) {
            case DT::I64: v = int64_t(le64(p + 8 * i)); break;
            case DT::I32: v = int32_t(le32(p + 4 * i)); break;
            case DT::I16: v = int16_t(le16(p + 2 * i)); break;
            case DT::I8: v = int8_t(p[i]); break;
            default: v = p[i]; break;
            }
            ids.push_back(std::to_string(v));
        }
        return ids;
    }
    throw errorAt(a, 0,
                  "'" + a.name + "' (dtype '" + h.descr + "', shape " + tensors::shapeText(h.shape) + ") should be " +
                      (listOk ? "a 1-D array of strings, or a 0-d string holding JSON"
                              : "a 0-d string holding JSON (np.array(json.dumps(...)))"));
}

// Collected arrays -> the shared run builder.
Run buildFrom(const std::string& path, std::vector<Located>& arrays, std::shared_ptr<const void> keepAlive,
              const LoadOptions& options, const Progress& progress,
              const std::function<InputError(const std::string&, const std::string&)>& headerError) {
    tensors::Source src;
    src.path = path;
    src.keepAlive = std::move(keepAlive);
    std::map<std::string, const Located*> byName;
    for (Located& a : arrays) {
        byName[a.name] = &a;
        if (metadataNames().count(a.name)) {
            json j = metadataOf(a, options.bf16);
            if (a.name == "ids")
                src.meta.ids = std::move(j);
            else if (a.name == "slice_keys")
                src.meta.sliceKeys = std::move(j);
            else if (a.name == "slice_values")
                src.meta.sliceValues = std::move(j);
            else if (a.name == "runtime")
                src.meta.runtime = std::move(j);
            else {
                if (!j.is_object() && !j.is_null())
                    throw errorAt(a, 0, "'header' must hold a JSON object (SPEC 1.3)");
                src.meta.header = std::move(j);
            }
            continue;
        }
        const NpyType t = classify(a.header.descr, options.bf16);
        if (t.cat != Category::Numeric)
            throw errorAt(a, 0, t.cat == Category::String ? "tensor '" + a.name + "' holds strings (dtype '" +
                                                                a.header.descr + "'); it must be numeric"
                                                          : t.why);
        Tensor x;
        x.name = a.name;
        x.dtype = t.dtype;
        x.shape = a.header.shape;
        x.elements = a.header.elements;
        x.data = reinterpret_cast<const unsigned char*>(a.bytes.data()) + a.header.dataOffset;
        x.begin = a.header.dataOffset;
        x.end = a.header.dataOffset + a.header.dataBytes;
        src.tensors.emplace(x.name, std::move(x));
    }
    // Metadata errors point at the member (or file) that holds the entry, when there is one.
    src.headerError = [byName, headerError](const std::string& msg, const std::string& key) {
        const auto it = byName.find(key);
        return it == byName.end() ? headerError(msg, key) : errorAt(*it->second, it->second->header.dataOffset, msg);
    };
    src.tensorError = [byName](const Tensor& t, uint64_t element, const std::string& msg) {
        const Located& a = *byName.at(t.name);
        return errorAt(a, a.header.dataOffset + element * t.dtype->size, msg);
    };
    return tensors::buildRun(src, progress);
}

std::string missingTensorsHint(const std::vector<std::string>& found) {
    std::string have;
    for (const auto& n : found)
        have += (have.empty() ? "" : ", ") + n;
    return "a run needs offsets, tokens, logp_train and logp_inf under those names (SPEC 1.2), e.g. "
           "np.savez(f, offsets=..., tokens=..., logp_train=..., logp_inf=...); found: " +
           (have.empty() ? std::string("nothing") : have);
}

struct Hold {
    std::shared_ptr<const tensors::Mapping> map;
    std::vector<std::shared_ptr<const tensors::Mapping>> maps;
    std::vector<std::vector<unsigned char>> inflated;
};

}  // namespace

// ---- .npy header ------------------------------------------------------------------------------------
NpyHeader parseNpyHeader(std::string_view bytes,
                         const std::function<InputError(uint64_t offset, const std::string& message)>& fail) {
    NpyHeader h;
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    if (bytes.size() < 6 || std::memcmp(b, "\x93NUMPY", 6) != 0)
        throw fail(0, "not a .npy array: it must start with \\x93NUMPY");
    if (bytes.size() < 10)
        throw fail(bytes.size(), "truncated: the .npy preamble is cut short after " + std::to_string(bytes.size()) +
                                     " bytes");
    h.major = b[6];
    h.minor = b[7];
    uint64_t headerLen = 0, start = 0;
    if (h.major == 1) {
        headerLen = le16(b + 8);
        start = 10;
    } else if (h.major == 2 || h.major == 3) {
        if (bytes.size() < 12)
            throw fail(bytes.size(), "truncated: the .npy preamble is cut short");
        headerLen = le32(b + 8);
        start = 12;
    } else {
        throw fail(6, "unsupported .npy format version " + std::to_string(h.major) + "." + std::to_string(h.minor) +
                          " (KCX reads 1.0, 2.0 and 3.0)");
    }
    if (headerLen == 0)
        throw fail(8, "header length is 0: an .npy file holds a header dict ({'descr': ..., 'shape': ...}) there");
    if (headerLen > kMaxNpyHeader)
        throw fail(8, "header length " + std::to_string(headerLen) + " exceeds the limit of 1 MB");
    if (headerLen > bytes.size() - start)
        throw fail(8, "truncated: the header needs " + std::to_string(headerLen) + " bytes, only " +
                          std::to_string(bytes.size() - start) + " follow");
    DictParser(bytes.substr(size_t(start), size_t(headerLen)), start, fail).parse(h);
    h.dataOffset = start + headerLen;
    if (h.descr.size() >= 2 && h.descr[1] == 'O')
        throw fail(start, "dtype 'object' holds pickled Python objects, which KCX does not read; save strings as "
                          "np.array(list_of_str) (dtype <U) and numbers as numeric arrays");
    h.itemSize = descrItemSize(h.descr);
    if (h.itemSize == 0)
        throw fail(start, "unsupported dtype '" + h.descr +
                              "' (KCX reads <f2 <f4 <f8 <i4 <i8 |u1 |b1, and bfloat16 stored as <u2 or <V2 with --bf16)");
    h.elements = 1;
    for (uint64_t d : h.shape)
        if (__builtin_mul_overflow(h.elements, d, &h.elements))
            throw fail(start, "shape " + tensors::shapeText(h.shape) + " has more elements than fit in 64 bits "
                                                                          "(element count overflow)");
    if (__builtin_mul_overflow(h.elements, h.itemSize, &h.dataBytes))
        throw fail(start, "shape " + tensors::shapeText(h.shape) + " of '" + h.descr +
                              "' needs more bytes than fit in 64 bits");
    if (h.fortranOrder) {
        size_t longDims = 0;
        for (uint64_t d : h.shape)
            longDims += d > 1;
        if (longDims > 1)
            throw fail(start, "fortran_order is True for shape " + tensors::shapeText(h.shape) +
                                  "; save C-ordered arrays (np.ascontiguousarray)");
    }
    if (h.dataBytes > bytes.size() - h.dataOffset)
        throw fail(h.dataOffset, "truncated: shape " + tensors::shapeText(h.shape) + " of '" + h.descr + "' needs " +
                                     std::to_string(h.dataBytes) + " bytes of data, only " +
                                     std::to_string(bytes.size() - h.dataOffset) + " follow the header");
    return h;
}

// ---- .npz --------------------------------------------------------------------------------------------
Run loadNpz(const std::string& path, const Progress& progress, const LoadOptions& options) {
    report(progress, 0.0);
    auto hold = std::make_shared<Hold>();
    hold->map = tensors::mapFile(path);
    const tensors::Mapping& map = *hold->map;
    zip::Archive zip(path, map.data, map.size);
    std::vector<zip::Member> members = zip.members();
    std::vector<std::string> found;
    std::vector<zip::Member*> wanted;
    uint64_t total = 0;
    for (zip::Member& m : members) {
        if (!m.name.ends_with(".npy"))
            continue;
        const std::string name = m.name.substr(0, m.name.size() - 4);
        found.push_back(name);
        if (tensorNames().count(name) || metadataNames().count(name)) {
            zip.locate(m);
            wanted.push_back(&m);
            total += m.size;
        }
    }
    if (std::find(found.begin(), found.end(), "offsets") == found.end())
        throw InputError::inFile(path, "no member 'offsets.npy': " + missingTensorsHint(found));
    // Stored members are used in place (mapped); deflated ones are inflated into memory,
    // which counts against the limit (KCX_MAX_MEMORY): refused before inflating anything.
    uint64_t inflatedBytes = 0;
    for (const zip::Member* m : wanted)
        if (m->method == 8)
            inflatedBytes += m->size;
    if (const uint64_t limit = options.maxMemoryBytes ? options.maxMemoryBytes : memoryLimit(); inflatedBytes > limit)
        throw InputError::inFile(path, "inflating this archive's compressed members needs " + memoryText(inflatedBytes) +
                                           " of memory, more than the " + memoryText(limit) +
                                           " KCX may use here (80% of memory; KCX_MAX_MEMORY sets it). Members "
                                           "stored uncompressed (np.savez, not np.savez_compressed) are mapped "
                                           "and stream from disk instead");

    std::vector<Located> arrays;
    uint64_t done = 0;
    for (zip::Member* m : wanted) {
        Located a;
        a.name = m->name.substr(0, m->name.size() - 4);
        a.label = "member '" + m->name + "'";
        a.file = path;
        a.fileOffset = m->dataOffset;
        const unsigned char* data = map.data + m->dataOffset;
        const auto tick = [&](double f) { report(progress, 0.6 * (double(done) + f * double(m->size)) / double(std::max<uint64_t>(total, 1))); };
        if (m->method == 8) {
            a.deflated = true;
            hold->inflated.push_back(zip::inflateMember(zip, *m, data, tick));
            const auto& buf = hold->inflated.back();
            a.bytes = std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size());
        } else {
            a.bytes = std::string_view(reinterpret_cast<const char*>(data), size_t(m->size));
        }
        const auto* bytes = reinterpret_cast<const unsigned char*>(a.bytes.data());
        if (zip::crc32Of(bytes, a.bytes.size()) != m->crc)
            zip.fail(m->dataOffset, "member '" + m->name + "': CRC-32 mismatch: the data is damaged");
        done += m->size;
        tick(0);
        parseLocated(a);
        arrays.push_back(std::move(a));
    }
    const Progress rest = progress ? Progress([&](double f) { return progress(0.6 + 0.4 * f); }) : Progress();
    return buildFrom(path, arrays, hold, options, rest, [path](const std::string& msg, const std::string& key) {
        return InputError::inFile(path, key.empty() ? msg : "member '" + key + ".npy': " + msg);
    });
}

// ---- a directory of .npy files ---------------------------------------------------------------------------
Run loadNpyDirectory(const std::string& dir, const Progress& progress, const LoadOptions& options) {
    namespace fs = std::filesystem;
    report(progress, 0.0);
    std::error_code ec;
    std::vector<std::string> found;
    std::vector<fs::path> wanted;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string file = e.path().filename().string();
        if (!file.ends_with(".npy"))
            continue;
        const std::string name = file.substr(0, file.size() - 4);
        found.push_back(name);
        if (tensorNames().count(name) || metadataNames().count(name))
            wanted.push_back(e.path());
    }
    if (ec)
        throw InputError::inFile(dir, "cannot list the directory: " + ec.message());
    std::sort(found.begin(), found.end());
    std::sort(wanted.begin(), wanted.end());
    if (std::find(found.begin(), found.end(), "offsets") == found.end())
        throw InputError::inFile(dir, "no offsets.npy: " + missingTensorsHint(found));
    auto hold = std::make_shared<Hold>();
    std::vector<Located> arrays;
    for (const fs::path& p : wanted) {
        Located a;
        a.file = p.string();
        a.name = p.stem().string();
        hold->maps.push_back(tensors::mapFile(a.file));
        const tensors::Mapping& m = *hold->maps.back();
        a.bytes = std::string_view(reinterpret_cast<const char*>(m.data), m.size);
        parseLocated(a);
        arrays.push_back(std::move(a));
    }
    report(progress, 0.1);
    return buildFrom(dir, arrays, hold, options, progress, [dir](const std::string& msg, const std::string& key) {
        return InputError::inFile(key.empty() ? dir : (fs::path(dir) / (key + ".npy")).string(), msg);
    });
}

}  // namespace kcx
