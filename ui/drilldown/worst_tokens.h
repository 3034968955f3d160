// The drill-down's "next worst token": a sequence's positions ranked by |log ratio|
// (|logp_train - logp_inf|, SPEC 2.1), worst first. Ties go to the lower position. A token
// with a missing log-prob or a NaN ratio has no rank; an infinite ratio ranks first.
#pragma once

#include <cstddef>
#include <vector>

#include "core/formats/run.h"

namespace kcx::ui {

class WorstTokens {
public:
    WorstTokens() = default;
    WorstTokens(const Run& run, size_t seq);

    int count() const { return int(order_.size()); }
    int at(int rank) const { return order_[size_t(rank)]; }   // 0 = the worst
    int rankOf(int position) const;                            // -1: not ranked
    // The position ranked just after (next: smaller |log ratio|) or just before (previous:
    // larger) `position`; from an unranked position (or -1) both give the worst. -1 when
    // there is none.
    int next(int position) const;
    int previous(int position) const;

private:
    std::vector<int> order_;   // positions, worst first
    std::vector<int> rank_;    // per position; -1 when not ranked
};

}  // namespace kcx::ui
