// HeatmapIndex::build: the heatmap's rows, their order and the slice rows' profiles.
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "core/base/parallel.h"
#include "core/heatmap/heatmap.h"
#include "core/metrics/derived_slices.h"
#include "core/metrics/metrics_kernels.h"

namespace kcx {

namespace {

struct SeqStats {
    double sum = 0;
    uint64_t n = 0;
    double min = INFINITY, max = -INFINITY;
};

// Sum, count, min and max of every sequence's values (only the tokens with mask >= 0 when
// there is a mask), in parallel over sequences.
std::vector<SeqStats> sequenceStats(const Run& run, const std::vector<double>& v, const int32_t* mask,
                                    const Progress& progress, int threads) {
    const size_t n = run.sequenceCount();
    std::vector<SeqStats> out(n);
    const size_t chunks = detail::chunkCount(run.tokenCount(), threads);
    detail::ChunkProgress prog(progress, chunks);
    parallelChunks(n, chunks, threads, [&](size_t, size_t b, size_t e) {
        for (size_t s = b; s < e; ++s) {
            SeqStats st;
            for (size_t i = run.seqBegin(s), end = run.seqEnd(s); i < end; ++i) {
                const double x = v[i];
                if (x != x || (mask && mask[i] < 0))
                    continue;
                st.sum += x;
                ++st.n;
                st.min = std::min(st.min, x);
                st.max = std::max(st.max, x);
            }
            out[s] = st;
        }
        prog.done();
    });
    return out;
}

// The codes of one slice key, labeled or derived.
struct KeyCodes {
    std::string key;
    bool perToken = false;
    std::vector<std::string> values;
    const int32_t* labeled = nullptr;   // labeled: codes[s * stride]
    size_t stride = 1;
    std::shared_ptr<const DerivedCodes> derived;
    // The ranges discovery searches (core/discover/discover.h): "positions" "[a, b)" (a
    // token's position in its sequence) and "step" "≥ s"; code 0 inside, -1 outside.
    const Run* run = nullptr;
    std::optional<std::pair<int64_t, int64_t>> positions;
    std::optional<int64_t> stepFrom;
    std::vector<int64_t> steps;
    int code(size_t s, size_t i) const {
        if (positions) {
            const int64_t p = int64_t(i - run->seqBegin(s));
            return p >= positions->first && p < positions->second ? 0 : -1;
        }
        if (stepFrom)
            return steps[s] >= *stepFrom ? 0 : -1;
        if (labeled)
            return labeled[s * stride];
        return derived->code(s, i);
    }
    int codeOf(const std::string& value) const {
        if (positions || stepFrom)
            return 0;
        const auto it = std::find(values.begin(), values.end(), value);
        if (it == values.end())
            throw std::invalid_argument("slice '" + key + "' has no value '" + value + "'");
        return int(it - values.begin());
    }
};

KeyCodes keyCodes(const Run& run, const std::string& key, const DerivedLookup& derived) {
    KeyCodes k;
    k.key = key;
    if (isDerivedKey(key)) {
        if (!derived)
            throw std::invalid_argument("the derived slice key '" + key + "' needs the run's metric engine");
        k.derived = derived(key);   // throws std::invalid_argument when the data cannot support it
        k.perToken = k.derived->level == DerivedLevel::Token;
        k.values = k.derived->values;
        return k;
    }
    const int idx = run.slices.keyIndex(key);
    if (idx < 0)
        throw std::invalid_argument("the run has no slice key '" + key + "'");
    k.values = run.slices.values[size_t(idx)];
    k.stride = run.slices.keys.size();
    k.labeled = run.slices.codes.data() + idx;
    return k;
}

// Where each sequence (seqRow) or each token (tokenRow) goes: a row index, -1 = nowhere.
struct Assignment {
    std::vector<std::string> labels;
    bool perToken = false;
    std::vector<int32_t> seqRow, tokenRow;
};

// Fills seqRow or tokenRow with f(s, i) (i = the run index of a token; per sequence: the
// sequence's first token, unused by per-sequence keys).
template <class F>
void assign(const Run& run, Assignment& a, F f) {
    const size_t N = run.sequenceCount();
    if (a.perToken) {
        a.tokenRow.assign(run.tokenCount(), -1);
        for (size_t s = 0; s < N; ++s)
            for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i)
                a.tokenRow[i] = f(s, i);
    } else {
        a.seqRow.assign(N, -1);
        for (size_t s = 0; s < N; ++s)
            a.seqRow[s] = f(s, run.seqBegin(s));
    }
}

// SliceValues: one row per value, then "(unlabeled)" for sequences or tokens with none.
Assignment sliceValueRows(const Run& run, const KeyCodes& k) {
    Assignment a;
    a.labels = k.values;
    a.labels.push_back("(unlabeled)");
    a.perToken = k.perToken;
    const int32_t none = int32_t(k.values.size());
    assign(run, a, [&](size_t s, size_t i) {
        const int c = k.code(s, i);
        return c < 0 ? none : int32_t(c);
    });
    return a;
}

// Conditions: row 0 where every condition holds, row 1 the rest of the run.
Assignment conditionRows(const Run& run, const HeatmapRowSpec& spec, const DerivedLookup& derived) {
    if (spec.conditions.empty())
        throw std::invalid_argument("heatmap: a finding's rows need at least one condition");
    std::vector<std::pair<KeyCodes, int>> conds;
    Assignment a;
    for (const auto& [key, value] : spec.conditions) {
        KeyCodes k;
        long long lo = 0, hi = 0, from = 0;
        if (key == "positions" && std::sscanf(value.c_str(), "[%lld, %lld)", &lo, &hi) == 2) {
            k.key = key;
            k.perToken = true;
            k.run = &run;
            k.positions = std::pair<int64_t, int64_t>(lo, hi);
        } else if (key == kStepKey && std::sscanf(value.c_str(), "\xe2\x89\xa5 %lld", &from) == 1) {
            k.key = key;
            k.stepFrom = from;
            k.steps = run.steps();
            if (k.steps.empty())
                throw std::invalid_argument("the run has no steps");
        } else {
            k = keyCodes(run, key, derived);
        }
        const int code = k.codeOf(value);
        a.perToken = a.perToken || k.perToken;
        conds.emplace_back(std::move(k), code);
    }
    a.labels = {conditionsText(spec.conditions), "(rest of the run)"};
    assign(run, a, [&](size_t s, size_t i) {
        for (const auto& [k, code] : conds)
            if (k.code(s, i) != code)
                return int32_t(1);
        return int32_t(0);
    });
    return a;
}

}  // namespace

std::string conditionsText(const std::vector<std::pair<std::string, std::string>>& conditions) {
    std::string out;
    for (const auto& [k, v] : conditions) {
        if (!out.empty())
            out += " \u2227 ";
        out += k + "=" + v;
    }
    return out;
}

std::shared_ptr<const HeatmapIndex> HeatmapIndex::build(std::shared_ptr<const Run> run,
                                                        std::shared_ptr<const MetricValues> values,
                                                        const HeatmapRowSpec& spec,
                                                        const Progress& progress, int threads,
                                                        const DerivedLookup& derived) {
    if (!run || !values)
        throw std::invalid_argument("heatmap: no run or no values");
    if (values->level != MetricLevel::Token || values->values.size() != run->tokenCount())
        throw std::invalid_argument("heatmap: '" + values->name + "' is not a per-token metric of this run");
    auto index = std::make_shared<HeatmapIndex>();
    index->run_ = run;
    index->values_ = values;
    index->spec_ = spec;
    const std::vector<double>& v = values->values;
    const size_t N = run->sequenceCount();

    // Half the progress for the statistics, half for the profiles.
    const auto half = [&](double lo) -> Progress {
        if (!progress)
            return {};
        return [&progress, lo](double f) { return progress(lo + f / 2); };
    };
    double mn = INFINITY, mx = -INFINITY;
    const auto finish = [&] {
        if (mn <= mx) {
            index->min_ = mn;
            index->max_ = mx;
        }
    };

    if (!index->sliceRows()) {
        // Sequence rows: every sequence, or those of one slice value. A per-token key keeps
        // the sequences with at least one such token, and only those tokens count.
        std::optional<KeyCodes> k;
        int code = -1;
        if (spec.mode == HeatmapRows::SequencesOfSlice) {
            k = keyCodes(*run, spec.sliceKey, derived);
            code = k->codeOf(spec.sliceValue);
        }
        if (k && k->perToken) {
            index->tokenRow_.assign(run->tokenCount(), -1);
            for (size_t s = 0; s < N; ++s)
                for (size_t i = run->seqBegin(s); i < run->seqEnd(s); ++i)
                    index->tokenRow_[i] = k->code(s, i) == code ? 0 : -1;
        }
        const int32_t* mask = index->tokenRows();
        for (size_t s = 0; s < N; ++s) {
            bool in = !k;
            if (k && !mask)
                in = k->code(s, run->seqBegin(s)) == code;
            for (size_t i = run->seqBegin(s); mask && !in && i < run->seqEnd(s); ++i)
                in = mask[i] >= 0;
            if (!in)
                continue;
            HeatmapRow r;
            r.label = run->ids[s];
            r.sequences = {uint32_t(s)};
            index->rows_.push_back(std::move(r));
        }
        const auto stats = sequenceStats(*run, v, mask, half(0), threads);
        for (auto& row : index->rows_) {
            const SeqStats& st = stats[row.sequences.front()];
            row.n = st.n;
            row.score = st.n ? st.sum / double(st.n) : NAN;
            row.length = run->seqLength(row.sequences.front());
            index->maxLength_ = std::max(index->maxLength_, row.length);
            mn = std::min(mn, st.min);
            mx = std::max(mx, st.max);
        }
        finish();
        // Most divergent first; rows without values last; ties in run order.
        std::stable_sort(index->rows_.begin(), index->rows_.end(), [](const HeatmapRow& a, const HeatmapRow& b) {
            const bool an = a.score == a.score, bn = b.score == b.score;
            if (an != bn)
                return an;
            return an && a.score > b.score;
        });
        report(progress, 1);
        return index;
    }

    // Slice rows: which row each sequence (or token) belongs to.
    Assignment a = spec.mode == HeatmapRows::Conditions
                       ? conditionRows(*run, spec, derived)
                       : sliceValueRows(*run, keyCodes(*run, spec.sliceKey, derived));
    std::vector<HeatmapRow> rows(a.labels.size());
    for (size_t r = 0; r < rows.size(); ++r)
        rows[r].label = a.labels[r];
    std::vector<double> sums(rows.size(), 0.0);
    if (!a.perToken) {
        for (size_t s = 0; s < N; ++s)
            if (a.seqRow[s] >= 0)
                rows[size_t(a.seqRow[s])].sequences.push_back(uint32_t(s));
        const auto stats = sequenceStats(*run, v, nullptr, half(0), threads);
        for (size_t r = 0; r < rows.size(); ++r)
            for (uint32_t s : rows[r].sequences) {
                const SeqStats& st = stats[s];
                sums[r] += st.sum;
                rows[r].n += st.n;
                rows[r].length = std::max(rows[r].length, run->seqLength(s));
                mn = std::min(mn, st.min);
                mx = std::max(mx, st.max);
            }
    } else {
        // One pass over the tokens: a row's sequences, length (last position + 1) and sums.
        std::vector<int64_t> last(rows.size(), -1);
        for (size_t s = 0; s < N; ++s) {
            const size_t b = run->seqBegin(s);
            for (size_t t = 0, len = run->seqLength(s); t < len; ++t) {
                const int32_t r = a.tokenRow[b + t];
                if (r < 0)
                    continue;
                HeatmapRow& row = rows[size_t(r)];
                row.length = std::max(row.length, t + 1);
                if (last[size_t(r)] != int64_t(s)) {
                    last[size_t(r)] = int64_t(s);
                    row.sequences.push_back(uint32_t(s));
                }
                const double x = v[b + t];
                if (x != x)
                    continue;
                sums[size_t(r)] += x;
                ++row.n;
                mn = std::min(mn, x);
                mx = std::max(mx, x);
            }
            if ((s & 1023) == 0)
                report(progress, 0.5 * double(s) / double(N));
        }
    }
    // Rows without sequences go; per-token rows are renumbered to match.
    std::vector<int32_t> renumber(rows.size(), -1);
    for (size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].sequences.empty())
            continue;
        rows[r].score = rows[r].n ? sums[r] / double(rows[r].n) : NAN;
        renumber[r] = int32_t(index->rows_.size());
        index->maxLength_ = std::max(index->maxLength_, rows[r].length);
        index->rows_.push_back(std::move(rows[r]));
    }
    if (a.perToken) {
        for (int32_t& r : a.tokenRow)
            if (r >= 0)
                r = renumber[size_t(r)];
        index->tokenRow_ = std::move(a.tokenRow);
    }
    finish();

    // Per row and position, sum/count/max over the row's sequences (tokens). Threads take
    // disjoint position ranges, so every profile entry has one writer.
    size_t total = 0;
    for (auto& row : index->rows_) {
        row.profile = total;
        total += row.length;
    }
    index->profSum_.assign(total, 0.0);
    index->profN_.assign(total, 0);
    index->profMax_.assign(total, NAN);
    const size_t chunks = std::max<size_t>(1, detail::chunkCount(run->tokenCount(), threads));
    const Progress second = half(0.5);
    detail::ChunkProgress prog(second, chunks);
    const auto add = [&](size_t r, size_t t, double x) {
        const size_t p = index->rows_[r].profile + t;
        index->profSum_[p] += x;
        ++index->profN_[p];
        if (!(index->profMax_[p] >= x))
            index->profMax_[p] = x;
    };
    const int32_t* tr = index->tokenRows();
    parallelChunks(index->maxLength_, chunks, threads, [&](size_t, size_t p0, size_t p1) {
        if (tr) {
            for (size_t s = 0; s < N; ++s) {
                const size_t b = run->seqBegin(s), len = run->seqLength(s);
                for (size_t t = p0, e = std::min(p1, len); t < e; ++t) {
                    const double x = v[b + t];
                    if (tr[b + t] >= 0 && x == x)
                        add(size_t(tr[b + t]), t, x);
                }
            }
        } else {
            for (const auto& row : index->rows_) {
                double* sum = index->profSum_.data() + row.profile;
                uint32_t* cnt = index->profN_.data() + row.profile;
                double* max = index->profMax_.data() + row.profile;
                for (uint32_t s : row.sequences) {
                    const size_t b = run->seqBegin(s), len = run->seqLength(s);
                    for (size_t t = p0, e = std::min(p1, len); t < e; ++t) {
                        const double x = v[b + t];
                        if (x != x)
                            continue;
                        sum[t] += x;
                        ++cnt[t];
                        if (!(max[t] >= x))
                            max[t] = x;
                    }
                }
            }
        }
        prog.done();
    });
    report(progress, 1);
    return index;
}

std::string HeatmapIndex::sliceText(size_t r) const {
    const SliceTable& st = run_->slices;
    if (spec_.mode == HeatmapRows::Conditions)
        return rows_[r].label;
    if (sliceRows())
        return spec_.sliceKey + "=" + rows_[r].label;
    const size_t s = rows_[r].sequences.front();
    std::string out;
    for (size_t k = 0; k < st.keys.size(); ++k) {
        const std::string* l = st.label(s, k);
        if (!out.empty())
            out += ", ";
        out += st.keys[k] + "=" + (l ? *l : std::string("(unlabeled)"));
    }
    return out;
}

}  // namespace kcx
