// HeatmapIndex::build: the heatmap's rows, their order and the slice rows' profiles.
#include <algorithm>
#include <stdexcept>

#include "core/heatmap.h"
#include "core/metrics_kernels.h"
#include "core/parallel.h"

namespace kcx {

namespace {

struct SeqStats {
    double sum = 0;
    uint64_t n = 0;
    double min = INFINITY, max = -INFINITY;
};

// Sum, count, min and max of every sequence's values, in parallel over sequences.
std::vector<SeqStats> sequenceStats(const Run& run, const std::vector<double>& v,
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
                if (x != x)
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

size_t sliceKeyOrThrow(const Run& run, const std::string& key) {
    const int k = run.slices.keyIndex(key);
    if (k < 0)
        throw std::invalid_argument("the run has no slice key '" + key + "'");
    return size_t(k);
}

// One row per slice value that has sequences, then "(unlabeled)" when some have none.
std::vector<HeatmapRow> sliceValueRows(const Run& run, const std::string& key) {
    const size_t k = sliceKeyOrThrow(run, key);
    const size_t keys = run.slices.keys.size();
    const auto& names = run.slices.values[k];
    std::vector<HeatmapRow> rows(names.size() + 1);
    for (size_t i = 0; i < names.size(); ++i)
        rows[i].label = names[i];
    rows.back().label = "(unlabeled)";
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        const int32_t code = run.slices.codes[s * keys + k];
        rows[code < 0 ? names.size() : size_t(code)].sequences.push_back(uint32_t(s));
    }
    std::erase_if(rows, [](const HeatmapRow& r) { return r.sequences.empty(); });
    return rows;
}

std::vector<HeatmapRow> sequenceRows(const Run& run, const HeatmapRowSpec& spec) {
    std::vector<HeatmapRow> rows;
    int32_t code = -1;
    size_t k = 0;
    if (spec.mode == HeatmapRows::SequencesOfSlice) {
        k = sliceKeyOrThrow(run, spec.sliceKey);
        const auto& names = run.slices.values[k];
        const auto it = std::find(names.begin(), names.end(), spec.sliceValue);
        if (it == names.end())
            throw std::invalid_argument("slice '" + spec.sliceKey + "' has no value '" +
                                        spec.sliceValue + "'");
        code = int32_t(it - names.begin());
    }
    const size_t keys = run.slices.keys.size();
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        if (code >= 0 && run.slices.codes[s * keys + k] != code)
            continue;
        HeatmapRow r;
        r.label = run.ids[s];
        r.sequences = {uint32_t(s)};
        rows.push_back(std::move(r));
    }
    return rows;
}

}  // namespace

std::shared_ptr<const HeatmapIndex> HeatmapIndex::build(std::shared_ptr<const Run> run,
                                                        std::shared_ptr<const MetricValues> values,
                                                        const HeatmapRowSpec& spec,
                                                        const Progress& progress, int threads) {
    if (!run || !values)
        throw std::invalid_argument("heatmap: no run or no values");
    if (values->level != MetricLevel::Token || values->values.size() != run->tokenCount())
        throw std::invalid_argument("heatmap: '" + values->name + "' is not a per-token metric of this run");
    auto index = std::make_shared<HeatmapIndex>();
    index->run_ = run;
    index->values_ = values;
    index->spec_ = spec;
    const bool slices = spec.mode == HeatmapRows::SliceValues;
    index->rows_ = slices ? sliceValueRows(*run, spec.sliceKey) : sequenceRows(*run, spec);

    // Half the progress for the statistics, half for the profiles.
    const auto half = [&](double lo) -> Progress {
        if (!progress)
            return {};
        return [&progress, lo](double f) { return progress(lo + f / 2); };
    };
    const auto stats = sequenceStats(*run, values->values, half(0), threads);
    double mn = INFINITY, mx = -INFINITY;
    for (auto& row : index->rows_) {
        double sum = 0;
        for (uint32_t s : row.sequences) {
            const SeqStats& st = stats[s];
            sum += st.sum;
            row.n += st.n;
            row.length = std::max(row.length, run->seqLength(s));
            mn = std::min(mn, st.min);
            mx = std::max(mx, st.max);
        }
        row.score = row.n ? sum / double(row.n) : NAN;
        index->maxLength_ = std::max(index->maxLength_, row.length);
    }
    if (mn <= mx) {
        index->min_ = mn;
        index->max_ = mx;
    }
    if (!slices) {
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

    // Slice rows: per row and position, sum/count/max over the row's sequences. Threads
    // take disjoint position ranges, so every profile entry has one writer.
    size_t total = 0;
    for (auto& row : index->rows_) {
        row.profile = total;
        total += row.length;
    }
    index->profSum_.assign(total, 0.0);
    index->profN_.assign(total, 0);
    index->profMax_.assign(total, NAN);
    const auto& v = values->values;
    const size_t chunks = std::max<size_t>(1, detail::chunkCount(run->tokenCount(), threads));
    const Progress second = half(0.5);
    detail::ChunkProgress prog(second, chunks);
    parallelChunks(index->maxLength_, chunks, threads, [&](size_t, size_t p0, size_t p1) {
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
        prog.done();
    });
    report(progress, 1);
    return index;
}

std::string HeatmapIndex::sliceText(size_t r) const {
    const SliceTable& st = run_->slices;
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
