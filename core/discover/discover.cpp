// Slice discovery (core/discover/discover.h, docs/slices.md).
#include "core/discover/discover.h"
#include "core/discover/discover_keys.h"

#include <limits>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "core/base/parallel.h"
#include "core/evaluate/stats.h"
#include "core/metrics/derived_slices.h"

namespace kcx {

namespace {

using discover_detail::Key;
using discover_detail::addPositionKeys;
using discover_detail::addStepKeys;
using discover_detail::exclusive;

// Per-cell sums over sequences s of the slice's per-sequence sum a_s and count n_s, and
// their products with the sequence's totals T_s, N_s: enough for the cluster-robust
// variances of the slice mean, the rest's mean, and their covariance.
struct SliceSums {
    double a = 0, n = 0, aa = 0, an = 0, nn = 0, Ta = 0, Tn = 0, Na = 0, Nn = 0, G = 0, full = 0;
    void add(const SliceSums& o) {
        a += o.a, n += o.n, aa += o.aa, an += o.an, nn += o.nn, Ta += o.Ta, Tn += o.Tn, Na += o.Na, Nn += o.Nn;
        G += o.G, full += o.full;
    }
};

struct Totals {
    double T = 0, N = 0, TT = 0, TN = 0, NN = 0, G = 0;
    void add(const Totals& o) { T += o.T, N += o.N, TT += o.TT, TN += o.TN, NN += o.NN, G += o.G; }
};

// A table of cells: the combinations of the values of `keys`, under the fixed conditions
// `fixed` (depth 3 extends one pair this way). Cell = base + sum code_j * stride_j.
struct Table {
    std::vector<int> keys;
    std::vector<size_t> strides;
    std::vector<std::pair<int, int>> fixed;   // key index, code
    size_t base = 0, cells = 1;
    bool tokenLevel = false;                  // any key (or fixed key) is per token
};

using Cond = std::vector<std::pair<int, int>>;   // sorted (key index, code)

struct Cell {
    Cond cond;
    SliceSums acc;
};

struct Stats {
    double mean = 0, rest = 0, effect = 0, se = 0, z = 0, p = 1;
    uint64_t n = 0, G = 0;
};

Table makeTable(const std::vector<Key>& keys, std::vector<int> ks, Cond fixed, size_t& total) {
    Table t;
    t.keys = std::move(ks);
    t.fixed = std::move(fixed);
    for (int k : t.keys) {
        t.strides.push_back(t.cells);
        t.cells *= keys[size_t(k)].values.size();
        t.tokenLevel = t.tokenLevel || keys[size_t(k)].token;
    }
    for (const auto& [k, c] : t.fixed)
        t.tokenLevel = t.tokenLevel || keys[size_t(k)].token;
    t.base = total;
    total += t.cells;
    return t;
}

Cond condOf(const Table& t, size_t cell) {
    Cond c = t.fixed;
    size_t idx = cell - t.base;
    for (size_t j = t.keys.size(); j-- > 0;) {
        c.emplace_back(t.keys[j], int(idx / t.strides[j]));
        idx %= t.strides[j];
    }
    std::sort(c.begin(), c.end());
    return c;
}

// One pass over the run: the per-sequence sums of every cell of every table.
void accumulate(const Run& run, const MetricValues& values, double mu, const std::vector<Key>& keys,
                const std::vector<Table>& tables, size_t totalCells, int threads, std::vector<SliceSums>& acc,
                Totals& totals) {
    const bool token = values.level == MetricLevel::Token;
    const size_t N = run.sequenceCount(), K = keys.size();
    const size_t chunks = std::min<size_t>(8, std::max<size_t>(N, 1));
    std::vector<std::vector<SliceSums>> part(chunks);
    std::vector<Totals> partTotals(chunks);
    std::vector<size_t> seqTables, tokTables;
    for (size_t t = 0; t < tables.size(); ++t)
        (tables[t].tokenLevel ? tokTables : seqTables).push_back(t);
    parallelChunks(N, chunks, threads, [&](size_t chunk, size_t b, size_t e) {
        std::vector<SliceSums>& A = part[chunk];
        A.assign(totalCells, SliceSums{});
        Totals& tot = partTotals[chunk];
        std::vector<double> sa(totalCells, 0), sn(totalCells, 0);
        std::vector<size_t> touched;
        std::vector<int> codes(K, -1);
        std::vector<int64_t> seqPart(tables.size());   // the per-sequence part of each table's cell, -1 = none
        for (size_t s = b; s < e; ++s) {
            for (size_t k = 0; k < K; ++k)
                if (!keys[k].token)
                    codes[k] = keys[k].seq[s];
            for (size_t t : tokTables) {
                const Table& tb = tables[t];
                int64_t idx = int64_t(tb.base);
                for (const auto& [k, c] : tb.fixed)
                    if (!keys[size_t(k)].token && codes[size_t(k)] != c)
                        idx = -1;
                for (size_t j = 0; j < tb.keys.size() && idx >= 0; ++j)
                    if (!keys[size_t(tb.keys[j])].token) {
                        const int c = codes[size_t(tb.keys[j])];
                        idx = c < 0 ? -1 : idx + int64_t(size_t(c) * tb.strides[j]);
                    }
                seqPart[t] = idx;
            }
            const size_t from = token ? run.seqBegin(s) : s, to = token ? run.seqEnd(s) : s + 1;
            double T = 0, Nn = 0;
            for (size_t i = from; i < to; ++i) {
                const double v0 = values.values[i];
                if (std::isnan(v0))
                    continue;
                const double v = v0 - mu;
                T += v;
                Nn += 1;
                if (tokTables.empty())
                    continue;
                for (size_t k = 0; k < K; ++k)
                    if (keys[k].token)
                        codes[k] = keys[k].tok[i];
                for (size_t t : tokTables) {
                    int64_t idx = seqPart[t];
                    if (idx < 0)
                        continue;
                    const Table& tb = tables[t];
                    for (const auto& [k, c] : tb.fixed)
                        if (keys[size_t(k)].token && codes[size_t(k)] != c)
                            idx = -1;
                    for (size_t j = 0; j < tb.keys.size() && idx >= 0; ++j)
                        if (keys[size_t(tb.keys[j])].token) {
                            const int c = codes[size_t(tb.keys[j])];
                            idx = c < 0 ? -1 : idx + int64_t(size_t(c) * tb.strides[j]);
                        }
                    if (idx < 0)
                        continue;
                    if (sn[size_t(idx)] == 0)
                        touched.push_back(size_t(idx));
                    sa[size_t(idx)] += v;
                    sn[size_t(idx)] += 1;
                }
            }
            if (Nn == 0)
                continue;
            // Tables of per-sequence keys only: the whole sequence falls in one cell.
            for (size_t t : seqTables) {
                const Table& tb = tables[t];
                int64_t idx = int64_t(tb.base);
                for (const auto& [k, c] : tb.fixed)
                    if (codes[size_t(k)] != c)
                        idx = -1;
                for (size_t j = 0; j < tb.keys.size() && idx >= 0; ++j) {
                    const int c = codes[size_t(tb.keys[j])];
                    idx = c < 0 ? -1 : idx + int64_t(size_t(c) * tb.strides[j]);
                }
                if (idx < 0)
                    continue;
                touched.push_back(size_t(idx));
                sa[size_t(idx)] = T;
                sn[size_t(idx)] = Nn;
            }
            tot.T += T, tot.N += Nn, tot.TT += T * T, tot.TN += T * Nn, tot.NN += Nn * Nn, tot.G += 1;
            for (size_t c : touched) {
                const double a = sa[c], n = sn[c];
                SliceSums& x = A[c];
                x.a += a, x.n += n, x.aa += a * a, x.an += a * n, x.nn += n * n;
                x.Ta += T * a, x.Tn += T * n, x.Na += Nn * a, x.Nn += Nn * n;
                x.G += 1;
                x.full += n == Nn;
                sa[c] = sn[c] = 0;
            }
            touched.clear();
        }
    });
    acc.assign(totalCells, SliceSums{});
    for (size_t c = 0; c < chunks; ++c) {   // merged in chunk order: the same sums on any thread count
        if (part[c].empty())
            continue;
        for (size_t i = 0; i < totalCells; ++i)
            acc[i].add(part[c][i]);
        totals.add(partTotals[c]);
    }
}

// Slice against rest, sequences as the units (docs/slices.md has the formulas).
Stats statsOf(const SliceSums& x, const Totals& g, double mu) {
    Stats st;
    const double n1 = x.n, n2 = g.N - x.n;
    const double G1 = x.G, G2 = g.G - x.full;
    st.n = uint64_t(n1);
    st.G = uint64_t(G1);
    const double m1 = x.a / n1, m2 = (g.T - x.a) / n2;
    st.mean = m1 + mu;
    st.rest = m2 + mu;
    st.effect = m1 - m2;
    const double c1 = G1 > 1 ? G1 / (G1 - 1) : 1, c2 = G2 > 1 ? G2 / (G2 - 1) : 1, c = g.G > 1 ? g.G / (g.G - 1) : 1;
    const double v1 = std::max(0.0, x.aa - 2 * m1 * x.an + m1 * m1 * x.nn) / (n1 * n1) * c1;
    const double ra2 = g.TT - 2 * x.Ta + x.aa, ran = g.TN - x.Tn - x.Na + x.an, rn2 = g.NN - 2 * x.Nn + x.nn;
    const double v2 = std::max(0.0, ra2 - 2 * m2 * ran + m2 * m2 * rn2) / (n2 * n2) * c2;
    const double cov = ((x.Ta - x.aa) - m2 * (x.Na - x.an) - m1 * (x.Tn - x.an) + m1 * m2 * (x.Nn - x.nn)) / (n1 * n2) * c;
    const double var = std::max(v1 + v2 - 2 * cov, 0.0);
    st.se = std::sqrt(var);
    if (st.se > 0)
        st.z = st.effect / st.se;
    else
        st.z = st.effect > 0 ? INFINITY : st.effect < 0 ? -INFINITY : 0;
    st.p = upperTailP(st.z);
    return st;
}

std::string shortNumber(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// v rounded up to three significant digits, as short text.
std::string roundUp3(double v) {
    if (v == 0 || !std::isfinite(v))
        return shortNumber(v);
    const double e = std::floor(std::log10(std::fabs(v))) - 2;
    const double scale = std::pow(10.0, e);
    const double r = std::ceil(v / scale - 1e-9) * scale;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", r);
    return buf;
}

std::string clauseYaml(const Finding& f, const std::string& metric, size_t rank, double ciLevel) {
    std::string where, positions;
    for (const auto& c : f.conditions) {
        if (c.positions) {
            positions = "\n  positions: [" + std::to_string(c.positions->first) + ", " +
                        std::to_string(c.positions->second) + "]";
            continue;
        }
        where += (where.empty() ? "" : ", ") + nlohmann::json(c.key).dump() + ": " +
                 (c.anyOf.empty() ? nlohmann::json(c.value).dump() : nlohmann::json(c.anyOf).dump());
    }
    const std::string desc = "found by kcx discover: mean " + shortNumber(f.mean) + " against " +
                             shortNumber(f.restMean) + " in the rest of the run (effect " + shortNumber(f.effect) +
                             ", " + shortNumber(100 * ciLevel) + "% CI [" + shortNumber(f.ciLo) + ", " +
                             shortNumber(f.ciHi) + "], q = " + shortNumber(f.qValue) + ")";
    return "- id: D" + std::to_string(rank) + "\n  description: " + nlohmann::json(desc).dump() +
           "\n  metric: " + metric + "\n  aggregate: mean\n  max: " + roundUp3(f.restMean + f.effect / 2) +
           (where.empty() ? std::string() : "\n  where: {" + where + "}") + positions + "\n";
}

}  // namespace

double upperTailP(double z) {
    if (std::isnan(z))
        return 1;
    return 0.5 * std::erfc(z / std::sqrt(2.0));
}

std::vector<double> benjaminiHochberg(const std::vector<double>& p) {
    const size_t m = p.size();
    std::vector<size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
    std::vector<double> q(m, 1);
    double running = 1;
    for (size_t r = m; r-- > 0;) {
        running = std::min(running, p[order[r]] * double(m) / double(r + 1));
        q[order[r]] = std::min(running, 1.0);
    }
    return q;
}

Discovery discover(MetricEngine& engine, const DiscoverOptions& o, const Progress& progress) {
    const auto start = std::chrono::steady_clock::now();
    const Run& run = engine.run();
    const MetricInfo* info = findMetric(o.metric);
    if (!info)
        throw std::invalid_argument("unknown metric '" + o.metric + "' (see docs/metrics.md)");
    if (info->level == MetricLevel::Run)
        throw std::invalid_argument("'" + o.metric + "' is a per-run metric: it has no slices");
    if (o.maxDepth < 1 || o.maxDepth > 3)
        throw std::invalid_argument("the depth must be 1, 2 or 3");
    if (!(o.q > 0 && o.q < 1))
        throw std::invalid_argument("q must lie in (0, 1)");
    const auto values = engine.get(o.metric, [&](double f) { return !progress || progress(0.3 * f); });
    if (!values->supported())
        throw std::invalid_argument("the run's data cannot support '" + o.metric + "' (no values)");
    const bool token = values->level == MetricLevel::Token;

    Discovery d;
    d.metric = o.metric;
    d.level = values->level;
    d.q = o.q;
    d.sequences = run.sequenceCount();

    // The keys: labeled ones, then derived ones.
    DerivedSlices& derived = engine.derived();
    std::vector<std::string> names = o.keys;
    if (names.empty()) {
        names = run.slices.keys;
        for (const auto& k : derived.available())
            names.push_back(k);
    }
    std::vector<Key> keys;
    for (const auto& name : names) {
        Key k;
        k.name = name;
        if (isDerivedKey(name)) {
            std::shared_ptr<const DerivedCodes> c;
            try {
                c = derived.get(name);
            } catch (const std::invalid_argument& e) {
                if (!o.keys.empty())
                    throw;
                d.skipped.push_back(name + ": " + e.what());
                continue;
            }
            if (c->level == DerivedLevel::Token && !token) {
                d.skipped.push_back(name + ": per token, and '" + o.metric + "' is per sequence");
                continue;
            }
            k.token = c->level == DerivedLevel::Token;
            k.values = c->values;
            k.hold = c;
            if (k.token)
                k.tok = c->token.data();
            else
                k.seq = c->sequence;
        } else {
            const int ki = run.slices.keyIndex(name);
            if (ki < 0)
                throw std::invalid_argument("the run has no slice key '" + name + "'");
            k.values = run.slices.values[size_t(ki)];
            k.seq.resize(run.sequenceCount());
            for (size_t s = 0; s < k.seq.size(); ++s)
                k.seq[s] = run.slices.codes[s * run.slices.keys.size() + size_t(ki)];
        }
        if (k.values.size() > o.maxValues) {
            d.skipped.push_back(name + ": " + std::to_string(k.values.size()) + " values (more than " +
                                std::to_string(o.maxValues) + ")");
            continue;
        }
        if (k.values.empty()) {
            d.skipped.push_back(name + ": no values");
            continue;
        }
        keys.push_back(std::move(k));
    }
    for (Key& k : keys)
        if (k.name == "derived.pos_bucket") {
            k.position = true;
            for (size_t b = 0; b < k.values.size(); ++b)
                k.ranges.emplace_back(int64_t(kPositionEdges[b]), b + 1 < std::size(kPositionEdges)
                                                                      ? int64_t(kPositionEdges[b + 1])
                                                                      : std::numeric_limits<int64_t>::max());
        }
    if (o.keys.empty() && o.stepRanges)
        addStepKeys(run, keys);
    if (o.keys.empty() && o.positionRanges && token)
        addPositionKeys(run, o.maxValues, keys);
    for (const auto& k : keys)
        if (std::find(d.keys.begin(), d.keys.end(), k.name) == d.keys.end())
            d.keys.push_back(k.name);
    report(progress, 0.35);

    double mu = 0;
    {
        double s = 0;
        uint64_t n = 0;
        for (double v : values->values)
            if (!std::isnan(v))
                s += v, ++n;
        mu = n ? s / double(n) : 0;
        d.tokens = n;
    }

    // Pass 1: single conditions and pairs.
    const int K = int(keys.size());
    std::vector<Table> tables;
    size_t total = 0;
    for (int a = 0; a < K; ++a)
        tables.push_back(makeTable(keys, {a}, {}, total));
    if (o.maxDepth >= 2)
        for (int a = 0; a < K; ++a)
            for (int b = a + 1; b < K; ++b)
                if (!exclusive(keys[size_t(a)], keys[size_t(b)]))
                    tables.push_back(makeTable(keys, {a, b}, {}, total));
    std::vector<SliceSums> acc;
    Totals totals;
    accumulate(run, *values, mu, keys, tables, total, o.threads, acc, totals);
    report(progress, 0.7);

    auto supported = [&](const SliceSums& x) {
        return x.n >= double(o.minTokens) && x.G >= double(o.minSequences) &&
               totals.N - x.n >= double(o.minTokens) && totals.G - x.full >= double(o.minSequences);
    };
    std::map<Cond, Cell> cells;   // every tested slice, by its conditions
    auto collect = [&](const std::vector<Table>& ts, const std::vector<SliceSums>& a) {
        for (const Table& t : ts)
            for (size_t i = t.base; i < t.base + t.cells; ++i)
                if (supported(a[i])) {
                    Cond c = condOf(t, i);
                    cells.emplace(c, Cell{c, a[i]});
                }
    };
    collect(tables, acc);

    // Pass 2 (depth 3): the strongest pairs, each extended by every other key.
    if (o.maxDepth >= 3) {
        std::vector<std::pair<double, Cond>> pairs;
        for (const auto& [c, cell] : cells)
            if (c.size() == 2) {
                const Stats st = statsOf(cell.acc, totals, mu);
                if (st.effect > 0)
                    pairs.emplace_back(st.z, c);
            }
        std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
        if (pairs.size() > o.extendTop)
            pairs.resize(o.extendTop);
        std::vector<Table> ext;
        size_t extTotal = 0;
        for (const auto& [z, c] : pairs)
            for (int k = 0; k < K; ++k)
                if (k != c[0].first && k != c[1].first && !exclusive(keys[size_t(k)], keys[size_t(c[0].first)]) &&
                    !exclusive(keys[size_t(k)], keys[size_t(c[1].first)]))
                    ext.push_back(makeTable(keys, {k}, c, extTotal));
        std::vector<SliceSums> extAcc;
        Totals extTotals;
        accumulate(run, *values, mu, keys, ext, extTotal, o.threads, extAcc, extTotals);
        collect(ext, extAcc);
    }
    report(progress, 0.9);

    // Benjamini-Hochberg over every tested slice.
    std::vector<const Cell*> tested;
    std::vector<Stats> stats;
    std::vector<double> p;
    for (const auto& [c, cell] : cells) {
        tested.push_back(&cell);
        stats.push_back(statsOf(cell.acc, totals, mu));
        p.push_back(stats.back().p);
    }
    d.tested = tested.size();
    const std::vector<double> q = benjaminiHochberg(p);
    std::map<Cond, size_t> index;
    for (size_t i = 0; i < tested.size(); ++i)
        index[tested[i]->cond] = i;
    std::vector<size_t> rejected;
    for (size_t i = 0; i < tested.size(); ++i)
        if (q[i] <= o.q)
            rejected.push_back(i);
    d.significant = rejected.size();
    // Intervals for the selected: level 1 - R q / m (false coverage rate q).
    const double alpha = d.tested ? o.q * double(std::max<size_t>(rejected.size(), 1)) / double(d.tested) : o.q;
    d.ciLevel = 1 - alpha;
    const double zc = normalQuantile(1 - alpha / 2);
    // A conjunction is kept only when its interval lies above the effect of every
    // significant parent (the slice with one condition fewer): otherwise the parent says it.
    std::vector<size_t> kept;
    for (size_t i : rejected) {
        const Cond& c = tested[i]->cond;
        const double lo = stats[i].effect - zc * stats[i].se;
        bool subsumed = false;
        for (size_t drop = 0; drop < c.size() && c.size() > 1 && !subsumed; ++drop) {
            Cond parent = c;
            parent.erase(parent.begin() + long(drop));
            auto it = index.find(parent);
            if (it != index.end() && q[it->second] <= o.q && lo <= stats[it->second].effect)
                subsumed = true;
        }
        if (subsumed)
            ++d.subsumed;
        else
            kept.push_back(i);
    }
    // The same for position ranges: a range inside another with the same other conditions is
    // kept only when its interval lies above the wider one's effect (a concentration the
    // wider range dilutes); otherwise the wider range says it (the nested dyadic ranges of
    // one hot region would fill the list).
    auto split = [&](const Cond& c, Cond& rest) -> std::optional<std::pair<int64_t, int64_t>> {
        std::optional<std::pair<int64_t, int64_t>> range;
        rest.clear();
        for (const auto& [k, code] : c) {
            if (!keys[size_t(k)].ranges.empty())
                range = keys[size_t(k)].ranges[size_t(code)];
            else
                rest.emplace_back(k, code);
        }
        return range;
    };
    {
        std::vector<size_t> narrowed;
        Cond restI, restJ;
        for (size_t i : kept) {
            const auto ri = split(tested[i]->cond, restI);
            bool inside = false;
            for (size_t j : kept) {
                if (j == i || !ri)
                    continue;
                const auto rj = split(tested[j]->cond, restJ);
                if (!rj || restI != restJ || *rj == *ri || rj->first > ri->first || rj->second < ri->second)
                    continue;
                if (stats[i].effect - zc * stats[i].se <= stats[j].effect)
                    inside = true;
            }
            if (inside)
                ++d.subsumed;
            else
                narrowed.push_back(i);
        }
        kept = std::move(narrowed);
    }
    std::sort(kept.begin(), kept.end(), [&](size_t a, size_t b) {
        if (stats[a].effect != stats[b].effect)
            return stats[a].effect > stats[b].effect;
        return tested[a]->cond.size() < tested[b]->cond.size();
    });
    for (size_t i : kept) {
        if (d.findings.size() >= o.maxFindings)
            break;
        const Stats& st = stats[i];
        Finding f;
        for (const auto& [k, code] : tested[i]->cond) {
            const Key& key = keys[size_t(k)];
            SliceCondition sc{key.name, key.values[size_t(code)], std::nullopt, {}};
            if (!key.ranges.empty())
                sc.positions = key.ranges[size_t(code)];
            if (!key.anyOf.empty())
                sc.anyOf = key.anyOf[size_t(code)];
            f.conditions.push_back(std::move(sc));
        }
        f.nTokens = st.n;
        f.nSequences = st.G;
        f.mean = st.mean;
        f.restMean = st.rest;
        f.effect = st.effect;
        f.ratio = st.rest != 0 ? st.mean / st.rest : NAN;
        f.se = st.se;
        f.ciLo = st.effect - zc * st.se;
        f.ciHi = st.effect + zc * st.se;
        f.z = st.z;
        f.p = st.p;
        f.qValue = q[i];
        f.clause = clauseYaml(f, o.metric, d.findings.size() + 1, d.ciLevel);
        d.findings.push_back(std::move(f));
    }
    d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report(progress, 1.0);
    return d;
}

nlohmann::json discoveryJson(const Discovery& d) {
    using nlohmann::json;
    auto num = [](double v) -> json { return std::isfinite(v) ? json(v) : json(nullptr); };
    json findings = json::array();
    for (const Finding& f : d.findings) {
        json cond = json::object();
        for (const auto& c : f.conditions)
            cond[c.key] = c.value;
        findings.push_back({{"conditions", cond},
                            {"n_tokens", f.nTokens},
                            {"n_sequences", f.nSequences},
                            {"mean", num(f.mean)},
                            {"rest_mean", num(f.restMean)},
                            {"effect", num(f.effect)},
                            {"ratio", num(f.ratio)},
                            {"se", num(f.se)},
                            {"ci", {num(f.ciLo), num(f.ciHi)}},
                            {"z", num(f.z)},
                            {"p", num(f.p)},
                            {"q_value", num(f.qValue)},
                            {"clause", f.clause}});
    }
    return {{"kcx", 1},
            {"metric", d.metric},
            {"level", levelName(d.level)},
            {"values", d.tokens},
            {"sequences", d.sequences},
            {"keys", d.keys},
            {"skipped_keys", d.skipped},
            {"tested", d.tested},
            {"q", d.q},
            {"significant", d.significant},
            {"subsumed", d.subsumed},
            {"ci_level", d.ciLevel},
            {"findings", findings},
            {"seconds", d.seconds}};
}

}  // namespace kcx
