// Derived slice keys: slices that no label names, computed from the run itself
// (docs/slices.md). They are usable wherever a labeled slice key is: `per_slice`,
// `where`, and slice discovery (core/discover/discover.h).
//
//   derived.pos_bucket      per token     position of the token within its sequence
//   derived.len_bucket      per sequence  length of the sequence
//   derived.p_inf_bucket    per token     exp(logp_inf) of the sampled token
//   derived.entropy_bucket  per token     entropy of the inference distribution (nats)
//   derived.top1_agree      per token     whether both kernels rank the same token first
//   derived.runtime.NAME    per sequence  the runtime field NAME (SPEC 1.1 `runtime`)
//
// Bucket edges are fixed (not fitted to the run), so that a contract means the same thing
// on every run. Value names are plain YAML strings ("pos_1024_4096", "p_lt_1e-3").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metrics/metrics.h"

namespace kcx {

enum class DerivedLevel { Token, Sequence };

inline constexpr std::string_view kDerivedPrefix = "derived.";
inline constexpr std::string_view kDerivedRuntimePrefix = "derived.runtime.";
inline bool isDerivedKey(std::string_view key) { return key.substr(0, kDerivedPrefix.size()) == kDerivedPrefix; }

struct DerivedKeyInfo {
    std::string name;                 // "derived.pos_bucket"
    DerivedLevel level;
    std::vector<std::string> values;  // value names, in code order
    std::string needs;                // "tokens", "logp_inf", "topk|logits", "runtime"
    std::string description;
};

// The fixed derived keys (derived.runtime.NAME depends on the run and is not listed).
const std::vector<DerivedKeyInfo>& derivedCatalog();
const DerivedKeyInfo* findDerivedKey(std::string_view name);

// For the contract parser: an error sentence when `key` (which starts with "derived.") is
// not a derived key, or `value` is not one of its values (runtime values are not checked).
std::optional<std::string> checkDerivedKey(std::string_view key);
std::optional<std::string> checkDerivedValue(std::string_view key, std::string_view value);
// The level of a derived key (runtime keys are per sequence); nullopt when unknown.
std::optional<DerivedLevel> derivedLevel(std::string_view key);

// The bucket functions themselves (code = index into the key's values).
int positionBucket(size_t position);      // [0,64) [64,256) [256,1024) [1024,4096) [4096,inf)
int lengthBucket(size_t length);          // the same edges
int pInfBucket(double logpInf);           // p < 1e-3, < 1e-2, < 0.1, >= 0.1; -1 for NaN
int entropyBucket(double entropy);        // < 0.1, < 1, < 3, >= 3 nats; -1 for NaN
// Bucket edges of positionBucket / lengthBucket: bucket i is [edge[i], edge[i+1]).
inline constexpr size_t kPositionEdges[] = {0, 64, 256, 1024, 4096};

// The codes of one derived key over one run. Token keys have a code per token (M), sequence
// keys a code per sequence (N); -1 = no value (e.g. logp_inf not logged at that token).
struct DerivedCodes {
    std::string key;
    DerivedLevel level = DerivedLevel::Token;
    std::vector<std::string> values;
    std::vector<int8_t> token;        // M (Token)
    std::vector<int32_t> sequence;    // N (Sequence)
    int code(size_t s, size_t tokenIndex) const {
        return level == DerivedLevel::Token ? token[tokenIndex] : sequence[s];
    }
};

// Computes derived codes lazily and caches them. Thread-safe. The engine must outlive it.
class DerivedSlices {
public:
    explicit DerivedSlices(MetricEngine& engine) : engine_(engine) {}

    // The derived keys this run's data support, catalog order then runtime fields by name.
    std::vector<std::string> available();
    // Throws std::invalid_argument for an unknown key, or one the data cannot support.
    std::shared_ptr<const DerivedCodes> get(const std::string& key, const Progress& progress = {});

private:
    MetricEngine& engine_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const DerivedCodes>> cache_;
    std::shared_ptr<DerivedCodes> compute(const std::string& key, const Progress& progress);
};

// The text a runtime value is compared as ("8", "0.5", "vllm-0.6", "true"); "" for null
// or a non-scalar.
std::string runtimeValueText(const nlohmann::json& v);

}  // namespace kcx
