#include "ui/drilldown/worst_tokens.h"

#include <algorithm>
#include <cmath>

namespace kcx::ui {

WorstTokens::WorstTokens(const Run& run, size_t seq) {
    if (seq >= run.sequenceCount())
        return;
    const size_t begin = run.seqBegin(seq), n = run.seqLength(seq);
    std::vector<double> magnitude(n, 0.0);
    rank_.assign(n, -1);
    for (size_t t = 0; t < n; ++t) {
        const double a = run.lpTrain[begin + t], b = run.lpInf[begin + t];
        if (isMissing(a) || isMissing(b))
            continue;
        const double r = std::fabs(a - b);
        if (std::isnan(r))
            continue;
        magnitude[t] = r;
        order_.push_back(int(t));
    }
    std::stable_sort(order_.begin(), order_.end(), [&](int x, int y) { return magnitude[size_t(x)] > magnitude[size_t(y)]; });
    for (size_t k = 0; k < order_.size(); ++k)
        rank_[size_t(order_[k])] = int(k);
}

int WorstTokens::rankOf(int position) const {
    return position >= 0 && size_t(position) < rank_.size() ? rank_[size_t(position)] : -1;
}

int WorstTokens::next(int position) const {
    if (order_.empty())
        return -1;
    const int r = rankOf(position);
    if (r < 0)
        return order_.front();
    return r + 1 < count() ? at(r + 1) : -1;
}

int WorstTokens::previous(int position) const {
    if (order_.empty())
        return -1;
    const int r = rankOf(position);
    if (r < 0)
        return order_.front();
    return r > 0 ? at(r - 1) : -1;
}

}  // namespace kcx::ui
