// Derived slice keys (docs/slices.md): fixed buckets computed from the run.
#include "core/metrics/derived_slices.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "core/base/det_math.h"
#include "core/base/parallel.h"

namespace kcx {

namespace {

const char* const kPos = "derived.pos_bucket";
const char* const kLen = "derived.len_bucket";
const char* const kPInf = "derived.p_inf_bucket";
const char* const kEntropy = "derived.entropy_bucket";
const char* const kTop1 = "derived.top1_agree";

// log(1e-3), log(1e-2), log(0.1): p_inf buckets compare the log-prob directly.
const double kLogP[] = {det::log(1e-3), det::log(1e-2), det::log(0.1)};

int bucketOf(size_t x) {
    int b = 0;
    for (size_t i = 1; i < std::size(kPositionEdges); ++i)
        if (x >= kPositionEdges[i])
            b = int(i);
    return b;
}

}  // namespace

const std::vector<DerivedKeyInfo>& derivedCatalog() {
    static const std::vector<DerivedKeyInfo> catalog = {
        {kPos, DerivedLevel::Token, {"pos_0_64", "pos_64_256", "pos_256_1024", "pos_1024_4096", "pos_4096_inf"},
         "tokens", "position of the token within its sequence"},
        {kLen, DerivedLevel::Sequence, {"len_0_64", "len_64_256", "len_256_1024", "len_1024_4096", "len_4096_inf"},
         "tokens", "length of the sequence in tokens"},
        {kPInf, DerivedLevel::Token, {"p_lt_1e-3", "p_1e-3_1e-2", "p_1e-2_1e-1", "p_ge_1e-1"}, "logp_inf",
         "probability of the sampled token under the inference kernel"},
        {kEntropy, DerivedLevel::Token, {"ent_lt_0.1", "ent_0.1_1", "ent_1_3", "ent_ge_3"}, "topk|logits",
         "entropy of the inference distribution in nats (exact from logits, a lower bound from top-k)"},
        {kTop1, DerivedLevel::Token, {"agree", "disagree"}, "topk|logits",
         "whether both kernels rank the same token first"},
    };
    return catalog;
}

const DerivedKeyInfo* findDerivedKey(std::string_view name) {
    for (const auto& k : derivedCatalog())
        if (k.name == name)
            return &k;
    return nullptr;
}

std::optional<DerivedLevel> derivedLevel(std::string_view key) {
    if (const DerivedKeyInfo* k = findDerivedKey(key))
        return k->level;
    if (key.size() > kDerivedRuntimePrefix.size() && key.substr(0, kDerivedRuntimePrefix.size()) == kDerivedRuntimePrefix)
        return DerivedLevel::Sequence;
    return std::nullopt;
}

std::optional<std::string> checkDerivedKey(std::string_view key) {
    if (derivedLevel(key))
        return std::nullopt;
    std::string names;
    for (const auto& k : derivedCatalog())
        names += k.name + ", ";
    std::string msg = "unknown derived slice key '";
    msg.append(key).append("' (expected one of: ").append(names);
    return msg.append("derived.runtime.NAME; see docs/slices.md)");
}

std::optional<std::string> checkDerivedValue(std::string_view key, std::string_view value) {
    const DerivedKeyInfo* k = findDerivedKey(key);
    if (!k || std::find(k->values.begin(), k->values.end(), value) != k->values.end())
        return std::nullopt;
    std::string names;
    for (const auto& v : k->values)
        names += (names.empty() ? "" : ", ") + v;
    std::string msg = "'";   // (appended piecewise: GCC 12 warns falsely on "'" + std::string(...))
    msg.append(value).append("' is not a value of '").append(k->name).append("' (expected one of: ");
    return msg.append(names).append(")");
}

int positionBucket(size_t position) { return bucketOf(position); }
int lengthBucket(size_t length) { return bucketOf(length); }

int pInfBucket(double lp) {
    if (std::isnan(lp))
        return -1;
    int b = 0;
    while (b < 3 && lp >= kLogP[b])
        ++b;
    return b;
}

int entropyBucket(double h) {
    if (std::isnan(h))
        return -1;
    return h < 0.1 ? 0 : h < 1 ? 1 : h < 3 ? 2 : 3;
}

std::string runtimeValueText(const nlohmann::json& v) {
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_boolean())
        return v.get<bool>() ? "true" : "false";
    if (v.is_number_integer())
        return v.dump();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (!std::isfinite(d))
            return "";
        if (d == std::floor(d) && std::fabs(d) < 9e15)
            return std::to_string(int64_t(d));
        // Non-integer numbers (latencies, rates) fall in power-of-two buckets.
        if (d < 0)
            return "r_neg";
        if (d < 1)
            return "r_lt_1";
        int e = 0;
        std::frexp(d, &e);   // d = m 2^e, m in [1/2, 1): exact, unlike floor(log2(d)) near 2^k
        const double lo = std::ldexp(1.0, e - 1);
        return "r_" + std::to_string(int64_t(lo)) + "_" + std::to_string(int64_t(2 * lo));
    }
    return "";
}

std::vector<std::string> DerivedSlices::available() {
    const Run& run = engine_.run();
    std::vector<std::string> out = {kPos, kLen, kPInf};
    if (run.hasLogits() || (run.topkInf.present()))
        out.push_back(kEntropy);
    if (run.hasLogits() || run.hasTopK())
        out.push_back(kTop1);
    std::set<std::string> fields;
    for (const auto& o : run.runtime)
        if (o.is_object())
            for (auto it = o.begin(); it != o.end(); ++it)
                if (!runtimeValueText(it.value()).empty())
                    fields.insert(it.key());
    for (const auto& f : fields)
        out.push_back(std::string(kDerivedRuntimePrefix) + f);
    return out;
}

std::shared_ptr<const DerivedCodes> DerivedSlices::get(const std::string& key, const Progress& progress) {
    {
        std::lock_guard lock(mutex_);
        if (auto it = cache_.find(key); it != cache_.end())
            return it->second;
    }
    auto codes = compute(key, progress);
    std::lock_guard lock(mutex_);
    return cache_.emplace(key, std::move(codes)).first->second;
}

std::shared_ptr<DerivedCodes> DerivedSlices::compute(const std::string& key, const Progress& progress) {
    const Run& run = engine_.run();
    if (auto err = checkDerivedKey(key))
        throw std::invalid_argument(*err);
    auto out = std::make_shared<DerivedCodes>();
    out->key = key;
    const size_t N = run.sequenceCount(), M = run.tokenCount();
    const int threads = engine_.options().threads;
    if (const DerivedKeyInfo* info = findDerivedKey(key)) {
        out->level = info->level;
        out->values = info->values;
    } else {
        out->level = DerivedLevel::Sequence;
    }
    if (key == kLen) {
        out->sequence.resize(N);
        for (size_t s = 0; s < N; ++s)
            out->sequence[s] = lengthBucket(run.seqLength(s));
    } else if (key == kPos) {
        out->token.resize(M);
        parallelChunks(N, std::min<size_t>(N, 64), threads, [&](size_t, size_t b, size_t e) {
            for (size_t s = b; s < e; ++s)
                for (size_t i = run.seqBegin(s), t = 0; i < run.seqEnd(s); ++i, ++t)
                    out->token[i] = int8_t(positionBucket(t));
        });
    } else if (key == kPInf) {
        out->token.resize(M);
        parallelChunks(M, std::min<size_t>(M, 64), threads, [&](size_t, size_t b, size_t e) {
            run.lpInf.visit([&](auto span) {
                for (size_t i = 0; i < span.size(); ++i)
                    out->token[b + i] = int8_t(pInfBucket(isMissing(span[i]) ? NAN : double(span[i])));
            }, b, e - b);
        });
    } else if (key == kTop1) {
        if (!run.hasLogits() && !run.hasTopK())
            throw std::invalid_argument("'" + key + "' needs top-k lists or full logits of both kernels");
        const auto v = engine_.get("top1_agree", progress);
        out->token.resize(M);
        for (size_t i = 0; i < M; ++i)
            out->token[i] = std::isnan(v->values[i]) ? int8_t(-1) : v->values[i] != 0 ? int8_t(0) : int8_t(1);
    } else if (key == kEntropy) {
        if (!run.hasLogits() && !run.topkInf.present())
            throw std::invalid_argument("'" + key + "' needs the inference kernel's top-k lists or full logits");
        out->token.assign(M, -1);
        // From top-k: the entropy of the k listed tokens plus the rest lumped into one outcome,
        // a lower bound (merging outcomes never raises entropy).
        const TopK& tk = run.topkInf;
        if (tk.present()) {
            const size_t k = size_t(tk.k);
            parallelChunks(M, std::min<size_t>(M, 64), threads, [&](size_t, size_t b, size_t e) {
                for (size_t i = b; i < e; ++i) {
                    double h = 0, mass = 0;
                    bool ok = true;
                    for (size_t j = 0; j < k && ok; ++j) {
                        const double lp = tk.logp[i * k + j];
                        if (!std::isfinite(lp)) {
                            ok = lp == -INFINITY;   // a zero probability contributes nothing
                            continue;
                        }
                        const double p = det::exp(lp);
                        mass += p;
                        h -= p * lp;
                    }
                    if (!ok)
                        continue;
                    const double rest = std::max(0.0, 1.0 - mass);
                    if (rest > 0)
                        h -= rest * det::log(rest);
                    out->token[i] = int8_t(entropyBucket(h));
                }
            });
        }
        if (run.hasLogits()) {   // exact where full logits exist
            const auto v = engine_.get("entropy_inf", progress);
            for (size_t r = 0; r < run.logits.rows.size(); ++r) {
                const size_t i = size_t(run.logits.rows[r]);
                const double h = v->values[i];
                if (!std::isnan(h))
                    out->token[i] = int8_t(entropyBucket(h));
            }
        }
    } else {   // derived.runtime.NAME
        const std::string field = key.substr(kDerivedRuntimePrefix.size());
        std::vector<std::string> text(N);
        std::set<std::string> distinct;
        for (size_t s = 0; s < N && s < run.runtime.size(); ++s) {
            const auto& o = run.runtime[s];
            if (o.is_object())
                if (auto it = o.find(field); it != o.end())
                    text[s] = runtimeValueText(*it);
            if (!text[s].empty())
                distinct.insert(text[s]);
        }
        if (distinct.empty())
            throw std::invalid_argument("no sequence has the runtime field '" + field + "' ('" + key + "')");
        // Numbers in numeric order, then strings; names never depend on the other values.
        out->values.assign(distinct.begin(), distinct.end());
        auto num = [](const std::string& s) -> std::optional<double> {
            char* end = nullptr;
            const double d = std::strtod(s.c_str(), &end);
            if (s.empty() || *end)
                return std::nullopt;
            return d;
        };
        std::stable_sort(out->values.begin(), out->values.end(), [&](const std::string& a, const std::string& b) {
            const auto x = num(a), y = num(b);
            if (x && y)
                return *x < *y;
            return bool(x) && !y;
        });
        std::map<std::string, int32_t> index;
        for (size_t v = 0; v < out->values.size(); ++v)
            index[out->values[v]] = int32_t(v);
        out->sequence.resize(N);
        for (size_t s = 0; s < N; ++s)
            out->sequence[s] = text[s].empty() ? -1 : index[text[s]];
    }
    report(progress, 1.0);
    return out;
}

}  // namespace kcx
