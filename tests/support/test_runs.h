// Runs and clauses built in a test from plain numbers, shared by the core tests. Every
// token's id is 1; sequence ids are PREFIX0, PREFIX1, ...
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/formats/run.h"

namespace kcx::test {

// A run from flat per-token log-probs and CSR offsets (offsets.front() == 0).
inline std::shared_ptr<Run> runFromFlat(std::vector<int64_t> offsets, std::vector<double> lpTrain,
                                        std::vector<double> lpInf, const std::string& idPrefix = "s") {
    auto run = std::make_shared<Run>();
    for (size_t s = 0; s + 1 < offsets.size(); ++s)
        run->ids.push_back(std::string(idPrefix).append(std::to_string(s)));
    run->tokens = Array<int32_t>(std::vector<int32_t>(lpTrain.size(), 1));
    run->offsets = Array<int64_t>(std::move(offsets));
    run->lpTrain = Column(Array<double>(std::move(lpTrain)));
    run->lpInf = Column(Array<double>(std::move(lpInf)));
    run->checkInvariants();
    return run;
}

// A run from per-sequence log-probs: train[s] and inf[s] are sequence s's.
inline std::shared_ptr<Run> runFromLogprobs(const std::vector<std::vector<double>>& train,
                                            const std::vector<std::vector<double>>& inf,
                                            const std::string& idPrefix = "s") {
    std::vector<int64_t> off{0};
    std::vector<double> a, b;
    for (size_t s = 0; s < train.size(); ++s) {
        off.push_back(off.back() + int64_t(train[s].size()));
        a.insert(a.end(), train[s].begin(), train[s].end());
        b.insert(b.end(), inf[s].begin(), inf[s].end());
    }
    return runFromFlat(std::move(off), std::move(a), std::move(b), idPrefix);
}

// A run whose log-ratio log p_train - log p_inf is r[s][t] at every token: logp_train = -1
// and logp_inf = -1 - r.
inline std::shared_ptr<Run> runFromRatios(const std::vector<std::vector<double>>& r, const std::string& idPrefix = "s") {
    std::vector<std::vector<double>> train, inf;
    for (const auto& seq : r) {
        train.emplace_back(seq.size(), -1.0);
        inf.emplace_back();
        for (double x : seq)
            inf.back().push_back(-1.0 - x);
    }
    return runFromLogprobs(train, inf, idPrefix);
}

// A numerical clause: AGGREGATE(METRIC) <= max.
inline Clause maxClause(const std::string& id, const std::string& metric, const std::string& aggregate, double max) {
    Clause c;
    c.id = id;
    c.family = Family::Numerical;
    c.metric = metric;
    c.aggregate = parseAggregate(aggregate);
    c.max = Threshold{max, {}};
    return c;
}

}  // namespace kcx::test
