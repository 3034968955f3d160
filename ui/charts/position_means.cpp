#include <algorithm>
#include <cmath>

#include "ui/charts/chart_data.h"

namespace kcx::ui {

PositionMeans computePositionMeans(const Run& run, std::span<const double> tokenValues, int sliceKey,
                                   size_t maxBins, const Progress& progress) {
    PositionMeans out;
    const size_t n = run.sequenceCount();
    for (size_t s = 0; s < n; ++s)
        out.longest = std::max(out.longest, run.seqLength(s));
    maxBins = std::max<size_t>(maxBins, 1);
    out.binWidth = std::max<size_t>(1, (out.longest + maxBins - 1) / maxBins);
    const size_t bins = std::max<size_t>(1, (out.longest + out.binWidth - 1) / out.binWidth);

    // Groups: the key's values, then "(unlabeled)"; or a single "all".
    const bool bySlice = sliceKey >= 0 && size_t(sliceKey) < run.slices.keys.size();
    const size_t labelled = bySlice ? run.slices.values[size_t(sliceKey)].size() : 0;
    const size_t groups = bySlice ? labelled + 1 : 1;
    std::vector<double> sum(groups * bins, 0.0);
    std::vector<uint64_t> count(groups * bins, 0);

    const size_t keys = run.slices.keys.size();
    for (size_t s = 0; s < n; ++s) {
        if (s % 4096 == 0)
            report(progress, double(s) / double(std::max<size_t>(n, 1)));
        size_t g = 0;
        if (bySlice) {
            const int32_t code = run.slices.codes[s * keys + size_t(sliceKey)];
            g = code < 0 ? labelled : size_t(code);
        }
        const size_t begin = run.seqBegin(s), end = std::min(run.seqEnd(s), tokenValues.size());
        for (size_t i = begin; i < end; ++i) {
            const double v = tokenValues[i];
            if (!std::isfinite(v))
                continue;
            const size_t cell = g * bins + (i - begin) / out.binWidth;
            sum[cell] += v;
            ++count[cell];
        }
    }

    for (size_t g = 0; g < groups; ++g) {
        PositionSeries series;
        series.label = !bySlice ? "all" : g < labelled ? run.slices.values[size_t(sliceKey)][g] : "(unlabeled)";
        for (size_t b = 0; b < bins; ++b) {
            const size_t cell = g * bins + b;
            if (count[cell] == 0)
                continue;
            series.x.push_back(double(b * out.binWidth) + 0.5 * double(out.binWidth - 1));
            series.mean.push_back(sum[cell] / double(count[cell]));
            series.count.push_back(count[cell]);
        }
        if (!series.x.empty())
            out.series.push_back(std::move(series));
    }
    return out;
}

}  // namespace kcx::ui
