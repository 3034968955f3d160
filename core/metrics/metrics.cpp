#include "core/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/base/parallel.h"
#include "core/metrics/derived_slices.h"
#include "core/metrics/logit_row_fns.h"
#include "core/metrics/metrics_kernels.h"
#include "core/metrics/quantile.h"

namespace kcx {

const std::vector<MetricInfo>& metricCatalog() {
    using L = MetricLevel;
    static const std::vector<MetricInfo> catalog = {
        {"log_ratio", L::Token, "logprobs", "r = lp_train - lp_inf, the log importance ratio"},
        {"abs_log_ratio", L::Token, "logprobs", "|r|"},
        {"ratio", L::Token, "logprobs", "w = exp(r) = pi_train / pi_inf"},
        {"prob_diff", L::Token, "logprobs", "|exp(lp_train) - exp(lp_inf)|"},
        {"k1", L::Token, "logprobs", "-r: unbiased KL(inf||train) estimator"},
        {"k2", L::Token, "logprobs", "r^2 / 2"},
        {"k3", L::Token, "logprobs", "(w - 1) - r: unbiased, never negative"},
        {"chi2", L::Token, "logprobs", "w^2 - 1: its mean estimates the chi-squared divergence"},
        {"clip_excess", L::Token, "logprobs", "1 when w is outside [1-c, 1+c] (PPO clip c)"},
        {"tv_lower", L::Token, "topk|logits", "certified lower bound on TV from the top-k lists"},
        {"kl_lower", L::Token, "topk|logits", "certified lower bound on KL(train||inf) from the top-k lists"},
        {"top1_agree", L::Token, "topk|logits", "1 when both kernels rank the same token first"},
        {"tv", L::Token, "logits", "total variation between the two softmaxes"},
        {"kl_train_inf", L::Token, "logits", "KL(train||inf)"},
        {"kl_inf_train", L::Token, "logits", "KL(inf||train)"},
        {"js", L::Token, "logits", "Jensen-Shannon divergence (nats)"},
        {"max_abs_logit_diff", L::Token, "logits", "max |z - z'|"},
        {"logit_drift", L::Token, "logits", "(max d - min d) / 2 with d = z - z' (shift-invariant)"},
        {"entropy_train", L::Token, "logits", "entropy of the train softmax"},
        {"entropy_inf", L::Token, "logits", "entropy of the inference softmax"},
        {"entropy_diff", L::Token, "logits", "entropy_inf - entropy_train"},
        {"seq_log_ratio", L::Sequence, "logprobs", "sum of r over the sequence"},
        {"seq_abs_log_ratio", L::Sequence, "logprobs", "|sum of r|"},
        {"seq_max_abs_log_ratio", L::Sequence, "logprobs", "max |r| over the sequence"},
        {"seq_mean_abs_log_ratio", L::Sequence, "logprobs", "mean |r| over the sequence"},
        {"seq_geo_ratio", L::Sequence, "logprobs", "exp(mean r)"},
        {"seq_ratio", L::Sequence, "logprobs", "exp(sum r), clamped at +-20 in log space"},
        {"reward_diff", L::Sequence, "rewards", "reward_inf - reward_train"},
        {"length", L::Sequence, "tokens", "response length T"},
        {"ess", L::Run, "logprobs", "effective sample size of the token ratios, in (0, 1]"},
        {"prob_pearson", L::Run, "logprobs", "Pearson correlation of p_train and p_inf over tokens"},
        {"log_ppl_diff", L::Run, "logprobs", "mean over sequences of mean(lp_inf) - mean(lp_train)"},
    };
    return catalog;
}

const MetricInfo* findMetric(std::string_view name) {
    for (const auto& m : metricCatalog())
        if (m.name == name)
            return &m;
    return nullptr;
}

const char* levelName(MetricLevel level) {
    switch (level) {
    case MetricLevel::Token: return "token";
    case MetricLevel::Sequence: return "sequence";
    case MetricLevel::Run: return "run";
    }
    return "?";
}

Summary summarize(const ValueSource& values, int threads, std::optional<uint64_t> count) {
    Summary s;
    double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
    const int t = resolveThreads(threads);
    const size_t chunks = values.blocks();   // not by thread count: the same sum everywhere
    std::vector<double> sums(chunks, 0), los(chunks, lo), his(chunks, hi);
    std::vector<uint64_t> counts(chunks, 0);
    // Each block summed alone, in order; the workers take runs of blocks (and computed
    // values need one buffer per worker, not one per block).
    parallelChunks(chunks, size_t(t) * 4, t, [&](size_t, size_t cb, size_t ce) {
        std::vector<double> buffer(values.fill ? kReduceBlock : 0);
        for (size_t c = cb; c < ce; ++c) {
            const size_t b = values.blockBegin(c), e = values.blockBegin(c + 1);
            const double* x = values.fill ? buffer.data() : values.data + b;
            if (values.fill)
                values.fill(c, b, e, buffer.data());
            double sm = 0, l = los[c], h = his[c];
            uint64_t n = 0;
            for (size_t i = 0; i < e - b; ++i) {
                const double v = x[i];
                if (v != v)
                    continue;
                sm += v;
                l = std::min(l, v);
                h = std::max(h, v);
                ++n;
            }
            sums[c] = sm;
            los[c] = l;
            his[c] = h;
            counts[c] = n;
        }
    });
    for (size_t c = 0; c < chunks; ++c) {
        sum += sums[c];
        lo = std::min(lo, los[c]);
        hi = std::max(hi, his[c]);
        s.count += counts[c];
    }
    if (count)
        s.count = *count;
    if (s.count == 0)
        return s;
    s.mean = sum / double(s.count);
    s.min = lo;
    s.max = hi;
    const double qs[] = {0.5, 0.99, 0.999};
    const auto q = quantilesType7(values, qs, threads, std::pair{lo, hi});
    s.p50 = q[0];
    s.p99 = q[1];
    s.p999 = q[2];
    return s;
}

Summary summarize(const MetricValues& v, int threads) {
    if (v.count == 0) {
        Summary s;
        s.missing = v.missing;
        s.nonfinite = v.nonfinite;
        return s;
    }
    Summary s = summarize(ValueSource::of(v.values), threads, v.count);
    s.missing = v.missing;
    s.nonfinite = v.nonfinite;
    return s;
}

MetricEngine::MetricEngine(std::shared_ptr<const Run> run, MetricOptions options)
    : run_(std::move(run)), options_(options) {}

MetricEngine::~MetricEngine() = default;

DerivedSlices& MetricEngine::derived() {
    std::lock_guard lock(mutex_);
    if (!derived_)
        derived_ = std::make_unique<DerivedSlices>(*this);
    return *derived_;
}

void MetricEngine::clear() {
    std::lock_guard lock(mutex_);
    cache_.clear();
}

void MetricEngine::release(std::string_view name) {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(name); it != cache_.end()) {
        if (it->second.use_count() == 1 && it->second->values.capacity() > spare_.capacity())
            spare_ = std::move(it->second->values);
        cache_.erase(it);
    }
}

Summary MetricEngine::summary(std::string_view name, const Progress& progress) {
    bool cached = false;
    {
        std::lock_guard lock(mutex_);
        cached = cache_.count(name) > 0;
    }
    if (!cached && detail::logprobStreams(name)) {
        report(progress, 0.0);
        return detail::logprobSummary(*run_, name, options_);
    }
    return summarize(*get(name, progress), options_.threads);
}

std::optional<MetricValues> MetricEngine::take(std::string_view name, const Progress& progress) {
    get(name, progress);   // computed and cached; the returned reference is dropped at once
    std::lock_guard lock(mutex_);
    const auto it = cache_.find(name);
    if (it == cache_.end() || it->second.use_count() != 1)
        return std::nullopt;
    std::optional<MetricValues> out(std::move(*it->second));
    cache_.erase(it);
    return out;
}

std::shared_ptr<const MetricValues> MetricEngine::get(std::string_view name, const Progress& progress) {
    if (!findMetric(name))
        throw std::invalid_argument("unknown metric '" + std::string(name) + "'");
    std::shared_ptr<std::mutex> computing;
    {
        std::lock_guard lock(mutex_);
        if (auto it = cache_.find(name); it != cache_.end())
            return it->second;
        auto& m = computing_[std::string(name)];
        if (!m)
            m = std::make_shared<std::mutex>();
        computing = m;
    }
    // One computation per metric at a time: the window's evaluation and its heatmap ask for
    // the same array at once, and both computed it (twice the work and the memory, on a
    // machine with two cores). The second waits and finds it cached; if the first was
    // cancelled, the second computes it.
    std::lock_guard once(*computing);
    {
        std::lock_guard lock(mutex_);
        if (auto it = cache_.find(name); it != cache_.end())
            return it->second;
    }
    computeGroup(name, progress);
    std::lock_guard lock(mutex_);
    return cache_.at(std::string(name));
}

MetricEngine::Moments MetricEngine::moments(std::string_view name, const Progress& progress) {
    {
        std::lock_guard lock(mutex_);
        if (auto it = moments_.find(name); it != moments_.end())
            return it->second;
    }
    bool cached = false;
    {
        std::lock_guard lock(mutex_);
        cached = cache_.count(name) > 0;
    }
    auto v = get(name, progress);
    Moments m;
    double sum = 0, mx = -std::numeric_limits<double>::infinity();
    for (double x : v->values)
        if (std::isfinite(x)) {
            sum += x;
            mx = std::max(mx, x);
            ++m.n;
        }
    if (m.n) {
        m.mean = sum / double(m.n);
        m.max = mx;
    }
    if (lean_ && !cached) {
        v.reset();
        release(name);
    }
    std::lock_guard lock(mutex_);
    moments_.emplace(std::string(name), m);
    return m;
}

void MetricEngine::computeGroup(std::string_view name, const Progress& progress) {
    const MetricInfo& info = *findMetric(name);
    std::vector<MetricValues> results;
    const Run& run = *run_;
    // One pass computes a whole group, but per-token arrays take 8 bytes a token each (a
    // 2 GB run with logits would hold ten of them, mostly NaN): keep what was asked for and
    // what the top-k group reads (tv, kl_train_inf, the logits' top-1); the rest is
    // recomputed if it is asked for. Per-sequence arrays are small: all kept.
    // When the logits dwarf the arrays (rows of tens of thousands of entries on a minority
    // of tokens: every run that has logits at all), the whole group is kept: a second
    // pass over the logits (2 exp per entry) costs far more than ten arrays of M doubles,
    // and `metrics --metrics tv,kl_train_inf,logit_drift` made two (issue 17).
    const bool logitsDwarfArrays =
        info.needs == "logits" && run.hasLogits() &&
        double(detail::kLogitCount) * 8.0 * double(run.tokenCount()) <=
            0.125 * double(run.logits.rows.size()) * double(run.logits.vocab) * 8.0;
    const auto keep = [&](const std::string& n) {
        if (n == name || info.level != MetricLevel::Token || logitsDwarfArrays)
            return true;
        return info.needs == "logits" && run.hasLogits() &&
               (n == "tv" || n == "kl_train_inf" || n == detail::kLogitTop1);
    };
    if (info.needs == "logits") {
        results = detail::logitMetrics(run, options_, progress, name == "js", keep);
    } else if (info.needs == "topk|logits") {
        // The exact full-logit values win where logits exist, so those come first (without
        // logits they are never read: no arrays of NaN for them).
        static const MetricValues none;
        std::shared_ptr<const MetricValues> tv, kl, top1;
        if (run.hasLogits()) {
            tv = get("tv", progress);
            kl = get("kl_train_inf", progress);
            std::lock_guard lock(mutex_);
            top1 = cache_.at(detail::kLogitTop1);
        }
        results = detail::topkMetrics(run, options_, tv ? *tv : none, kl ? *kl : none, top1 ? *top1 : none, progress);
    } else if (info.level == MetricLevel::Sequence) {
        results = detail::sequenceMetrics(run, options_, progress);
    } else if (info.level == MetricLevel::Run) {
        results = detail::runMetrics(run, name == "prob_pearson", options_, progress);
    } else {
        std::vector<double> buffer;
        {
            std::lock_guard lock(mutex_);
            buffer.swap(spare_);
        }
        results.push_back(detail::logprobMetric(run, name, options_, progress, std::move(buffer)));
    }
    std::lock_guard lock(mutex_);
    for (auto& r : results) {
        if (!keep(r.name))
            continue;
        std::string key = r.name;
        cache_.emplace(std::move(key), std::make_shared<MetricValues>(std::move(r)));
    }
}

}  // namespace kcx
