// The run model: one set of sequences scored by two kernels (SPEC 1).
//
// Per-token data is stored CSR-style: `offsets` (N+1 entries) splits flat arrays of M
// tokens into N sequences. Numeric columns keep the precision they arrived in: a JSONL
// run stores float64 (what the text said, so that tiny train/inf differences survive),
// a safetensors run maps float32/float64 tensors zero-copy and decodes half-precision
// ones to float32. Every computation accumulates in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kcx {

// ---- missing and non-finite values ---------------------------------------------------
// JSON `null` ("not logged") is stored as a NaN with a payload of its own, so that it
// is counted as missing, while "NaN"/"Infinity" strings are counted as non-finite.
inline constexpr uint64_t kMissingBits64 = 0x7ff80000000dead1ULL;
inline constexpr uint32_t kMissingBits32 = 0x7fc0dea1U;

inline double missingDouble() {
    double d;
    std::memcpy(&d, &kMissingBits64, sizeof d);
    return d;
}
inline float missingFloat() {
    float f;
    std::memcpy(&f, &kMissingBits32, sizeof f);
    return f;
}
inline bool isMissing(double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b == kMissingBits64;
}
inline bool isMissing(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b == kMissingBits32;
}

// ---- arrays that are either owned or views into a mapped file -------------------------
template <class T>
class Array {
public:
    Array() = default;
    explicit Array(std::vector<T> v) {
        auto owned = std::make_shared<std::vector<T>>(std::move(v));
        data_ = owned->data();
        size_ = owned->size();
        keep_ = std::move(owned);
    }
    Array(const T* data, size_t n, std::shared_ptr<const void> keepAlive)
        : data_(data), size_(n), keep_(std::move(keepAlive)) {}

    const T* data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const T& operator[](size_t i) const { return data_[i]; }
    std::span<const T> span() const { return {data_, size_}; }
    std::span<const T> span(size_t from, size_t n) const { return {data_ + from, n}; }
    // [from, from + n) of this array, sharing its storage (no copy).
    Array slice(size_t from, size_t n) const { return Array(data_ + from, n, keep_); }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }
private:
    const T* data_ = nullptr;
    size_t size_ = 0;
    std::shared_ptr<const void> keep_;
};

// A floating column stored as float32 or float64.
class Column {
public:
    enum class Type { F32, F64 };
    Column() = default;
    explicit Column(Array<float> a) : type_(Type::F32), f32_(std::move(a)) {}
    explicit Column(Array<double> a) : type_(Type::F64), f64_(std::move(a)) {}

    Type type() const { return type_; }
    size_t size() const { return type_ == Type::F32 ? f32_.size() : f64_.size(); }
    bool empty() const { return size() == 0; }
    double operator[](size_t i) const {
        if (type_ == Type::F32) {
            float f = f32_[i];
            return isMissing(f) ? missingDouble() : double(f);
        }
        return f64_[i];
    }
    // Calls f(std::span<const float>) or f(std::span<const double>) over [from, from+n).
    template <class F>
    decltype(auto) visit(F&& f, size_t from, size_t n) const {
        if (type_ == Type::F32)
            return f(f32_.span(from, n));
        return f(f64_.span(from, n));
    }
    template <class F>
    decltype(auto) visit(F&& f) const { return visit(std::forward<F>(f), 0, size()); }
    size_t bytes() const { return type_ == Type::F32 ? size() * 4 : size() * 8; }
    // [from, from + n), sharing the storage (no copy).
    Column slice(size_t from, size_t n) const {
        return type_ == Type::F32 ? Column(f32_.slice(from, n)) : Column(f64_.slice(from, n));
    }

private:
    Type type_ = Type::F64;
    Array<float> f32_;
    Array<double> f64_;
};

// Top-k of one kernel: for every token, k ids and their log-probs, most likely first.
struct TopK {
    int k = 0;               // 0 = absent
    Array<int32_t> ids;      // M * k, row-major
    Column logp;             // M * k; missing entries are missingDouble()
    bool present() const { return k > 0; }
};

// Full logits for a subset of token positions, row-major P x V per kernel.
struct Logits {
    Array<int64_t> rows;     // P token indices into the flat token arrays, ascending
    int64_t vocab = 0;       // V
    Column train, inf;       // P * V each
    bool present() const { return vocab > 0 && !rows.empty(); }
};

// Slice labels: K keys; each sequence has one code per key (-1 = unlabeled).
struct SliceTable {
    std::vector<std::string> keys;                 // K
    std::vector<std::vector<std::string>> values;  // per key, the value strings
    std::vector<int32_t> codes;                    // N * K, row-major
    int keyIndex(const std::string& key) const;
    // The label of sequence s for key index k, or nullptr when unlabeled.
    const std::string* label(size_t s, size_t k) const;
};

// Training steps (SPEC 7) live in the slice table as the key "step", whose values are the
// steps in decimal ("0", "12"): so `per_slice: step` and `where: {step: [3, 4]}` work like
// any other key. Readers put the JSON Lines `step` key, the safetensors `step` tensor and
// a trainer export's step there; writers turn it back into those.
inline constexpr const char* kStepKey = "step";

// A step label as a number: a non-negative decimal integer without sign or leading zeros
// (what readers store); nullopt for anything else.
std::optional<int64_t> stepNumber(std::string_view label);

struct Run {
    std::string path;            // the file it came from ("" for a generated run)
    nlohmann::json header;       // SPEC 1.3 (may be null)
    std::vector<std::string> ids;   // N sequence ids
    Array<int64_t> offsets;      // N + 1
    Array<int32_t> tokens;       // M
    Column lpTrain, lpInf;       // M each
    TopK topkTrain, topkInf;
    Logits logits;
    std::vector<double> rewardTrain, rewardInf;   // N each or empty; missing = missingDouble()
    SliceTable slices;
    std::vector<nlohmann::json> runtime;          // N objects, or empty
    // Optional per-token text: token i is textPool[textOffsets[i] .. textOffsets[i+1]).
    std::string textPool;
    std::vector<uint64_t> textOffsets;            // M + 1 or empty

    size_t sequenceCount() const { return ids.size(); }
    size_t tokenCount() const { return tokens.size(); }
    size_t seqBegin(size_t s) const { return size_t(offsets[s]); }
    size_t seqEnd(size_t s) const { return size_t(offsets[s + 1]); }
    size_t seqLength(size_t s) const { return seqEnd(s) - seqBegin(s); }
    size_t maxLength() const;
    bool hasText() const { return !textOffsets.empty(); }
    std::string_view tokenText(size_t i) const;
    // Index of the sequence that holds flat token index i (binary search over offsets).
    size_t sequenceOf(size_t tokenIndex) const;
    // Which kernel's top-k/logits exist, for users and for metric support.
    bool hasTopK() const { return topkTrain.present() && topkInf.present(); }
    bool hasLogits() const { return logits.present(); }
    bool hasRewards() const { return !rewardTrain.empty() && !rewardInf.empty(); }
    // Each sequence's step (N entries, -1 = none), or empty when the run has no step key or a
    // label of it is not a step number (a user's own slice named "step").
    std::vector<int64_t> steps() const;
    // Rough resident size of the loaded data, for the memory targets.
    size_t approxBytes() const;
    // Checks the invariants every loader must establish; throws std::logic_error.
    void checkInvariants() const;
};

// The run of some of its sequences (indices ascending), every per-token and per-sequence
// array copied for them; the header, slice keys and values are kept (`kcx replay` evaluates
// a contract on each step's sequences alone).
Run subsetRun(const Run& run, const std::vector<size_t>& sequences);

// Progress and cancellation without Qt: called with a fraction in [0, 1]; returning
// false asks the work to stop, which it does by throwing kcx::Cancelled.
using Progress = std::function<bool(double)>;
struct Cancelled : std::exception {
    const char* what() const noexcept override { return "cancelled"; }
};
inline void report(const Progress& p, double f) {
    if (p && !p(f))
        throw Cancelled{};
}

}  // namespace kcx
