// Building a run from the named tensors of SPEC 1.2 (core/formats/tensor_run.h). Moved out of
// core/formats/safetensors.cpp so that the NumPy reader applies exactly the same rules and messages.
//
// Choices beyond SPEC 1.2 (documented for writers):
// - Without `ids` in __metadata__ the sequences are named "0", "1", ... in order.
// - Tensors with names the run does not use are ignored (writers may add their own).
// - Optional per-token text: `text_offsets` (integer, [M+1], byte offsets into `text_bytes`,
//   starting at 0, non-decreasing) and `text_bytes` (U8, [B], UTF-8), both or neither.
// - `logits_rows` must be strictly ascending (sorted, no duplicates); it is not re-sorted.
#include "core/formats/tensor_run.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <unordered_set>

#include "core/base/half.h"
#include "core/base/safe_open.h"

static_assert(std::endian::native == std::endian::little, "tensor data is little-endian");

namespace kcx::tensors {

using nlohmann::json;

namespace {
// The live mappings, by start (dropMappedPages acts only inside one of them).
std::mutex mappingsMutex;
std::map<const unsigned char*, size_t> liveMappings;
}  // namespace

Mapping::~Mapping() {
    if (data) {
        {
            std::lock_guard lock(mappingsMutex);
            liveMappings.erase(data);
        }
        munmap(const_cast<unsigned char*>(data), size);
    }
}

void dropMappedPages(const void* p, size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(p);
    std::lock_guard lock(mappingsMutex);
    auto it = liveMappings.upper_bound(b);
    if (it == liveMappings.begin())
        return;
    --it;
    if (b < it->first || b + bytes > it->first + it->second)
        return;
    // Whole pages inside the range only: a page shared with a neighbour is kept.
    const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    const uintptr_t from = (uintptr_t(b) + page - 1) / page * page, to = uintptr_t(b + bytes) / page * page;
    if (to > from)
        (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

std::shared_ptr<const Mapping> mapFile(const std::string& path) {
    const int fd = openRegularFile(path);   // a FIFO or a device is refused, never waited on
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw InputError::inFile(path, "not a regular file");
    }
    auto m = std::make_shared<Mapping>();
    m->size = size_t(st.st_size);
    if (m->size > 0) {
        void* p = mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            m->size = 0;
            throw InputError::inFile(path, std::string("cannot map: ") + std::strerror(err));
        }
        m->data = static_cast<const unsigned char*>(p);
        std::lock_guard lock(mappingsMutex);
        liveMappings[m->data] = m->size;
    }
    ::close(fd);
    return m;
}

namespace {

constexpr DType kDTypes[] = {
    {"F64", DT::F64, 8, Kind::Float},   {"F32", DT::F32, 4, Kind::Float},
    {"F16", DT::F16, 2, Kind::Float},   {"BF16", DT::BF16, 2, Kind::Float},
    {"F8_E4M3", DT::F8E4M3, 1, Kind::Float}, {"F8_E5M2", DT::F8E5M2, 1, Kind::Float},
    {"I64", DT::I64, 8, Kind::Int},     {"I32", DT::I32, 4, Kind::Int},
    {"I16", DT::I16, 2, Kind::Int},     {"I8", DT::I8, 1, Kind::Int},
    {"U8", DT::U8, 1, Kind::Int},       {"BOOL", DT::Bool, 1, Kind::Int},
};

}  // namespace

const DType* findDType(const std::string& name) {
    for (const DType& d : kDTypes)
        if (name == d.name)
            return &d;
    return nullptr;
}

const DType& dtypeOf(DT dt) {
    for (const DType& d : kDTypes)
        if (d.dt == dt)
            return d;
    return kDTypes[0];   // not reached: every DT is in the table
}

std::string dtypeList() {
    std::string s;
    for (const DType& d : kDTypes)
        s += (s.empty() ? "" : ", ") + std::string(d.name);
    return s;
}

std::string shapeText(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

namespace {

class Builder {
public:
    Builder(const Source& src, const Progress& progress) : src_(src), progress_(progress), meta_(src.meta) {}
    Run build();

private:
    // --- errors
    [[noreturn]] void failHeader(const std::string& msg, const std::string& near = {}) const {
        throw src_.headerError(msg, near);
    }
    [[noreturn]] void failTensor(const Tensor& t, const std::string& msg, uint64_t element = 0) const {
        throw src_.tensorError(t, element, msg);
    }
    std::string seqNote(size_t s) const { return " (sequence '" + ids_[s] + "')"; }
    std::string tokenNote(uint64_t token) const {
        const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), int64_t(token));
        return seqNote(size_t(it - offsets_.begin()) - 1);
    }

    const Tensor* find(const std::string& name) const {
        if (const auto other = src_.otherTensors.find(name); other != src_.otherTensors.end())
            failHeader("tensor '" + name + "' has dtype " + other->second + ", which KCX does not read (" +
                       dtypeList() + ")");
        const auto it = src_.tensors.find(name);
        return it == src_.tensors.end() ? nullptr : &it->second;
    }
    const Tensor& require(const std::string& name) const {
        const Tensor* t = find(name);
        if (!t)
            failHeader("missing required tensor '" + name + "'");
        return *t;
    }
    void expectKind(const Tensor& t, Kind kind) const;
    void expectShape(const Tensor& t, std::initializer_list<uint64_t> dims, const std::string& why) const;
    void expectRank(const Tensor& t, size_t rank) const;
    const unsigned char* ptr(const Tensor& t) const { return t.data; }
    template <class T>
    T raw(const Tensor& t, uint64_t i) const {
        T v;
        std::memcpy(&v, ptr(t) + i * sizeof(T), sizeof(T));
        return v;
    }
    int64_t intAt(const Tensor& t, uint64_t i) const;
    float floatAt(const Tensor& t, uint64_t i) const;
    template <class T>
    bool aligned(const Tensor& t) const { return reinterpret_cast<uintptr_t>(ptr(t)) % alignof(T) == 0; }
    template <class T>
    Array<T> view(const Tensor& t) const {
        return Array<T>(reinterpret_cast<const T*>(ptr(t)), size_t(t.elements), src_.keepAlive);
    }

    Column floatColumn(const Tensor& t) const;
    std::vector<double> doubles(const Tensor& t) const;
    Array<int64_t> ints64(const Tensor& t) const;
    // int32 values; `note(i)` names the sequence of element i in range errors.
    template <class Note>
    Array<int32_t> ints32(const Tensor& t, Note note) const;

    void readOffsets(uint64_t tokens);
    void readIds(uint64_t n);
    TopK readTopK(const char* which, uint64_t m) const;
    Logits readLogits(uint64_t m) const;
    void readSlices(uint64_t n, SliceTable& out) const;
    void readSteps(uint64_t n, SliceTable& out) const;
    void readText(uint64_t m, Run& run) const;

    const Source& src_;
    const Progress& progress_;
    Metadata meta_;
    std::vector<std::string> ids_;
    std::vector<int64_t> offsets_;   // a copy for validation and sequence lookup
};

// ---- pass 2 helpers -----------------------------------------------------------------------
void Builder::expectKind(const Tensor& t, Kind kind) const {
    if (t.dtype->kind != kind)
        failTensor(t, std::string("dtype ") + t.dtype->name + " is not " +
                          (kind == Kind::Float ? "a floating type (expected F64, F32, F16, BF16, F8_E4M3 or F8_E5M2)"
                                               : "an integer type (expected I64, I32, I16, I8, U8 or BOOL)"));
}

void Builder::expectRank(const Tensor& t, size_t rank) const {
    if (t.shape.size() != rank)
        failTensor(t, "shape " + shapeText(t.shape) + " should have " + std::to_string(rank) +
                          (rank == 1 ? " dimension" : " dimensions"));
}

void Builder::expectShape(const Tensor& t, std::initializer_list<uint64_t> dims, const std::string& why) const {
    if (!std::equal(t.shape.begin(), t.shape.end(), dims.begin(), dims.end()))
        failTensor(t, "shape " + shapeText(t.shape) + " should be " + shapeText(std::vector<uint64_t>(dims)) + " (" +
                          why + ")");
}

int64_t Builder::intAt(const Tensor& t, uint64_t i) const {
    switch (t.dtype->dt) {
    case DT::I64: return raw<int64_t>(t, i);
    case DT::I32: return raw<int32_t>(t, i);
    case DT::I16: return raw<int16_t>(t, i);
    case DT::I8: return raw<int8_t>(t, i);
    case DT::U8: return raw<uint8_t>(t, i);
    case DT::Bool: return raw<uint8_t>(t, i) ? 1 : 0;
    default: return 0;   // not reached: callers check the kind
    }
}

float Builder::floatAt(const Tensor& t, uint64_t i) const {
    switch (t.dtype->dt) {
    case DT::F32: return raw<float>(t, i);
    case DT::F16: return halfToFloat(raw<uint16_t>(t, i));
    case DT::BF16: return bf16ToFloat(raw<uint16_t>(t, i));
    case DT::F8E4M3: return fp8e4m3ToFloat(raw<uint8_t>(t, i));
    case DT::F8E5M2: return fp8e5m2ToFloat(raw<uint8_t>(t, i));
    default: return 0;   // F64 is handled by the callers
    }
}

Column Builder::floatColumn(const Tensor& t) const {
    expectKind(t, Kind::Float);
    if (t.dtype->dt == DT::F64) {
        if (aligned<double>(t))
            return Column(view<double>(t));
        std::vector<double> v(t.elements);
        std::memcpy(v.data(), ptr(t), t.end - t.begin);
        return Column(Array<double>(std::move(v)));
    }
    if (t.dtype->dt == DT::F32 && aligned<float>(t))
        return Column(view<float>(t));
    std::vector<float> v(t.elements);
    for (uint64_t i = 0; i < t.elements; ++i)
        v[i] = floatAt(t, i);
    return Column(Array<float>(std::move(v)));
}

std::vector<double> Builder::doubles(const Tensor& t) const {
    expectKind(t, Kind::Float);
    std::vector<double> v(t.elements);
    for (uint64_t i = 0; i < t.elements; ++i) {
        if (t.dtype->dt == DT::F64) {
            v[i] = raw<double>(t, i);
        } else {
            const float f = floatAt(t, i);
            v[i] = isMissing(f) ? missingDouble() : double(f);
        }
    }
    return v;
}

Array<int64_t> Builder::ints64(const Tensor& t) const {
    expectKind(t, Kind::Int);
    if (t.dtype->dt == DT::I64 && aligned<int64_t>(t))
        return view<int64_t>(t);
    std::vector<int64_t> v(t.elements);
    for (uint64_t i = 0; i < t.elements; ++i)
        v[i] = intAt(t, i);
    return Array<int64_t>(std::move(v));
}

template <class Note>
Array<int32_t> Builder::ints32(const Tensor& t, Note note) const {
    expectKind(t, Kind::Int);
    if (t.dtype->dt == DT::I32 && aligned<int32_t>(t))
        return view<int32_t>(t);
    std::vector<int32_t> v(t.elements);
    for (uint64_t i = 0; i < t.elements; ++i) {
        const int64_t x = intAt(t, i);
        if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
            failTensor(t, "value " + std::to_string(x) + " at index " + std::to_string(i) +
                              " does not fit 32 bits" + note(i), i);
        v[i] = int32_t(x);
    }
    return Array<int32_t>(std::move(v));
}

// ---- pass 2: the run's rules ------------------------------------------------------------------
void Builder::readIds(uint64_t n) {
    if (!meta_.ids) {   // no ids: name the sequences by their index
        for (uint64_t s = 0; s < n; ++s)
            ids_.push_back(std::to_string(s));
        return;
    }
    const json& j = *meta_.ids;
    if (!j.is_array())
        failHeader("metadata 'ids' must be a JSON array of strings", "ids");
    if (j.size() != n)
        failHeader("metadata 'ids' has " + std::to_string(j.size()) + " entries but 'offsets' describes " +
                       std::to_string(n) + " sequences",
                   "ids");
    std::unordered_set<std::string> seen;
    for (const json& id : j) {
        if (!id.is_string())
            failHeader("metadata 'ids' must hold only strings, found " + id.dump(), "ids");
        const std::string& s = id.get_ref<const std::string&>();
        if (!seen.insert(s).second)
            failHeader("metadata 'ids': duplicate sequence id '" + s + "'", "ids");
        ids_.push_back(s);
    }
}

void Builder::readOffsets(uint64_t m) {
    const Tensor& t = require("offsets");
    const size_t n = ids_.size();
    for (size_t s = 0; s <= n; ++s) {
        const int64_t o = intAt(t, s);
        if (s == 0 && o != 0)
            failTensor(t, "offsets[0] is " + std::to_string(o) + ", expected 0", 0);
        if (s > 0 && o < offsets_.back())
            failTensor(t, "decreases at index " + std::to_string(s) + " (" + std::to_string(o) + " after " +
                              std::to_string(offsets_.back()) + ")" + seqNote(s - 1),
                       s);
        if (o > int64_t(m))
            failTensor(t, "offsets[" + std::to_string(s) + "] = " + std::to_string(o) + " runs past the " +
                              std::to_string(m) + " tokens of 'tokens'" + seqNote(s - 1),
                       s);
        offsets_.push_back(o);
    }
    if (offsets_.back() != int64_t(m))
        failTensor(t, "the last entry is " + std::to_string(offsets_.back()) + " but 'tokens' has " +
                          std::to_string(m) + " elements (they must agree: M = offsets[N])",
                   n);
}

TopK Builder::readTopK(const char* which, uint64_t m) const {
    const std::string idsName = std::string("topk_") + which + "_ids";
    const std::string lpName = std::string("topk_") + which + "_logp";
    const Tensor* ids = find(idsName);
    const Tensor* lp = find(lpName);
    TopK out;
    if (!ids && !lp)
        return out;
    if (!ids || !lp) {
        const Tensor& have = ids ? *ids : *lp;
        failTensor(have, "needs '" + (ids ? lpName : idsName) + "' as well (top-k ids and log-probs come together)");
    }
    expectRank(*ids, 2);
    if (ids->shape[0] != m || ids->shape[1] < 1)
        failTensor(*ids, "shape " + shapeText(ids->shape) + " should be [M, k] with M = " + std::to_string(m) +
                             " and k >= 1");
    if (lp->shape != ids->shape)
        failTensor(*lp, "shape " + shapeText(lp->shape) + " differs from '" + idsName + "' " +
                            shapeText(ids->shape) + " (ids and log-probs need the same [M, k])");
    const uint64_t k = ids->shape[1];
    if (k > uint64_t(std::numeric_limits<int>::max()))
        failTensor(*ids, "k = " + std::to_string(k) + " is too large");
    out.logp = floatColumn(*lp);
    out.ids = ints32(*ids, [&](uint64_t i) { return tokenNote(i / k); });
    out.k = int(k);
    return out;
}

Logits Builder::readLogits(uint64_t m) const {
    const Tensor* rows = find("logits_rows");
    const Tensor* tr = find("logits_train");
    const Tensor* in = find("logits_inf");
    Logits out;
    if (!rows && !tr && !in)
        return out;
    if (!rows || !tr || !in) {
        const Tensor& have = rows ? *rows : tr ? *tr : *in;
        failTensor(have, "full logits need all three of 'logits_rows', 'logits_train' and 'logits_inf'");
    }
    expectKind(*rows, Kind::Int);
    expectRank(*rows, 1);
    const uint64_t p = rows->shape[0];
    expectRank(*tr, 2);
    expectRank(*in, 2);
    if (tr->shape[0] != p)
        failTensor(*tr, "has " + std::to_string(tr->shape[0]) + " rows but 'logits_rows' lists " + std::to_string(p));
    if (in->shape[0] != p)
        failTensor(*in, "has " + std::to_string(in->shape[0]) + " rows but 'logits_rows' lists " + std::to_string(p));
    const uint64_t v = tr->shape[1];
    if (v < 1)
        failTensor(*tr, "V must be at least 1");
    if (in->shape[1] != v)
        failTensor(*in, "V mismatch: V = " + std::to_string(in->shape[1]) + " but 'logits_train' has V = " +
                            std::to_string(v) + " (both kernels share the vocabulary)");
    if (v > uint64_t(std::numeric_limits<int64_t>::max()))
        failTensor(*tr, "V is too large");
    out.rows = ints64(*rows);
    for (uint64_t i = 0; i < p; ++i) {
        const int64_t r = out.rows[i];
        if (r < 0 || uint64_t(r) >= m)
            failTensor(*rows, "row " + std::to_string(r) + " at index " + std::to_string(i) +
                                  " is outside the tokens 0.." + std::to_string(int64_t(m) - 1),
                       i);
        if (i > 0 && r <= out.rows[i - 1])
            failTensor(*rows, "not strictly ascending at index " + std::to_string(i) + " (" + std::to_string(r) +
                                  " after " + std::to_string(out.rows[i - 1]) +
                                  "): rows must be sorted and unique" + tokenNote(uint64_t(r)),
                       i);
    }
    out.train = floatColumn(*tr);
    out.inf = floatColumn(*in);
    out.vocab = p > 0 ? int64_t(v) : 0;
    if (p == 0)
        out = Logits{};
    return out;
}

void Builder::readSlices(uint64_t n, SliceTable& out) const {
    const Tensor* codes = find("slice_codes");
    std::vector<std::string> keys;
    if (meta_.sliceKeys) {
        if (!meta_.sliceKeys->is_array())
            failHeader("metadata 'slice_keys' must be a JSON array of strings", "slice_keys");
        std::set<std::string> seen;
        for (const json& k : *meta_.sliceKeys) {
            if (!k.is_string())
                failHeader("metadata 'slice_keys' must hold only strings, found " + k.dump(), "slice_keys");
            if (!seen.insert(k.get<std::string>()).second)
                failHeader("metadata 'slice_keys' names '" + k.get<std::string>() + "' twice", "slice_keys");
            keys.push_back(k.get<std::string>());
        }
    }
    std::vector<std::vector<std::string>> values(keys.size());
    if (meta_.sliceValues) {
        if (!meta_.sliceValues->is_object())
            failHeader("metadata 'slice_values' must be a JSON object: key -> array of strings", "slice_values");
        for (const auto& [key, list] : meta_.sliceValues->items()) {
            const auto it = std::find(keys.begin(), keys.end(), key);
            if (it == keys.end())
                failHeader("metadata 'slice_values' has key '" + key + "', which 'slice_keys' does not list",
                           "slice_values");
            if (!list.is_array())
                failHeader("metadata 'slice_values': '" + key + "' must be an array of strings", "slice_values");
            auto& vs = values[size_t(it - keys.begin())];
            for (const json& v : list) {
                if (!v.is_string())
                    failHeader("metadata 'slice_values': '" + key + "' must hold only strings, found " + v.dump(),
                               "slice_values");
                vs.push_back(v.get<std::string>());
            }
        }
    }
    const uint64_t kk = keys.size();
    if (!codes) {
        if (kk > 0)
            failHeader("metadata 'slice_keys' names " + std::to_string(kk) +
                       " keys but the tensor 'slice_codes' is missing");
        return;
    }
    expectKind(*codes, Kind::Int);
    expectShape(*codes, {n, kk}, "[N, K]: one code per sequence and slice key");
    std::vector<int32_t> c(codes->elements);
    for (uint64_t s = 0; s < n; ++s)
        for (uint64_t k = 0; k < kk; ++k) {
            const uint64_t i = s * kk + k;
            const int64_t code = intAt(*codes, i);
            if (code < -1 || code >= int64_t(values[k].size()))
                failTensor(*codes, "code " + std::to_string(code) + " for key '" + keys[k] + "'" + seqNote(s) +
                                       " is out of range (the key has " + std::to_string(values[k].size()) +
                                       " values; -1 = unlabeled)",
                           i);
            c[i] = int32_t(code);
        }
    out.keys = std::move(keys);
    out.values = std::move(values);
    out.codes = std::move(c);
}

// SPEC 1.2/7: the `step` tensor becomes the slice key "step" (run.h), its values the steps
// present in ascending order.
void Builder::readSteps(uint64_t n, SliceTable& out) const {
    const Tensor* t = find(kStepKey);
    if (!t)
        return;
    expectKind(*t, Kind::Int);
    expectShape(*t, {n}, "[N]: each sequence's training step, -1 = none");
    if (out.keyIndex(kStepKey) >= 0)
        failTensor(*t, "the run has both a 'step' tensor and a slice key 'step' (the tensor is the step)");
    std::vector<int64_t> step(n);
    std::map<int64_t, int32_t> codeOf;
    for (uint64_t s = 0; s < n; ++s) {
        step[s] = intAt(*t, s);
        if (step[s] < -1)
            failTensor(*t, "step " + std::to_string(step[s]) + seqNote(s) + " is negative (-1 = none)", s);
        if (step[s] >= 0)
            codeOf.emplace(step[s], 0);
    }
    if (codeOf.empty())
        return;
    std::vector<std::string> values;
    for (auto& [value, code] : codeOf) {
        code = int32_t(values.size());
        values.push_back(std::to_string(value));
    }
    const size_t k0 = out.keys.size();
    std::vector<int32_t> codes(n * (k0 + 1));
    for (uint64_t s = 0; s < n; ++s) {
        std::copy_n(out.codes.begin() + ptrdiff_t(s * k0), k0, codes.begin() + ptrdiff_t(s * (k0 + 1)));
        codes[s * (k0 + 1) + k0] = step[s] < 0 ? -1 : codeOf[step[s]];
    }
    out.keys.push_back(kStepKey);
    out.values.push_back(std::move(values));
    out.codes = std::move(codes);
}

void Builder::readText(uint64_t m, Run& run) const {
    const Tensor* offs = find("text_offsets");
    const Tensor* bytes = find("text_bytes");
    if (!offs && !bytes)
        return;
    if (!offs || !bytes)
        failTensor(offs ? *offs : *bytes, "per-token text needs both 'text_offsets' and 'text_bytes'");
    expectKind(*offs, Kind::Int);
    expectShape(*offs, {m + 1}, "[M+1]: byte offsets of each token's text");
    if (bytes->dtype->dt != DT::U8 && bytes->dtype->dt != DT::I8)
        failTensor(*bytes, std::string("dtype ") + bytes->dtype->name + " should be U8 (UTF-8 bytes)");
    expectRank(*bytes, 1);
    std::vector<uint64_t> to(m + 1);
    for (uint64_t i = 0; i <= m; ++i) {
        const int64_t o = intAt(*offs, i);
        if ((i == 0 && o != 0) || (i > 0 && o < int64_t(to[i - 1])) || uint64_t(o) > bytes->elements)
            failTensor(*offs, "entry " + std::to_string(i) + " = " + std::to_string(o) +
                                  " is not a valid text offset (must start at 0, not decrease, and stay within the " +
                                  std::to_string(bytes->elements) + " bytes of 'text_bytes')",
                       i);
        to[i] = uint64_t(o);
    }
    if (to[m] != bytes->elements)
        failTensor(*offs, "the last entry is " + std::to_string(to[m]) + " but 'text_bytes' has " +
                              std::to_string(bytes->elements) + " bytes",
                   m);
    run.textPool.assign(reinterpret_cast<const char*>(ptr(*bytes)), size_t(bytes->elements));
    run.textOffsets = std::move(to);
}

Run Builder::build() {
    // Shapes of the required tensors first, then data.
    const Tensor& offsets = require("offsets");
    const Tensor& tokens = require("tokens");
    const Tensor& lpTrain = require("logp_train");
    const Tensor& lpInf = require("logp_inf");
    expectKind(offsets, Kind::Int);
    expectRank(offsets, 1);
    if (offsets.shape[0] < 2)
        failTensor(offsets, "shape " + shapeText(offsets.shape) + " should be [N+1] with N >= 1 sequences");
    expectKind(tokens, Kind::Int);
    expectRank(tokens, 1);
    const uint64_t n = offsets.shape[0] - 1, m = tokens.shape[0];
    expectShape(lpTrain, {m}, "[M], one log-prob per token");
    expectShape(lpInf, {m}, "[M], one log-prob per token");

    readIds(n);
    readOffsets(m);

    Run run;
    run.path = src_.path;
    run.offsets = ints64(offsets);
    run.tokens = ints32(tokens, [&](uint64_t i) { return tokenNote(i); });
    report(progress_, 0.3);
    run.lpTrain = floatColumn(lpTrain);
    run.lpInf = floatColumn(lpInf);
    report(progress_, 0.5);
    run.topkTrain = readTopK("train", m);
    run.topkInf = readTopK("inf", m);
    report(progress_, 0.7);
    run.logits = readLogits(m);
    report(progress_, 0.85);
    for (auto [name, out] : {std::pair{"reward_train", &run.rewardTrain}, std::pair{"reward_inf", &run.rewardInf}})
        if (const Tensor* t = find(name)) {
            expectShape(*t, {n}, "[N], one reward per sequence");
            *out = doubles(*t);
        }
    readSlices(n, run.slices);
    readSteps(n, run.slices);
    readText(m, run);

    if (meta_.runtime) {
        if (!meta_.runtime->is_array() || meta_.runtime->size() != n)
            failHeader("metadata 'runtime' must be a JSON array of " + std::to_string(n) + " objects (one per sequence)",
                       "runtime");
        for (size_t s = 0; s < n; ++s) {
            const json& r = (*meta_.runtime)[s];
            if (!r.is_object() && !r.is_null())
                failHeader("metadata 'runtime': entry " + std::to_string(s) + seqNote(s) + " must be an object",
                           "runtime");
            run.runtime.push_back(r.is_null() ? json::object() : r);
        }
    }
    if (meta_.header)
        run.header = std::move(*meta_.header);
    run.ids = std::move(ids_);
    run.checkInvariants();
    report(progress_, 1.0);
    return run;
}

}  // namespace

Run buildRun(const Source& source, const Progress& progress) {
    return Builder(source, progress).build();
}

}  // namespace kcx::tensors
