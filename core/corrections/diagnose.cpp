#include "core/corrections/diagnose.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>

namespace kcx {

namespace {

std::string fmt(const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

double clamp01(double v) { return std::isfinite(v) ? std::clamp(v, 0.0, 1.0) : 0.0; }

double median(std::vector<double> v) {
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    const size_t h = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + long(h), v.end());
    const double hi = v[h];
    if (v.size() % 2)
        return hi;
    return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + long(h)));
}

// Cluster-robust variance factor: with S clusters, the sandwich sum is scaled by S/(S−1).
double clusterScale(size_t clusters) { return clusters > 1 ? double(clusters) / double(clusters - 1) : 0.0; }

constexpr size_t kMinSequences = 5;

// The critical value for a statistic standardised with a cluster-robust standard error over
// `clusters` sequences: z for many, Student's t with clusters − 1 degrees of freedom at the
// same tail probability for few (Cornish–Fisher expansion of t in z).
double criticalFor(double z, size_t clusters) {
    if (clusters < 2)
        return std::numeric_limits<double>::infinity();
    const double v = double(clusters - 1), z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

struct Token {
    uint32_t seq;
    uint32_t pos;   // index within its sequence
    double r;
};

// ---- misalignment ----------------------------------------------------------------------------

void testMisalignment(const Run& run, const std::vector<double>& sumR2, double totalR2, const DiagnoseOptions& o,
                      DiagnosisTest& t) {
    t.cause = "misalignment";
    constexpr int kMaxShift = 2;
    size_t eligible = 0, misaligned = 0;
    std::map<int, size_t> byShift;
    double gain = 0, d0All = 0, dBestAll = 0;
    std::vector<double> tr, in;
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        const size_t b = run.seqBegin(s), n = run.seqLength(s);
        if (n < 2 * kMaxShift + 2)
            continue;
        tr.resize(n);
        in.resize(n);
        for (size_t i = 0; i < n; ++i) {
            tr[i] = run.lpTrain[b + i];
            in[i] = run.lpInf[b + i];
        }
        double d[2 * kMaxShift + 1];
        size_t c[2 * kMaxShift + 1];
        for (int sh = -kMaxShift; sh <= kMaxShift; ++sh) {
            double sum = 0;
            size_t cnt = 0;
            for (size_t i = 0; i < n; ++i) {
                const long j = long(i) + sh;
                if (j < 0 || j >= long(n) || !std::isfinite(tr[size_t(j)]) || !std::isfinite(in[i]))
                    continue;
                const double e = tr[size_t(j)] - in[i];
                sum += e * e;
                ++cnt;
            }
            d[sh + kMaxShift] = cnt ? sum / double(cnt) : std::numeric_limits<double>::infinity();
            c[sh + kMaxShift] = cnt;
        }
        if (c[kMaxShift] < 3)
            continue;
        ++eligible;
        int best = 0;
        for (int sh = -kMaxShift; sh <= kMaxShift; ++sh)
            if (c[sh + kMaxShift] >= 3 && d[sh + kMaxShift] < d[best + kMaxShift])
                best = sh;
        const double d0 = d[kMaxShift], db = d[best + kMaxShift];
        if (best != 0 && d0 > 1e-12 && db < 0.5 * d0) {
            ++misaligned;
            ++byShift[best];
            gain += sumR2[s] * (1 - db / d0);
            d0All += d0;
            dBestAll += db;
        }
    }
    if (eligible < 1) {
        t.why = "needs sequences of at least 6 tokens";
        return;
    }
    t.ran = true;
    const double share = double(misaligned) / double(eligible);
    int shift = 0;
    size_t most = 0;
    for (auto [sh, n] : byShift)
        if (n > most) {
            most = n;
            shift = sh;
        }
    t.detail = {{"sequences_tested", eligible}, {"sequences_misaligned", misaligned}, {"shift", shift}};
    t.z = share;
    if (misaligned == 0 || share < o.misalignedShare)
        return;
    t.found = true;
    t.estimate = shift;
    t.explained = clamp01(totalR2 > 0 ? gain / totalR2 : 0);
    t.evidence = "in " + std::to_string(misaligned) + " of " + std::to_string(eligible) +
                 " sequences lp_inf[t] agrees with lp_train[t" + (shift >= 0 ? "+" : "") + std::to_string(shift) +
                 "] far better than with lp_train[t] (mean squared difference " +
                 fmt("%.4g", dBestAll / double(misaligned)) + " against " + fmt("%.4g", d0All / double(misaligned)) +
                 "): the two sides' tokens are shifted by " + std::to_string(shift);
}

// ---- pairs: the ids both sides list at a position ---------------------------------------------

struct Pairs {
    // per sequence: Σx_c², Σx_c y_c, Σy_c² of the position-centred log-probs
    std::vector<double> sxx, sxy, syy;
    std::vector<double> dbar;     // per position: mean over its pairs of (inf − train)
    std::vector<double> invM;     // per position: 1 / number of pairs
    double withinSS = 0;          // Σ over positions of Σ ((y − x) − d̄)²
    double withinDf = 0;
    double fitSS = 0, rSS = 0;    // Σ (r + d̄)², Σ r² at positions with a finite sampled-token r
    size_t positions = 0, fromTopK = 0, fromLogits = 0;
    size_t sequencesWith = 0;
};

void addPosition(Pairs& p, size_t seq, const std::vector<std::pair<double, double>>& xy, double r) {
    const size_t m = xy.size();
    if (m < 2)
        return;
    double mx = 0, my = 0;
    for (auto [x, y] : xy) {
        mx += x;
        my += y;
    }
    mx /= double(m);
    my /= double(m);
    double sxx = 0, sxy = 0, syy = 0, w = 0;
    const double d = my - mx;
    for (auto [x, y] : xy) {
        const double xc = x - mx, yc = y - my;
        sxx += xc * xc;
        sxy += xc * yc;
        syy += yc * yc;
        w += ((y - x) - d) * ((y - x) - d);
    }
    p.sxx[seq] += sxx;
    p.sxy[seq] += sxy;
    p.syy[seq] += syy;
    p.dbar.push_back(d);
    p.invM.push_back(1.0 / double(m));
    p.withinSS += w;
    p.withinDf += double(m - 1);
    if (std::isfinite(r)) {
        p.fitSS += (r + d) * (r + d);
        p.rSS += r * r;
    }
    ++p.positions;
}

Pairs collectPairs(const Run& run, const DiagnoseOptions& o) {
    Pairs p;
    const size_t n = run.sequenceCount();
    p.sxx.assign(n, 0);
    p.sxy.assign(n, 0);
    p.syy.assign(n, 0);
    std::vector<std::pair<double, double>> xy;
    auto rAt = [&](size_t i) { return run.lpTrain[i] - run.lpInf[i]; };
    const bool logits = run.hasLogits();
    const auto& rows = run.logits.rows;
    if (logits) {
        const size_t P = rows.size(), V = size_t(run.logits.vocab);
        const size_t stride = std::max<size_t>(1, (P + o.maxPairPositions - 1) / std::max<size_t>(1, o.maxPairPositions));
        std::vector<double> lt(V), li(V);
        std::vector<size_t> idx(V);
        const size_t h = std::min<size_t>(V, 16);
        for (size_t q = 0; q < P; q += stride) {
            double mt = -std::numeric_limits<double>::infinity(), mi = mt;
            bool ok = true;
            for (size_t v = 0; v < V; ++v) {
                lt[v] = run.logits.train[q * V + v];
                li[v] = run.logits.inf[q * V + v];
                if (std::isnan(lt[v]) || std::isnan(li[v]))
                    ok = false;
                mt = std::max(mt, lt[v]);
                mi = std::max(mi, li[v]);
            }
            if (!ok || !std::isfinite(mt) || !std::isfinite(mi))
                continue;
            double zt = 0, zi = 0;
            for (size_t v = 0; v < V; ++v) {
                zt += std::exp(lt[v] - mt);
                zi += std::exp(li[v] - mi);
            }
            const double ct = mt + std::log(zt), ci = mi + std::log(zi);
            std::iota(idx.begin(), idx.end(), size_t(0));
            std::partial_sort(idx.begin(), idx.begin() + long(h), idx.end(), [&](size_t a, size_t b) { return lt[a] > lt[b]; });
            xy.clear();
            for (size_t j = 0; j < h; ++j) {
                const double x = lt[idx[j]] - ct, y = li[idx[j]] - ci;
                if (std::isfinite(x) && std::isfinite(y))
                    xy.emplace_back(x, y);
            }
            const size_t tok = size_t(rows[q]);
            const size_t before = p.positions;
            addPosition(p, run.sequenceOf(tok), xy, rAt(tok));
            p.fromLogits += p.positions - before;
        }
    }
    if (run.hasTopK()) {
        const size_t M = run.tokenCount();
        const size_t stride = std::max<size_t>(1, (M + o.maxPairPositions - 1) / std::max<size_t>(1, o.maxPairPositions));
        const int kt = run.topkTrain.k, ki = run.topkInf.k;
        const int h = std::max(2, (kt + 1) / 2);
        for (size_t s = 0; s < run.sequenceCount(); ++s) {
            const size_t b = run.seqBegin(s), e = run.seqEnd(s);
            size_t first = b;
            if (stride > 1)
                first = b + (stride - b % stride) % stride;
            for (size_t i = first; i < e; i += stride) {
                if (logits && std::binary_search(rows.begin(), rows.end(), int64_t(i)))
                    continue;
                xy.clear();
                for (int a = 0; a < std::min(h, kt); ++a) {
                    const int32_t id = run.topkTrain.ids[i * size_t(kt) + size_t(a)];
                    const double x = run.topkTrain.logp[i * size_t(kt) + size_t(a)];
                    if (!std::isfinite(x))
                        continue;
                    for (int c = 0; c < ki; ++c)
                        if (run.topkInf.ids[i * size_t(ki) + size_t(c)] == id) {
                            const double y = run.topkInf.logp[i * size_t(ki) + size_t(c)];
                            if (std::isfinite(y))
                                xy.emplace_back(x, y);
                            break;
                        }
                }
                const size_t before = p.positions;
                addPosition(p, s, xy, rAt(i));
                p.fromTopK += p.positions - before;
            }
        }
    }
    for (size_t s = 0; s < n; ++s)
        p.sequencesWith += p.sxx[s] > 0;
    return p;
}

void testTemperature(const Pairs& p, const DiagnoseOptions& o, DiagnosisTest& t) {
    t.cause = "temperature";
    if (p.positions == 0) {
        t.why = "needs top-k lists (or full logits) on both sides with at least two ids in common";
        return;
    }
    if (p.sequencesWith < kMinSequences) {
        t.why = "needs top-k or logits in at least 5 sequences";
        return;
    }
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t s = 0; s < p.sxx.size(); ++s) {
        sxx += p.sxx[s];
        sxy += p.sxy[s];
        syy += p.syy[s];
    }
    if (!(sxx > 0)) {
        t.why = "the ids both sides list have equal log-probs everywhere";
        return;
    }
    t.ran = true;
    // Two slopes bracket the truth whichever side carries the noise: b1 = Sxy/Sxx (inf on train:
    // exact when the training side is noise-free) and b2 = Syy/Sxy (train on inf, inverted:
    // exact when the inference side is). Noise on either side, and the selection of ids both
    // top-k lists hold, pull one of them towards or past 1; a temperature moves both.
    const double b1 = sxy / sxx, b2 = sxy != 0 ? syy / sxy : std::numeric_limits<double>::infinity();
    double u1 = 0, u2 = 0;
    for (size_t s = 0; s < p.sxx.size(); ++s) {
        const double e1 = p.sxy[s] - b1 * p.sxx[s], e2 = p.syy[s] - b2 * p.sxy[s];
        u1 += e1 * e1;
        u2 += e2 * e2;
    }
    const double scale = clusterScale(p.sequencesWith);
    const double se1 = std::sqrt(u1 * scale) / sxx, se2 = std::sqrt(u2 * scale) / std::fabs(sxy);
    auto zOf = [](double b, double se) {
        return se > 0 ? (b - 1) / se : (b == 1 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), b - 1));
    };
    const double z1 = zOf(b1, se1), z2 = zOf(b2, se2);
    const double tau = 1 / b1;
    // Sharper (τ < 1): both slopes above 1; flatter (τ > 1): both below. The weaker of the two
    // decides.
    const bool sharper = b1 > 1 && b2 > 1, flatter = b1 < 1 && b2 < 1;
    t.z = sharper ? std::min(z1, z2) : flatter ? std::max(z1, z2) : 0;
    const double tauNear = sharper ? 1 / b1 : flatter ? 1 / b2 : 1;
    const double ss0 = syy - 2 * sxy + sxx, ss1 = syy - 2 * b1 * sxy + b1 * b1 * sxx;
    t.explained = clamp01(ss0 > 0 ? 1 - ss1 / ss0 : 0);
    t.estimate = tau;
    t.detail = {{"slope", b1}, {"slope_se", se1}, {"reverse_slope", b2}, {"reverse_slope_se", se2}, {"positions", p.positions}};
    t.detail["critical"] = criticalFor(o.zCritical, p.sequencesWith);
    if (!(std::fabs(t.z) >= criticalFor(o.zCritical, p.sequencesWith) && std::fabs(tauNear - 1) >= o.minTemperatureChange))
        return;
    t.found = true;
    t.evidence = "at " + std::to_string(p.positions) +
                 " positions the inference side's log-prob gaps between ids both sides list are " + fmt("%.4g", b1) +
                 " × the training side's (± " + fmt("%.2g", 1.96 * se1) + "; " + fmt("%.4g", b2) +
                 " regressed the other way): p_inf ∝ p_train^(1/τ) with τ = " + fmt("%.3f", tau);
}

}  // namespace

std::vector<DiagnosisTest> Diagnosis::findings() const {
    std::vector<DiagnosisTest> out;
    for (const DiagnosisTest& t : tests)
        if (t.found)
            out.push_back(t);
    std::stable_sort(out.begin(), out.end(), [](const DiagnosisTest& a, const DiagnosisTest& b) { return a.explained > b.explained; });
    return out;
}

Diagnosis diagnose(const Run& run, const DiagnoseOptions& o) {
    Diagnosis d;
    const size_t n = run.sequenceCount();
    std::vector<Token> tokens;
    tokens.reserve(run.tokenCount());
    std::vector<double> sumR2(n, 0);
    double totalR2 = 0;
    for (size_t s = 0; s < n; ++s) {
        bool any = false;
        for (size_t i = run.seqBegin(s); i < run.seqEnd(s); ++i) {
            const double a = run.lpTrain[i], b = run.lpInf[i];
            if (!std::isfinite(a) || !std::isfinite(b))
                continue;
            const double r = a - b;
            tokens.push_back({uint32_t(s), uint32_t(i - run.seqBegin(s)), r});
            sumR2[s] += r * r;
            any = true;
        }
        d.sequences += any;
    }
    for (double v : sumR2)
        totalR2 += v;
    d.tokens = tokens.size();

    d.tests.resize(5);
    DiagnosisTest& mis = d.tests[0];
    DiagnosisTest& temp = d.tests[1];
    DiagnosisTest& offset = d.tests[2];
    DiagnosisTest& renorm = d.tests[3];
    DiagnosisTest& drift = d.tests[4];
    temp.cause = "temperature";
    offset.cause = "constant_offset";
    renorm.cause = "renormalization";
    drift.cause = "position_drift";

    testMisalignment(run, sumR2, totalR2, o, mis);
    if (mis.found) {
        for (DiagnosisTest* t : {&temp, &offset, &renorm, &drift})
            t->why = "not tested: the two sides are misaligned";
        return d;
    }

    const Pairs pairs = collectPairs(run, o);
    d.pairPositions = pairs.positions;
    d.pairSource = pairs.fromTopK && pairs.fromLogits ? "top-k and logits" : pairs.fromLogits ? "logits" : pairs.fromTopK ? "top-k" : "";
    testTemperature(pairs, o, temp);

    // ---- the level: E_inf[w] = 1 for two proper distributions sampled from π_inf ----
    if (d.sequences < kMinSequences) {
        offset.why = renorm.why = drift.why = "needs at least 5 sequences with both log-probs";
        return d;
    }
    std::vector<double> W(n, 0), N(n, 0);
    double wSum = 0, wN = 0;
    for (const Token& tk : tokens) {
        const double w = std::exp(tk.r);
        if (!std::isfinite(w))
            continue;
        W[tk.seq] += w;
        N[tk.seq] += 1;
        wSum += w;
        wN += 1;
    }
    offset.ran = renorm.ran = true;
    const double wBar = wSum / wN;
    double u = 0;
    size_t clusters = 0;
    for (size_t s = 0; s < n; ++s)
        if (N[s] > 0) {
            u += (W[s] - wBar * N[s]) * (W[s] - wBar * N[s]);
            ++clusters;
        }
    const double se = std::sqrt(u * clusterScale(clusters)) / wN;
    const double delta = std::log(wBar);
    const double zLevel = se > 0 ? (wBar - 1) / se : (wBar == 1 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), wBar - 1));
    const double meanR2 = totalR2 / double(d.tokens);
    offset.z = renorm.z = zLevel;
    offset.estimate = delta;
    offset.detail = {{"mean_w", wBar}, {"mean_w_se", se}};
    const double levelCritical = criticalFor(o.zCritical, clusters);
    offset.detail["critical"] = levelCritical;
    const bool level = std::fabs(zLevel) >= levelCritical && std::fabs(delta) >= o.minOffset;
    // Renormalised inference side: w = P_train(S) ≤ 1 and inf − train = −log P(S) ≥ 0 on the
    // kept ids; a renormalised training side: the reverse.
    const double sign = delta < 0 ? 1.0 : -1.0;
    bool isRenorm = false;
    std::string how;
    if (pairs.positions >= 20) {
        double mean = 0;
        for (double v : pairs.dbar)
            mean += v;
        mean /= double(pairs.dbar.size());
        double var = 0;
        for (double v : pairs.dbar)
            var += (v - mean) * (v - mean);
        var /= double(std::max<size_t>(1, pairs.dbar.size() - 1));
        const double sw2 = pairs.withinDf > 0 ? pairs.withinSS / pairs.withinDf : 0;
        const double invM = std::accumulate(pairs.invM.begin(), pairs.invM.end(), 0.0) / double(pairs.invM.size());
        const double noiseVar = sw2 * invM;
        const double ratio = noiseVar > 0 ? var / noiseVar : (var > 1e-18 ? std::numeric_limits<double>::infinity() : 0);
        std::vector<double> kept;
        kept.reserve(pairs.dbar.size());
        size_t sameSign = 0;
        for (double v : pairs.dbar) {
            kept.push_back(std::exp(-sign * v));
            sameSign += sign * v >= -3 * std::sqrt(noiseVar);
        }
        isRenorm = ratio > 4 && double(sameSign) >= 0.95 * double(pairs.dbar.size());
        renorm.estimate = median(kept);
        renorm.explained = clamp01(pairs.rSS > 0 ? 1 - pairs.fitSS / pairs.rSS : 0);
        renorm.detail = {{"side", sign > 0 ? "inf" : "train"},
                         {"offset_spread_over_noise", std::isfinite(ratio) ? nlohmann::json(ratio) : nlohmann::json(nullptr)},
                         {"positions", pairs.positions}};
        how = "the offset between the sides' log-probs of the ids both list varies from position to position " +
              (std::isfinite(ratio) ? fmt("%.3g", ratio) + "×" : std::string("far")) +
              " beyond the noise within a position, with one sign";
    } else {
        renorm.ran = false;
        renorm.why = "needs top-k lists (or full logits) on both sides: from sampled tokens alone a renormalisation "
                     "looks like a constant offset";
    }
    offset.explained = clamp01(meanR2 > 0 ? delta * delta / meanR2 : 0);
    if (level && isRenorm) {
        renorm.found = true;
        renorm.evidence = "mean w = " + fmt("%.5g", wBar) + " (± " + fmt("%.2g", 1.96 * se) + "), not 1, and " + how +
                          ": the " + (sign > 0 ? std::string("inference") : std::string("training")) +
                          " side was renormalised over a truncated set keeping typically " +
                          fmt("%.3g", 100 * renorm.estimate) + " % of the mass";
    } else if (level) {
        offset.found = true;
        offset.evidence = "mean w = " + fmt("%.5g", wBar) + " (± " + fmt("%.2g", 1.96 * se) +
                          ") where two proper distributions sampled from the inference side give exactly 1: " +
                          "lp_train − lp_inf carries a constant " + fmt("%.4g", delta) + " nats" +
                          (renorm.ran ? std::string()
                                      : std::string(" (without top-k or logits this cannot be told from a renormalisation "
                                                    "over a truncated set)"));
    }

    // ---- drift: mean |r| against position, sequences as clusters ----
    {
        struct S5 {
            double n = 0, t = 0, tt = 0, y = 0, ty = 0;
        };
        std::vector<S5> acc(n);
        S5 all;
        for (const Token& tk : tokens) {
            const double t = tk.pos, y = std::fabs(tk.r);
            S5& a = acc[tk.seq];
            a.n += 1;
            a.t += t;
            a.tt += t * t;
            a.y += y;
            a.ty += t * y;
        }
        for (const S5& a : acc) {
            all.n += a.n;
            all.t += a.t;
            all.tt += a.tt;
            all.y += a.y;
            all.ty += a.ty;
        }
        const double tBar = all.t / all.n, yBar = all.y / all.n;
        const double sxx = all.tt - all.n * tBar * tBar, sxy = all.ty - all.n * tBar * yBar;
        if (!(sxx > 0)) {
            drift.why = "needs tokens at more than one position";
        } else {
            drift.ran = true;
            const double b = sxy / sxx, a0 = yBar - b * tBar;
            double uu = 0;
            for (const S5& a : acc) {
                if (a.n == 0)
                    continue;
                const double us = a.ty - tBar * a.y - a0 * (a.t - a.n * tBar) - b * (a.tt - tBar * a.t);
                uu += us * us;
            }
            const double seB = std::sqrt(uu * clusterScale(d.sequences)) / sxx;
            drift.z = seB > 0 ? b / seB : 0;
            drift.estimate = 1000 * b;
            drift.explained = clamp01(yBar > 0 ? b * tBar / yBar : 0);
            drift.detail = {{"slope_per_position", b}, {"slope_se", seB}, {"mean_abs_log_ratio_at_0", a0},
                            {"mean_abs_log_ratio", yBar}, {"mean_position", tBar}};
            drift.detail["critical"] = criticalFor(o.zCritical, d.sequences);
            if (drift.z >= criticalFor(o.zCritical, d.sequences) && drift.explained >= o.minDriftExplained) {
                drift.found = true;
                drift.evidence = "mean |r| grows from " + fmt("%.4g", a0) + " at position 0 by " + fmt("%.4g", 1000 * b) +
                                 " per 1,000 positions (± " + fmt("%.2g", 1960 * seB) + "); " +
                                 fmt("%.3g", 100 * drift.explained) + " % of the mean |r| is the growth";
            }
        }
    }
    return d;
}

nlohmann::json diagnosisJson(const Diagnosis& d) {
    auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json j;
    j["kcx"] = 1;
    nlohmann::json findings = nlohmann::json::array();
    for (const DiagnosisTest& t : d.findings())
        findings.push_back({{"cause", t.cause},
                            {"estimate", num(t.estimate)},
                            {"explained", num(t.explained)},
                            {"evidence", t.evidence},
                            {"z", num(t.z)},
                            {"detail", t.detail}});
    j["findings"] = std::move(findings);
    j["tokens"] = d.tokens;
    j["sequences"] = d.sequences;
    j["pair_positions"] = d.pairPositions;
    j["pair_source"] = d.pairSource.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.pairSource);
    nlohmann::json tests = nlohmann::json::array();
    for (const DiagnosisTest& t : d.tests) {
        nlohmann::json e = {{"cause", t.cause}, {"ran", t.ran}, {"found", t.found}};
        if (!t.ran)
            e["why"] = t.why;
        else {
            e["statistic"] = num(t.z);
            e["estimate"] = num(t.estimate);
            e["detail"] = t.detail;
        }
        tests.push_back(std::move(e));
    }
    j["tests"] = std::move(tests);
    return j;
}

}  // namespace kcx
