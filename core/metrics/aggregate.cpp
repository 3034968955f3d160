#include "core/metrics/aggregate.h"

#include <algorithm>
#include <cctype>
#include <vector>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/base/parallel.h"
#include "core/metrics/quantile.h"

namespace kcx {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

bool parseNumber(std::string_view s, double& out) {
    s = trim(s);
    if (s.empty())
        return false;
    if (s.front() == '+')
        s.remove_prefix(1);
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out);
}

std::string shortest(double v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

bool fail(std::string* error, const std::string& message) {
    if (error)
        *error = message;
    return false;
}

}  // namespace

Aggregate makeFractionAbove(double level) {
    Aggregate a;
    a.kind = Aggregate::Kind::FractionAbove;
    a.a = level;
    a.text = "fraction_above: " + shortest(level);
    return a;
}

Aggregate makeFractionOutside(double lo, double hi) {
    Aggregate a;
    a.kind = Aggregate::Kind::FractionOutside;
    a.a = lo;
    a.b = hi;
    a.text = "fraction_outside: [" + shortest(lo) + ", " + shortest(hi) + "]";
    return a;
}

std::optional<Aggregate> parseAggregate(std::string_view text, std::string* error) {
    const std::string_view t = trim(text);
    static const std::pair<const char*, Aggregate::Kind> simple[] = {
        {"max", Aggregate::Kind::Max},   {"min", Aggregate::Kind::Min},
        {"mean", Aggregate::Kind::Mean}, {"sum", Aggregate::Kind::Sum},
        {"count", Aggregate::Kind::Count}};
    for (const auto& [name, kind] : simple)
        if (t == name) {
            Aggregate a;
            a.kind = kind;
            a.text = name;
            return a;
        }
    std::string quoted;   // appended, not "'" + std::string (GCC 12 bug 105329 warns falsely)
    quoted.reserve(text.size() + 2);
    quoted += '\'';
    quoted += text;
    quoted += '\'';
    if (t.size() > 1 && t[0] == 'p' && (std::isdigit(static_cast<unsigned char>(t[1])))) {
        double pct;
        if (t.find_first_not_of("0123456789.", 1) != std::string_view::npos || !parseNumber(t.substr(1), pct) ||
            pct < 0 || pct > 100) {
            fail(error, "aggregate " + quoted + " is not a percentile pNN or pNN.N between p0 and p100");
            return std::nullopt;
        }
        Aggregate a;
        a.kind = Aggregate::Kind::Quantile;
        a.q = pct / 100.0;
        a.text = std::string(t);
        return a;
    }
    const size_t colon = t.find(':');
    if (colon != std::string_view::npos) {
        const std::string_view key = trim(t.substr(0, colon));
        const std::string_view arg = trim(t.substr(colon + 1));
        if (key == "fraction_above") {
            double level;
            if (!parseNumber(arg, level)) {
                fail(error, "fraction_above needs a number, got '" + std::string(arg) + "'");
                return std::nullopt;
            }
            return makeFractionAbove(level);
        }
        if (key == "fraction_outside") {
            double lo, hi;
            const size_t comma = arg.find(',');
            if (arg.size() < 2 || arg.front() != '[' || arg.back() != ']' || comma == std::string_view::npos ||
                !parseNumber(arg.substr(1, comma - 1), lo) ||
                !parseNumber(arg.substr(comma + 1, arg.size() - comma - 2), hi)) {
                fail(error, "fraction_outside needs [a, b], got '" + std::string(arg) + "'");
                return std::nullopt;
            }
            if (lo > hi) {
                fail(error, "fraction_outside: [a, b] needs a <= b");
                return std::nullopt;
            }
            return makeFractionOutside(lo, hi);
        }
    }
    fail(error, "unknown aggregate " + quoted +
                    " (expected max, min, mean, sum, count, pNN, fraction_above: L or fraction_outside: [a, b])");
    return std::nullopt;
}

std::optional<double> applyAggregate(const Aggregate& agg, std::span<const double> values, int threads) {
    using K = Aggregate::Kind;
    if (agg.kind == K::Quantile) {
        const double q[] = {agg.q};
        const auto r = quantilesType7(values, q, threads);
        if (r.empty())
            return std::nullopt;
        return r[0];
    }
    struct Acc {
        uint64_t n = 0, hits = 0;
        double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
    };
    const int t = resolveThreads(threads);
    const size_t chunks = reduceBlocks(values.size());   // not by thread count: the same sum everywhere
    std::vector<Acc> part(chunks);
    parallelChunks(values.size(), chunks, t, [&](size_t c, size_t b, size_t e) {
        Acc a;
        for (size_t i = b; i < e; ++i) {
            const double v = values[i];
            if (v != v)
                continue;
            ++a.n;
            a.sum += v;
            a.lo = std::min(a.lo, v);
            a.hi = std::max(a.hi, v);
            if (agg.kind == K::FractionAbove)
                a.hits += v > agg.a;
            else if (agg.kind == K::FractionOutside)
                a.hits += (v < agg.a || v > agg.b);
        }
        part[c] = a;
    });
    Acc all;
    for (const Acc& a : part) {
        all.n += a.n;
        all.hits += a.hits;
        all.sum += a.sum;
        all.lo = std::min(all.lo, a.lo);
        all.hi = std::max(all.hi, a.hi);
    }
    if (all.n == 0)
        return std::nullopt;
    switch (agg.kind) {
    case K::Max: return all.hi;
    case K::Min: return all.lo;
    case K::Mean: return all.sum / double(all.n);
    case K::Sum: return all.sum;
    case K::Count: return double(all.n);
    case K::FractionAbove:
    case K::FractionOutside: return double(all.hits) / double(all.n);
    case K::Quantile: break;
    }
    return std::nullopt;
}

}  // namespace kcx
