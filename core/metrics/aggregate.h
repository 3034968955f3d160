// Aggregates of SPEC 3: max, min, mean, sum, count, pNN[.N], fraction_above, fraction_outside.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kcx {

struct Aggregate {
    enum class Kind { Max, Min, Mean, Sum, Count, Quantile, FractionAbove, FractionOutside };
    Kind kind = Kind::Mean;
    double q = 0;        // Quantile: in [0, 1]
    double a = 0, b = 0; // FractionAbove: a = L; FractionOutside: [a, b]
    std::string text;    // canonical spelling, e.g. "p99.9", "fraction_above: 0.2"
};

// Parses "max", "p99.9", "fraction_above: 0.2", "fraction_outside: [a, b]".
// Returns nullopt and sets *error to a sentence when the text does not parse.
std::optional<Aggregate> parseAggregate(std::string_view text, std::string* error = nullptr);
Aggregate makeFractionAbove(double level);
Aggregate makeFractionOutside(double lo, double hi);

// Applies the aggregate to the values that exist (NaN entries are skipped).
// Returns nullopt over zero values, `count` included (SPEC 3: the clause is inconclusive).
// Quantiles use numpy's default linear interpolation (type 7).
std::optional<double> applyAggregate(const Aggregate& aggregate, std::span<const double> values,
                                     int threads = 0);

}  // namespace kcx
