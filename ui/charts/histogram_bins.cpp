#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/charts/chart_data.h"

namespace kcx::ui {

uint64_t Histogram::maxCount() const {
    return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

double Histogram::edge(size_t i) const {
    const double n = counts.empty() ? 1.0 : double(counts.size());
    const double e = lo + (hi - lo) * double(i) / n;
    return logX ? std::pow(10.0, e) : e;
}

namespace {

constexpr size_t kChunk = size_t(1) << 20;

// The value on the binned scale, or NaN when the value is not shown (and why, counted).
double binned(double v, bool logX, Histogram& h) {
    if (std::isnan(v)) {
        ++(isMissing(v) ? h.missing : h.nonfinite);
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (std::isinf(v)) {
        ++h.nonfinite;
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (logX) {
        if (v <= 0) {
            ++h.nonpositive;
            return std::numeric_limits<double>::quiet_NaN();
        }
        return std::log10(v);
    }
    return v;
}

}  // namespace

Histogram computeHistogram(std::span<const double> values, int bins, bool logX, const Progress& progress) {
    Histogram h;
    h.logX = logX;
    bins = std::max(bins, 1);
    // Pass 1: the range, and what is left out.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (size_t from = 0; from < values.size(); from += kChunk) {
        report(progress, 0.5 * double(from) / double(values.size()));
        const size_t to = std::min(values.size(), from + kChunk);
        for (size_t i = from; i < to; ++i) {
            const double x = binned(values[i], logX, h);
            if (std::isnan(x))
                continue;
            ++h.shown;
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
    }
    h.counts.assign(size_t(bins), 0);
    if (h.shown == 0) {
        h.lo = 0;
        h.hi = 1;
        return h;
    }
    if (lo == hi) {   // one distinct value: put it in the middle of a unit-wide range
        const double half = logX ? 0.5 : std::max(0.5, 0.5 * std::fabs(lo));
        lo -= half;
        hi += half;
    }
    h.lo = lo;
    h.hi = hi;
    // Pass 2: the counts. The counters of pass 1 are not counted twice.
    Histogram scratch;
    const double scale = double(bins) / (hi - lo);
    for (size_t from = 0; from < values.size(); from += kChunk) {
        report(progress, 0.5 + 0.5 * double(from) / double(values.size()));
        const size_t to = std::min(values.size(), from + kChunk);
        for (size_t i = from; i < to; ++i) {
            const double x = binned(values[i], logX, scratch);
            if (std::isnan(x))
                continue;
            const auto b = std::min(size_t(bins - 1), size_t(std::max(0.0, (x - lo) * scale)));
            ++h.counts[b];
        }
    }
    return h;
}

}  // namespace kcx::ui
