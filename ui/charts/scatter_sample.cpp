#include <algorithm>
#include <cmath>
#include <queue>
#include <utility>

#include "ui/charts/chart_data.h"

namespace kcx::ui {

namespace {

constexpr size_t kScatterChunk = size_t(1) << 20;

bool validAt(const Run& run, size_t i) {
    return std::isfinite(run.lpTrain[i]) && std::isfinite(run.lpInf[i]);
}

}  // namespace

ScatterSample sampleScatter(const Run& run, size_t maxPoints, double extremeShare, const Progress& progress) {
    ScatterSample out;
    const size_t m = std::min(run.lpTrain.size(), run.lpInf.size());
    out.total = m;
    maxPoints = std::max<size_t>(maxPoints, 1);
    const size_t k = std::min(maxPoints, size_t(std::max(0.0, extremeShare) * double(maxPoints)));

    // One pass: count the valid tokens and keep the k largest |log ratio| in a min-heap.
    using Entry = std::pair<double, size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> top;
    for (size_t from = 0; from < m; from += kScatterChunk) {
        report(progress, 0.8 * double(from) / double(m));
        const size_t to = std::min(m, from + kScatterChunk);
        for (size_t i = from; i < to; ++i) {
            const double a = run.lpTrain[i], b = run.lpInf[i];
            if (!std::isfinite(a) || !std::isfinite(b))
                continue;
            ++out.valid;
            if (k == 0)
                continue;
            const double r = std::fabs(a - b);
            if (top.size() < k)
                top.emplace(r, i);
            else if (r > top.top().first) {
                top.pop();
                top.emplace(r, i);
            }
        }
    }

    std::vector<size_t> extremes;
    std::vector<size_t> chosen;
    if (out.valid <= maxPoints) {
        for (size_t i = 0; i < m; ++i)
            if (validAt(run, i))
                chosen.push_back(i);
    } else {
        extremes.reserve(top.size());
        for (; !top.empty(); top.pop())
            extremes.push_back(top.top().second);
        std::sort(extremes.begin(), extremes.end());
        // Even steps through all tokens for the rest; invalid ones are skipped, so the
        // count stays within the cap.
        const size_t u = maxPoints - extremes.size();
        chosen = extremes;
        for (size_t j = 0; j < u; ++j) {
            const size_t i = j * m / u;
            if (validAt(run, i))
                chosen.push_back(i);
        }
        std::sort(chosen.begin(), chosen.end());
        chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    }
    report(progress, 0.9);

    out.index = std::move(chosen);
    out.pTrain.reserve(out.index.size());
    out.pInf.reserve(out.index.size());
    out.extreme.reserve(out.index.size());
    for (size_t i : out.index) {
        out.pTrain.push_back(std::exp(run.lpTrain[i]));
        out.pInf.push_back(std::exp(run.lpInf[i]));
        out.extreme.push_back(std::binary_search(extremes.begin(), extremes.end(), i) ? 1 : 0);
    }
    return out;
}

}  // namespace kcx::ui
