#include <algorithm>
#include <cmath>

#include "core/heatmap/heatmap.h"
#include "ui/charts/chart_data.h"

namespace kcx::ui {

namespace {

// The narrowest bin width (from `width` up) at which at least 3 in 4 non-empty
// (group, bin) cells have `few` values; perPosition[g * longest + t] counts values.
size_t widthForFew(const std::vector<uint64_t>& perPosition, size_t groups, size_t longest, size_t width,
                   uint32_t few) {
    for (; width < longest; width = std::max(width + 1, width * 5 / 4)) {
        size_t nonEmpty = 0, enough = 0;
        for (size_t g = 0; g < groups; ++g)
            for (size_t b = 0; b * width < longest; ++b) {
                uint64_t n = 0;
                for (size_t t = b * width; t < std::min(longest, (b + 1) * width); ++t)
                    n += perPosition[g * longest + t];
                nonEmpty += n > 0;
                enough += n >= few;
            }
        if (enough * 4 >= nonEmpty * 3)
            break;
    }
    return std::min(width, std::max<size_t>(longest, 1));
}

}  // namespace

PositionMeans computePositionMeans(const Run& run, std::span<const double> tokenValues, int sliceKey,
                                   size_t maxBins, const Progress& progress, const uint8_t* scope,
                                   const PositionStatistic& statistic) {
    PositionMeans out;
    const size_t n = run.sequenceCount();
    for (size_t s = 0; s < n; ++s)
        out.longest = std::max(out.longest, run.seqLength(s));
    maxBins = std::max<size_t>(maxBins, 1);
    out.binWidth = std::max<size_t>(1, (out.longest + maxBins - 1) / maxBins);

    // Groups: the key's values, then "(unlabeled)"; or a single "all".
    const bool bySlice = sliceKey >= 0 && size_t(sliceKey) < run.slices.keys.size();
    const size_t labelled = bySlice ? run.slices.values[size_t(sliceKey)].size() : 0;
    const size_t groups = bySlice ? labelled + 1 : 1;
    const size_t keys = run.slices.keys.size();
    auto groupOf = [&](size_t s) {
        if (!bySlice)
            return size_t(0);
        const int32_t code = run.slices.codes[s * keys + size_t(sliceKey)];
        return code < 0 ? labelled : size_t(code);
    };
    auto counts = [&](size_t i) { return std::isfinite(tokenValues[i]) && (!scope || scope[i]); };

    const bool quantile = statistic.kind == PositionStatistic::Kind::Quantile;
    if (quantile && statistic.fewBelow > 0 && out.longest > 0) {
        std::vector<uint64_t> perPosition(groups * out.longest, 0);
        for (size_t s = 0; s < n; ++s) {
            const size_t g = groupOf(s), begin = run.seqBegin(s), end = std::min(run.seqEnd(s), tokenValues.size());
            for (size_t i = begin; i < end; ++i)
                perPosition[g * out.longest + (i - begin)] += counts(i);
        }
        out.binWidth = widthForFew(perPosition, groups, out.longest, out.binWidth, statistic.fewBelow);
    }
    const size_t bins = std::max<size_t>(1, (out.longest + out.binWidth - 1) / out.binWidth);
    std::vector<double> sum(groups * bins, 0.0);
    std::vector<uint64_t> count(groups * bins, 0), above(groups * bins, 0);
    std::vector<std::vector<double>> kept(quantile ? groups * bins : 0);

    for (size_t s = 0; s < n; ++s) {
        if (s % 4096 == 0)
            report(progress, double(s) / double(std::max<size_t>(n, 1)));
        const size_t g = groupOf(s);
        const size_t begin = run.seqBegin(s), end = std::min(run.seqEnd(s), tokenValues.size());
        for (size_t i = begin; i < end; ++i) {
            if (!counts(i))
                continue;
            const double v = tokenValues[i];
            const size_t cell = g * bins + (i - begin) / out.binWidth;
            sum[cell] += v;
            ++count[cell];
            above[cell] += v > statistic.level;
            if (quantile)
                kept[cell].push_back(v);
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
            double value = sum[cell] / double(count[cell]);
            if (quantile)
                value = cellQuantile(kept[cell].data(), kept[cell].size(), statistic.q);
            else if (statistic.kind == PositionStatistic::Kind::ShareAbove)
                value = double(above[cell]) / double(count[cell]);
            series.mean.push_back(value);
            series.count.push_back(count[cell]);
            out.fewBins += count[cell] < statistic.fewBelow;
        }
        if (!series.x.empty())
            out.series.push_back(std::move(series));
    }
    return out;
}

}  // namespace kcx::ui
