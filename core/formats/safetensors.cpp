// SPEC 1.2: safetensors runs, memory-mapped.
//
// The file is validated in two passes. The first (here) looks only at the header: its
// length, its JSON, every tensor's dtype, shape and data_offsets against the buffer size,
// and that no two tensors overlap. Only then is tensor data read, for the run's own rules
// (CSR offsets, matching shapes, ids, slice codes), in core/formats/tensor_run.cpp, which the NumPy
// reader shares. Float32/float64 and int32/int64 tensors that are aligned for their type
// are used in place (views that keep the mapping alive); everything else is decoded into
// owned arrays. The run is assembled in locals and returned whole, so a bad file never
// leaves a half-built run behind.
//
// Choices beyond SPEC 1.2 (documented for writers):
// - Without `ids` in __metadata__ the sequences are named "0", "1", ... in order.
// - `kcx` may be absent (files from other tools); when present it must be "1".
// - Tensors with names the run does not use are ignored (writers may add their own), in any
//   of safetensors' dtypes (U16, U32, U64, F8_E8M0, F4, ... as Hugging Face's reader takes
//   them), once their offsets and sizes check out; only the tensors the run reads must have
//   a dtype of SPEC 1.2.
// - As Hugging Face's reader (safetensors/src/tensor.rs): the header is at most 100,000,000
//   bytes, and the last tensor's data ends the file (no trailing bytes).
// - Optional per-token text: `text_offsets` (integer, [M+1], byte offsets into `text_bytes`,
//   starting at 0, non-decreasing) and `text_bytes` (U8, [B], UTF-8), both or neither.
// - `logits_rows` must be strictly ascending (sorted, no duplicates); it is not re-sorted.
// - Gaps between tensors are allowed (only overlaps are rejected).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_set>

#include "core/base/errors.h"
#include "core/base/json_depth.h"
#include "core/formats/loader.h"
#include "core/formats/tensor_run.h"

namespace kcx {
namespace {

using nlohmann::json;
using tensors::DType;
using tensors::Mapping;
using tensors::mapFile;
using tensors::Tensor;
using tensors::dtypeList;
using tensors::findDType;
using tensors::shapeText;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;   // safetensors' MAX_HEADER_SIZE

// safetensors' dtypes that no run tensor has (SPEC 1.2 lists the ones KCX reads), with their
// size in bits: allowed in tensors the run does not use.
constexpr std::pair<const char*, uint64_t> kOtherDTypes[] = {
    {"U16", 16}, {"U32", 32}, {"U64", 64}, {"F8_E8M0", 8}, {"C64", 64}, {"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6}};

// The readable part of an nlohmann parse error ("syntax error while parsing ...").
std::string parseMessage(const json::parse_error& e) {
    std::string m = e.what();
    const size_t col = m.find(", column ");
    if (col != std::string::npos) {
        const size_t colon = m.find(": ", col);
        if (colon != std::string::npos)
            return m.substr(colon + 2);
    }
    const size_t bracket = m.find("] ");
    return bracket == std::string::npos ? m : m.substr(bracket + 2);
}


// ---- the reader ---------------------------------------------------------------------------
class Reader {
public:
    Reader(std::string path, const Progress& progress) : path_(std::move(path)), progress_(progress) {}
    Run load();

private:
    void readPreamble();
    void parseHeader();
    void parseTensor(const std::string& name, const json& entry);
    void checkOverlaps();
    void parseMetadata(const json& meta);

    // --- errors
    [[noreturn]] void failHeader(const std::string& msg, const std::string& near = {}) const {
        throw InputError::atByte(path_, headerPos(near), msg);
    }
    // Byte offset of `"key"` in the header text (the header's start when not found).
    uint64_t headerPos(const std::string& key) const {
        if (!key.empty()) {
            const size_t at = headerText_.find("\"" + key + "\"");
            if (at != std::string_view::npos)
                return 8 + at;
        }
        return 8;
    }

    std::string path_;
    const Progress& progress_;
    std::shared_ptr<const Mapping> map_;
    uint64_t headerLen_ = 0, dataStart_ = 0, bufferSize_ = 0;
    std::string_view headerText_;
    std::map<std::string, Tensor> tensors_;
    // Tensors of kOtherDTypes: name -> (dtype, data_offsets).
    std::map<std::string, std::pair<std::string, std::pair<uint64_t, uint64_t>>> otherTensors_;
    tensors::Metadata meta_;   // __metadata__, parsed
};

// ---- pass 1 ---------------------------------------------------------------------------------
void Reader::readPreamble() {
    const uint64_t size = map_->size;
    if (size == 0)
        throw InputError::atByte(path_, 0, "the file is empty (a safetensors file starts with an 8-byte header length)");
    if (size < 8)
        throw InputError::atByte(path_, 0, "the file is truncated: " + std::to_string(size) +
                                               " bytes, shorter than the 8-byte header length");
    std::memcpy(&headerLen_, map_->data, 8);
    if (headerLen_ == 0)
        throw InputError::atByte(path_, 0, "header length is 0: a safetensors file holds a JSON header of at least "
                                           "2 bytes (\"{}\") after the 8-byte length");
    if (headerLen_ > kMaxHeaderBytes)
        throw InputError::atByte(path_, 0, "header length " + std::to_string(headerLen_) +
                                               " exceeds the limit of 100,000,000 bytes (as safetensors' own "
                                               "reader)");
    if (headerLen_ > size - 8)
        throw InputError::atByte(path_, 0, "header length " + std::to_string(headerLen_) +
                                               " runs past the end of the file (" + std::to_string(size) +
                                               " bytes)");
    dataStart_ = 8 + headerLen_;
    bufferSize_ = size - dataStart_;
    headerText_ = std::string_view(reinterpret_cast<const char*>(map_->data) + 8, size_t(headerLen_));
}

void Reader::parseHeader() {
    json h;
    // Duplicate names would silently replace each other: catch them while parsing.
    std::string duplicate;
    std::unordered_set<std::string> names;
    auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::key && depth == 1 && parsed.is_string() &&
            !names.insert(parsed.get<std::string>()).second && duplicate.empty())
            duplicate = parsed.get<std::string>();
        return true;
    };
    if (const size_t deep = jsonDepthExceeded(headerText_); deep != std::string_view::npos)
        throw InputError::atByte(path_, 8 + deep, "the header is " + jsonDepthMessage());
    try {
        h = json::parse(headerText_.begin(), headerText_.end(), callback);
    } catch (const json::parse_error& e) {
        const uint64_t at = e.byte > 0 ? e.byte - 1 : 0;
        throw InputError::atByte(path_, 8 + std::min<uint64_t>(at, headerLen_),
                                 "the header is not valid JSON: " + parseMessage(e));
    } catch (const json::exception& e) {   // valid syntax it cannot hold: a number beyond double (fuzz_safetensors)
        throw InputError::atByte(path_, 8, std::string("the header cannot be read: ") + e.what());
    }
    if (!h.is_object())
        failHeader("the header must be a JSON object (tensor name -> {dtype, shape, data_offsets})");
    if (!duplicate.empty())
        failHeader("the header names '" + duplicate + "' twice", duplicate);
    for (const auto& [name, entry] : h.items()) {
        if (name == "__metadata__")
            parseMetadata(entry);
        else
            parseTensor(name, entry);
    }
    checkOverlaps();
}

void Reader::parseTensor(const std::string& name, const json& entry) {
    auto fail = [&](const std::string& msg) { failHeader("tensor '" + name + "': " + msg, name); };
    if (!entry.is_object())
        fail("expected an object with dtype, shape and data_offsets");
    Tensor t;
    t.name = name;
    const auto dt = entry.find("dtype");
    if (dt == entry.end() || !dt->is_string())
        fail("\"dtype\" must be a string");
    t.dtype = findDType(dt->get<std::string>());
    uint64_t bits = t.dtype ? t.dtype->size * 8 : 0;
    if (!t.dtype) {
        for (const auto& [other, size] : kOtherDTypes)
            if (dt->get<std::string>() == other)
                bits = size;
        if (!bits)
            fail("unknown dtype '" + dt->get<std::string>() + "' (expected one of " + dtypeList() +
                 ", or for a tensor the run does not use U16, U32, U64, F8_E8M0, C64, F4, F6_E2M3, F6_E3M2)");
    }

    const auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array())
        fail("\"shape\" must be an array of non-negative integers");
    t.elements = 1;
    bool overflow = false;
    for (const json& d : *shape) {
        if (!d.is_number_unsigned())
            fail("\"shape\" must be an array of non-negative integers");
        t.shape.push_back(d.get<uint64_t>());
        overflow = overflow || __builtin_mul_overflow(t.elements, t.shape.back(), &t.elements);
    }
    uint64_t bytes = 0;
    if (overflow || __builtin_mul_overflow(t.elements, bits, &bytes))
        fail("shape " + shapeText(t.shape) + " has more elements (or bytes) than fit in 64 bits (element count overflow)");
    if (bytes % 8)
        fail("shape " + shapeText(t.shape) + " of " + dt->get<std::string>() + " does not fill whole bytes");
    bytes /= 8;

    const auto offs = entry.find("data_offsets");
    if (offs == entry.end() || !offs->is_array() || offs->size() != 2 || !(*offs)[0].is_number_unsigned() ||
        !(*offs)[1].is_number_unsigned())
        fail("\"data_offsets\" must be [begin, end] with non-negative integers");
    t.begin = (*offs)[0].get<uint64_t>();
    t.end = (*offs)[1].get<uint64_t>();
    std::string range = "[";   // appended piecewise: GCC 12 warns falsely on "[" + std::string (bug 105329)
    range.append(std::to_string(t.begin)).append(", ").append(std::to_string(t.end)).append("]");
    if (t.end < t.begin)
        fail("data_offsets " + range + " end before they begin");
    if (t.end > bufferSize_)
        fail("data_offsets " + range + " are out of range: past the end of the data buffer (" +
             std::to_string(bufferSize_) + " bytes)");
    if (t.end - t.begin != bytes)
        fail("size mismatch: data_offsets " + range + " span " + std::to_string(t.end - t.begin) +
             " bytes but shape " + shapeText(t.shape) + " of " + dt->get<std::string>() + " needs " +
             std::to_string(bytes));
    if (!t.dtype) {
        otherTensors_.emplace(name, std::pair{dt->get<std::string>(), std::pair{t.begin, t.end}});
        return;
    }
    tensors_.emplace(name, std::move(t));
}

void Reader::checkOverlaps() {
    struct Range {
        const std::string* name;
        uint64_t begin, end;
    };
    std::vector<Range> byBegin;
    for (const auto& [name, t] : tensors_)
        if (t.end > t.begin)   // empty tensors occupy nothing
            byBegin.push_back({&name, t.begin, t.end});
    for (const auto& [name, range] : otherTensors_)
        if (range.second.second > range.second.first)
            byBegin.push_back({&name, range.second.first, range.second.second});
    std::sort(byBegin.begin(), byBegin.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
    uint64_t last = 0;
    for (size_t i = 0; i < byBegin.size(); ++i) {
        const Range& b = byBegin[i];
        if (i > 0 && b.begin < byBegin[i - 1].end) {
            const Range& a = byBegin[i - 1];
            throw InputError::atByte(path_, dataStart_ + b.begin,
                                     "tensors '" + *a.name + "' [" + std::to_string(a.begin) + ", " +
                                         std::to_string(a.end) + "] and '" + *b.name + "' [" +
                                         std::to_string(b.begin) + ", " + std::to_string(b.end) + "] overlap");
        }
        last = std::max(last, b.end);
    }
    if (last < bufferSize_)
        throw InputError::atByte(path_, dataStart_ + last,
                                 std::to_string(bufferSize_ - last) + " byte(s) after the last tensor's data: in a "
                                 "safetensors file the last tensor ends the file (a copy cut short, or two files "
                                 "written into one?)");
}

void Reader::parseMetadata(const json& meta) {
    if (!meta.is_object())
        failHeader("\"__metadata__\" must be an object of strings", "__metadata__");
    auto parsed = [&](const std::string& key, const std::string& text) {
        if (const size_t deep = jsonDepthExceeded(text); deep != std::string::npos)
            failHeader("metadata '" + key + "' is " + jsonDepthMessage() + ", at character " +
                           std::to_string(deep + 1) + " of its value",
                       key);
        try {
            return json::parse(text);
        } catch (const json::parse_error& e) {
            failHeader("metadata '" + key + "' is not valid JSON (at character " + std::to_string(e.byte) +
                           " of its value): " + parseMessage(e),
                       key);
        } catch (const json::exception& e) {
            failHeader("metadata '" + key + "' cannot be read: " + e.what(), key);
        }
    };
    for (const auto& [key, value] : meta.items()) {
        if (!value.is_string())
            failHeader("metadata '" + key + "' must be a string (safetensors metadata is string -> string)", key);
        const std::string& text = value.get_ref<const std::string&>();
        if (key == "kcx") {
            if (text != "1")
                failHeader("metadata 'kcx' is \"" + text + "\"; this reader understands format \"1\"", key);
        } else if (key == "ids") {
            meta_.ids = parsed(key, text);
        } else if (key == "slice_keys") {
            meta_.sliceKeys = parsed(key, text);
        } else if (key == "slice_values") {
            meta_.sliceValues = parsed(key, text);
        } else if (key == "header") {
            meta_.header = parsed(key, text);
            if (!meta_.header->is_object() && !meta_.header->is_null())
                failHeader("metadata 'header' must be a JSON object (SPEC 1.3)", key);
        } else if (key == "runtime") {
            meta_.runtime = parsed(key, text);
        }
        // Other keys (e.g. "format": "pt") belong to other tools.
    }
}

Run Reader::load() {
    report(progress_, 0.0);
    map_ = mapFile(path_);
    readPreamble();
    parseHeader();
    report(progress_, 0.1);

    tensors::Source src;
    src.path = path_;
    for (auto& [name, t] : tensors_) {
        t.data = map_->data + dataStart_ + t.begin;
        src.tensors.emplace(name, t);
    }
    src.meta = std::move(meta_);
    for (const auto& [name, other] : otherTensors_)
        src.otherTensors.emplace(name, other.first);
    src.keepAlive = map_;
    src.headerError = [this](const std::string& msg, const std::string& key) {
        return InputError::atByte(path_, headerPos(key), msg);
    };
    src.tensorError = [this](const Tensor& t, uint64_t element, const std::string& msg) {
        return InputError::atByte(path_, dataStart_ + t.begin + element * t.dtype->size,
                                  "tensor '" + t.name + "': " + msg);
    };
    return tensors::buildRun(src, progress_);
}

}  // namespace

Run loadSafetensors(const std::string& path, const Progress& progress) {
    return Reader(path, progress).load();
}

}  // namespace kcx
