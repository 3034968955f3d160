// Slice discovery: where in a run does divergence hide? (docs/slices.md)
//
// For a per-token (or per-sequence) metric, every condition `key = value` over the labeled
// slice keys and the derived keys (core/metrics/derived_slices.h), and conjunctions of up to
// `maxDepth` conditions on different keys, is compared with the rest of the run:
//   effect = mean(slice) - mean(rest), tested one-sided (does the slice exceed the rest?)
// with a normal approximation whose variance treats sequences as the independent units
// (cluster-robust, linearised ratio means: tokens of one sequence are correlated).
// Slices below a minimum support are not tested; the false discovery rate over every
// tested slice is controlled by Benjamini-Hochberg at `q`, and the intervals of the
// selected slices are false-coverage-rate adjusted (Benjamini-Yekutieli 2005).
//
// Cost: one pass over the tokens computes every single condition and every pair (a
// histogram of per-sequence sums by combined code), and a second pass, only for depth 3,
// extends the `extendTop` strongest pairs by a third key.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics/metrics.h"

namespace kcx {

struct DiscoverOptions {
    std::string metric = "abs_log_ratio";
    int maxDepth = 2;              // 1, 2 or 3 conditions
    double q = 0.05;               // Benjamini-Hochberg false discovery rate
    uint64_t minTokens = 200;      // a slice (and its rest) needs this many values ...
    uint64_t minSequences = 20;    // ... from at least this many sequences
    size_t maxValues = 64;         // keys with more values are skipped
    size_t extendTop = 16;         // depth 3: how many pairs are extended
    size_t maxFindings = 20;
    std::vector<std::string> keys; // empty = every labeled key and every derived key the run supports
    // Position ranges that are not bucket edges (issue 20): the dyadic intervals [a·w, (a+1)·w)
    // at every scale w = 2^k whose intervals over the longest sequence number 2 to
    // maxValues, and the adjacent pairs of them ([a·w, (a+2)·w) for every a: the dyadic ones of
    // the next scale and the same shifted by w). A per-token metric only; each interval is a
    // tested slice, counted in the false discovery rate like any other. Conjunctions of two
    // position conditions are not formed (they nest or overlap).
    bool positionRanges = true;
    // Later steps (a run with steps): "step ≥ s" for up to 8 values of s spread over the run's
    // steps (a sequence-level condition, crossed with the others like a label).
    bool stepRanges = true;
    int threads = 0;
};

struct SliceCondition {
    std::string key, value;
    // A position range ("positions", "[16, 32)"): the clause says `positions: [from, to]`.
    std::optional<std::pair<int64_t, int64_t>> positions;
    // A range of steps ("step", "≥ 35"): the clause's `where` lists these step labels.
    std::vector<std::string> anyOf;
};

struct Finding {
    std::vector<SliceCondition> conditions;
    uint64_t nTokens = 0;          // values in the slice (sequences, for a per-sequence metric)
    uint64_t nSequences = 0;
    double mean = 0, restMean = 0;
    double effect = 0;             // mean - restMean
    double ratio = 0;              // mean / restMean (NaN when restMean is 0)
    double se = 0;                 // standard error of the effect
    double ciLo = 0, ciHi = 0;     // FCR-adjusted interval of the effect
    double z = 0, p = 1, qValue = 1;
    std::string clause;            // a ready-made numerical clause (YAML, one list item)
};

struct Discovery {
    std::string metric;
    MetricLevel level = MetricLevel::Token;
    uint64_t tokens = 0, sequences = 0;       // values and sequences behind the search
    std::vector<std::string> keys;            // the keys searched
    std::vector<std::string> skipped;         // "key: why" for keys left out
    uint64_t tested = 0;                      // slices with enough support, each tested once
    uint64_t significant = 0;                 // rejected by Benjamini-Hochberg
    uint64_t subsumed = 0;                    // significant, but not beyond a significant parent
    double q = 0.05;
    double ciLevel = 0;                       // confidence of the reported intervals
    std::vector<Finding> findings;            // by effect, largest first
    double seconds = 0;
};

// Throws std::invalid_argument for an unknown metric or key, a per-run metric, or a
// metric the data cannot support; Cancelled when progress asks to stop.
Discovery discover(MetricEngine& engine, const DiscoverOptions& options, const Progress& progress = {});

// {"kcx":1,"metric":..,"tested":N,"q":..,"findings":[...]} (docs/slices.md).
nlohmann::json discoveryJson(const Discovery& d);

// The one-sided p-value of z under the standard normal, and the Benjamini-Hochberg
// adjusted p-values (q-values) of a list of p-values; exposed for tests.
double upperTailP(double z);
std::vector<double> benjaminiHochberg(const std::vector<double>& p);

}  // namespace kcx
