// The machine-independent elementary functions (core/base/det_math.h) against the C
// library's long-double functions (independent code, 64-bit mantissa), and the full-logit
// kernels of every instruction set against each other, to the bit, and against a softmax
// worked out in long double.
#include <QtTest/QTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/base/det_math.h"
#include "core/formats/run.h"
#include "core/metrics/logit_row_fns.h"
#include "core/metrics/token_kernels_fns.h"

using namespace kcx;

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

// |got - want| in units in the last place of want (want computed in long double).
double ulps(double got, long double want) {
    const double w = double(want);
    if (got == w)
        return 0;
    if (!std::isfinite(got) || !std::isfinite(w))
        return inf;
    const double u = std::nextafter(std::fabs(w), inf) - std::fabs(w);
    return double(std::fabs((long double)got - want) / (long double)(u > 0 ? u : 4.9e-324));
}

template <class F, class R>
double worstUlps(F f, R ref, double lo, double hi, bool logScale, int n = 400000) {
    std::mt19937_64 g(16);
    std::uniform_real_distribution<double> u(lo, hi);
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        double x = u(g);
        if (logScale)
            x = std::exp(x);
        worst = std::max(worst, ulps(f(x), ref((long double)x)));
    }
    return worst;
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }


// The ten metrics of one row worked out directly in long double: softmax, then the sums.
struct Ref {
    long double tv = 0, klpq = 0, klqp = 0, js = 0, hp = 0, hq = 0;
};
template <class TA, class TB>
Ref reference(const std::vector<TA>& a, const std::vector<TB>& b) {
    const size_t v = a.size();
    long double ma = -INFINITY, mb = -INFINITY;
    for (size_t i = 0; i < v; ++i) {
        ma = std::max<long double>(ma, a[i]);
        mb = std::max<long double>(mb, b[i]);
    }
    long double za = 0, zb = 0;
    for (size_t i = 0; i < v; ++i) {
        za += expl((long double)a[i] - ma);
        zb += expl((long double)b[i] - mb);
    }
    Ref r;
    for (size_t i = 0; i < v; ++i) {
        const long double lp = (long double)a[i] - ma - logl(za), lq = (long double)b[i] - mb - logl(zb);
        const long double p = expl(lp), q = expl(lq), m = (p + q) / 2;
        r.tv += fabsl(p - q) / 2;
        r.klpq += p * (lp - lq);
        r.klqp += q * (lq - lp);
        r.hp -= p * lp;
        r.hq -= q * lq;
        if (m > 0)
            r.js += (p * (lp - logl(m)) + q * (lq - logl(m))) / 2;
    }
    return r;
}
}  // namespace

class TestDetMath : public QObject {
    Q_OBJECT
private slots:
    void accurateOverTheRange() {
        QVERIFY(worstUlps([](double x) { return det::exp(x); }, [](long double x) { return expl(x); }, -708, 709.7,
                          false) <= 1.5);
        QVERIFY(worstUlps([](double x) { return det::exp(x); }, [](long double x) { return expl(x); }, -1, 1,
                          false) <= 1.5);
        // Into the subnormal results: within one subnormal step.
        QVERIFY(worstUlps([](double x) { return det::exp(x); }, [](long double x) { return expl(x); }, -745, -709,
                          false) <= 1.5);
        QVERIFY(worstUlps([](double x) { return det::log(x); }, [](long double x) { return logl(x); }, -744, 709,
                          true) <= 1.5);
        QVERIFY(worstUlps([](double x) { return det::log(x); }, [](long double x) { return logl(x); }, 0.5, 2,
                          false) <= 1.5);
        QVERIFY(worstUlps([](double x) { return det::log1p(x); }, [](long double x) { return log1pl(x); }, -0.999,
                          5, false) <= 1.5);
        QVERIFY(worstUlps([](double x) { return det::log1p(x); }, [](long double x) { return log1pl(x); }, -1e-7,
                          1e-7, false) <= 1.5);
        QVERIFY(worstUlps([](double x) { return det::expm1(x); }, [](long double x) { return expm1l(x); }, -40, 40,
                          false) <= 4.0);
        QVERIFY(worstUlps([](double x) { return det::expm1(x); }, [](long double x) { return expm1l(x); }, -1e-5,
                          1e-5, false) <= 1.5);
        QVERIFY(worstUlps([](double x) { return det::tanh(x); }, [](long double x) { return tanhl(x); }, -25, 25,
                          false) <= 4.0);
        // erfc: within 1e-14 relative (below 1 it is 1 - erf, whose series loses a few bits).
        std::mt19937_64 g(3);
        std::uniform_real_distribution<double> u(-6, 26);
        for (int i = 0; i < 200000; ++i) {
            const double x = u(g);
            const long double want = erfcl(x);
            QVERIFY2(fabsl(det::erfc(x) - want) <= 1e-14L * want, qPrintable(QString::number(x, 'g', 17)));
        }
    }

    // Values known exactly, or to more digits than a double holds (from tables).
    void knownValues() {
        QCOMPARE(det::exp(0.0), 1.0);
        QCOMPARE(det::log(1.0), 0.0);
        QCOMPARE(det::log(2.0), 0.6931471805599453);
        QCOMPARE(det::exp(1.0), 2.718281828459045);
        QCOMPARE(det::log(1024.0), 6.931471805599453);
        QCOMPARE(det::expm1(0.0), 0.0);
        QCOMPARE(det::log1p(0.0), 0.0);
        QCOMPARE(det::tanh(0.0), 0.0);
        QCOMPARE(det::erfc(0.0), 1.0);
        const struct {
            double x, erfc;
        } table[] = {{0.5, 0.4795001221869534623}, {1, 0.1572992070502851307},
                     {2, 0.004677734981047265838}, {3, 2.209049699858544137e-5},
                     {5, 1.537459794428034850e-12}, {-1, 1.842700792949714869}};
        for (const auto& t : table)
            QVERIFY2(std::fabs(det::erfc(t.x) - t.erfc) <= 2e-15 * t.erfc, qPrintable(QString::number(t.x)));
    }

    void edgesAndSpecialValues() {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        QCOMPARE(det::exp(-inf), 0.0);
        QCOMPARE(det::exp(inf), inf);
        QCOMPARE(det::exp(709.79), inf);
        QVERIFY(std::isfinite(det::exp(709.78)));
        QCOMPARE(det::exp(-745.2), 0.0);
        QCOMPARE(det::exp(-745.1), 4.9406564584124654e-324);   // the smallest subnormal
        QVERIFY(std::isnan(det::exp(nan)));
        QCOMPARE(det::log(0.0), -inf);
        QCOMPARE(det::log(-0.0), -inf);
        QCOMPARE(det::log(inf), inf);
        QVERIFY(std::isnan(det::log(-1.0)));
        QVERIFY(std::isnan(det::log(-inf)));
        QVERIFY(std::isnan(det::log(nan)));
        QCOMPARE(det::log(4.9406564584124654e-324), -744.4400719213812);   // subnormal input
        QCOMPARE(det::log1p(-1.0), -inf);
        QVERIFY(std::isnan(det::log1p(-2.0)));
        QCOMPARE(det::log1p(inf), inf);
        QVERIFY(std::isnan(det::log1p(nan)));
        QCOMPARE(det::log1p(1e-300), 1e-300);
        QCOMPARE(det::expm1(-inf), -1.0);
        QCOMPARE(det::expm1(1e-300), 1e-300);
        QCOMPARE(det::tanh(30.0), 1.0);
        QCOMPARE(det::tanh(-30.0), -1.0);
        QVERIFY(std::isnan(det::tanh(nan)));
        QCOMPARE(det::erfc(-30.0), 2.0);
        QCOMPARE(det::erfc(30.0), 0.0);
        QVERIFY(std::isnan(det::erfc(nan)));
    }

    // det::expV (the logit kernel's exps, a vector at a time) is det::exp to the bit: on the
    // edges of the range, the subnormal results, the infinities and NaN, and 100,000 values
    // spread over [-750, 750]; and det::expVInRange is too, on the values in [-690, 690].
    // Compared as bits, so a NaN must be the same NaN. (This file is built for the baseline
    // instruction set; the wider kernels are compared with it in the test below.)
    void expVIsExpToTheBit() {
        constexpr size_t W = det::kVecLanes;
        std::vector<double> x = {0.0, -0.0, 1.0, -1.0, 709.78, 709.79, -745.1, -745.2, -708.5, -720.0,
                                 0.34657359027997264, -0.34657359027997264, 1e-300, -1e-300, inf, -inf,
                                 std::numeric_limits<double>::quiet_NaN(), -690.0, 690.0, -689.99, 689.99};
        std::mt19937_64 rng(17);
        std::uniform_real_distribution<double> u(-750.0, 750.0);
        while (x.size() % W != 0 || x.size() < 100000)
            x.push_back(u(rng));
        size_t differ = 0, differInRange = 0, inRange = 0;
        for (size_t i = 0; i < x.size(); i += W) {
            det::VecD xv, yv, zv;
            std::memcpy(&xv, x.data() + i, sizeof xv);
            yv = det::expV(xv);
            zv = det::expVInRange(xv);
            for (size_t j = 0; j < W; ++j) {
                const uint64_t want = std::bit_cast<uint64_t>(det::exp(x[i + j]));
                differ += std::bit_cast<uint64_t>(double(yv[j])) != want;
                if (std::fabs(x[i + j]) <= 690.0) {
                    ++inRange;
                    differInRange += std::bit_cast<uint64_t>(double(zv[j])) != want;
                }
            }
        }
        QCOMPARE(differ, size_t(0));
        QCOMPARE(differInRange, size_t(0));
        QVERIFY(inRange > 90000);
        // det::expMany (kcx summarize's first pass), over the same values, and over the first
        // 21 alone (a count that is not whole vectors: the lanes past it are computed, unused).
        std::vector<double> y(x.size());
        det::expMany(x.data(), y.data(), x.size());
        size_t differMany = 0;
        for (size_t i = 0; i < x.size(); ++i)
            differMany += std::bit_cast<uint64_t>(y[i]) != std::bit_cast<uint64_t>(det::exp(x[i]));
        QCOMPARE(differMany, size_t(0));
        std::vector<double> head(x.begin(), x.begin() + 24), out(24, -1.0);
        det::expMany(head.data(), out.data(), 21);
        for (size_t i = 0; i < 21; ++i)
            QCOMPARE(std::bit_cast<uint64_t>(out[i]), std::bit_cast<uint64_t>(det::exp(head[i])));
        det::VecD edge;
        std::memcpy(&edge, x.data() + 6 - 6 % W, sizeof edge);
        QCOMPARE(double(det::expV(edge)[6 % W]), 4.9406564584124654e-324);   // exp(-745.1): the smallest subnormal
    }

    // The generic, AVX2 and AVX-512 kernels give the same doubles for every metric, on rows
    // of every length around the block and lane sizes, for all four input type pairs, with
    // entries whose exp underflows and with ties for the maximum; and the generic kernel
    // agrees with a softmax in long double. Before det_math the wide kernels used Eigen's
    // vector exp with FMA and summed in lane-width order: tv differed in the last bits.
    void everyInstructionSetGivesTheSameBits() {
        std::vector<detail::LogitRowFns> tables{detail::logitRowGeneric()};
#if defined(__x86_64__) && defined(KCX_HAVE_ISA_KERNELS)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            tables.push_back(detail::logitRowAvx2());
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
            tables.push_back(detail::logitRowAvx512());
#endif
        qInfo("kernels compared: %zu (%s%s%s)", tables.size(), tables[0].isa,
              tables.size() > 1 ? ", avx2" : "", tables.size() > 2 ? ", avx512" : "");
        std::mt19937_64 g(1616);
        std::normal_distribution<double> z(0, 4);
        std::uniform_real_distribution<double> noise(-0.3, 0.3);
        int rows = 0;
        QStringList failures;
        for (size_t v : {size_t(1), size_t(2), size_t(7), size_t(8), size_t(9), size_t(63), size_t(511), size_t(512),
                         size_t(513), size_t(1031), size_t(4099)}) {
            for (int variant = 0; variant < 5; ++variant) {
                std::vector<double> ad(v), bd(v);
                for (size_t i = 0; i < v; ++i) {
                    ad[i] = z(g);
                    bd[i] = ad[i] + noise(g);
                    if (variant == 1 && i % 5 == 0)
                        ad[i] = bd[i] = -900;   // exp underflows to 0 (and m in js is 0)
                    if (variant == 2)
                        ad[i] = bd[i] = std::round(ad[i]);   // many ties, equal rows
                    if (variant == 3) {   // zeros of both signs: the maxima's lanes decide which wins
                        ad[i] = (i * 7 + v) % 3 == 0 ? -0.0 : 0.0;
                        bd[i] = (i * 5 + v) % 2 == 0 ? -0.0 : 0.0;
                    }
                    if (variant == 4 && i % 7 == 3)
                        ad[i] = bd[i] = z(g) * 400;   // exps beyond [-690, 690]: the clamped path
                }
                std::vector<float> af(ad.begin(), ad.end()), bf(bd.begin(), bd.end());
                std::vector<double> scratch(2 * v);
                auto runAll = [&](auto pick, const auto* a, const auto* b) -> std::vector<double> {
                    double first[detail::kLogitCount];
                    for (size_t t = 0; t < tables.size(); ++t) {
                        double out[detail::kLogitCount];
                        std::fill(out, out + detail::kLogitCount, -7.0);
                        if (pick(tables[t].withJs)(a, b, v, scratch.data(), out) != 0)
                            failures << QString("v=%1: %2 did not compute").arg(v).arg(tables[t].isa);
                        if (t == 0)
                            std::copy(out, out + detail::kLogitCount, first);
                        for (int k = 0; k < detail::kLogitCount; ++k)
                            if (!sameBits(out[k], first[k]))
                                failures << QString("v=%1 variant=%2 metric %3: %4 gives %5, %6 gives %7")
                                                    .arg(v)
                                                    .arg(variant)
                                                    .arg(k)
                                                    .arg(tables[t].isa)
                                                    .arg(out[k], 0, 'g', 17)
                                                    .arg(tables[0].isa)
                                                    .arg(first[k], 0, 'g', 17);
                    }
                    ++rows;
                    return std::vector<double>(first, first + detail::kLogitCount);
                };
                runAll([](const detail::LogitRowKernels& k) { return k.ff; }, af.data(), bf.data());
                runAll([](const detail::LogitRowKernels& k) { return k.fd; }, af.data(), bd.data());
                runAll([](const detail::LogitRowKernels& k) { return k.df; }, ad.data(), bf.data());
                const auto got = runAll([](const detail::LogitRowKernels& k) { return k.dd; }, ad.data(), bd.data());
                const Ref r = reference(ad, bd);
                auto near = [](double x, long double want) {
                    return fabsl(x - want) <= 1e-12L * std::max(1.0L, fabsl(want));
                };
                QVERIFY(near(got[detail::kLogitTV], r.tv));
                QVERIFY(near(got[detail::kLogitKLPQ], r.klpq));
                QVERIFY(near(got[detail::kLogitKLQP], r.klqp));
                QVERIFY(near(got[detail::kLogitJS], r.js));
                QVERIFY(near(got[detail::kLogitHP], r.hp));
                QVERIFY(near(got[detail::kLogitHQ], r.hq));
            }
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures.mid(0, 5).join("\n")));
        QCOMPARE(rows, 11 * 5 * 4);
    }

    // The per-token log-prob kernels (issue 17: compiled for AVX2 and AVX-512 too) give the
    // same bits on every instruction set, for float and double columns, with missing, NaN,
    // infinite and overflowing inputs and lengths around the vector and block widths; and
    // their values are the formulas of SPEC 2.1 (checked in long double).
    void tokenKernelsGiveTheSameBitsEverywhere() {
        std::vector<detail::TokenKernels> tables{detail::tokenKernelsGeneric()};
#if defined(__x86_64__) && defined(KCX_HAVE_ISA_KERNELS)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            tables.push_back(detail::tokenKernelsAvx2());
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
            tables.push_back(detail::tokenKernelsAvx512());
#endif
        qInfo("token kernels compared: %zu", tables.size());
        std::mt19937_64 g(1717);
        std::exponential_distribution<double> lp(1.5);
        std::normal_distribution<double> noise(0, 0.05);
        QStringList failures;
        int checked = 0;
        for (size_t n : {size_t(1), size_t(3), size_t(8), size_t(17), size_t(255), size_t(256), size_t(257), size_t(1000)}) {
            std::vector<double> ad(n), bd(n);
            for (size_t i = 0; i < n; ++i) {
                ad[i] = -lp(g);
                bd[i] = ad[i] + noise(g);
                if (i % 11 == 3) bd[i] = ad[i] + 800;           // e^(a-b) underflows, e^(b-a) overflows
                if (i % 13 == 5) ad[i] = ad[i] + 750;           // exp(a) and ratio overflow
            }
            std::vector<float> af(ad.begin(), ad.end()), bf(bd.begin(), bd.end());
            if (n > 8) {   // a missing value on each side, a NaN, an infinity
                ad[2] = missingDouble(); af[2] = missingFloat();
                bd[4] = missingDouble(); bf[4] = missingFloat();
                ad[6] = std::numeric_limits<double>::quiet_NaN(); af[6] = std::numeric_limits<float>::quiet_NaN();
                bd[7] = -inf; bf[7] = -std::numeric_limits<float>::infinity();
            }
            auto compare = [&](auto pick, const auto* a, const auto* b) {
                for (int op = 0; op < detail::kTokenOps; ++op) {
                    std::vector<double> first;
                    size_t firstBad = 0;
                    for (size_t t = 0; t < tables.size(); ++t) {
                        std::vector<double> out(n, -7.0);
                        const size_t bad = pick(tables[t]).op[op](a, b, n, 0.2, out.data());
                        if (t == 0) {
                            first = out;
                            firstBad = bad;
                            // The formula, in long double, where inputs and result are finite.
                            for (size_t i = 0; i < n; ++i) {
                                const long double x = a[i], y = b[i], r = x - y, w = expl(r);
                                const long double want[] = {r, fabsl(r), w, fabsl(expl(x) - expl(y)), -r, r * r / 2,
                                                            w - 1 - r, w * w - 1, (w < 0.8L || w > 1.2L) ? 1.0L : 0.0L};
                                if (std::isfinite(out[i]) && std::isfinite(double(want[op])) &&
                                    fabsl(out[i] - want[op]) > 1e-12L * std::max(1.0L, fabsl(want[op])) &&
                                    !(op == 8 && fabsl(w - 1) > 0.19L && fabsl(w - 1) < 0.21L))
                                    failures << QString("op %1 n=%2 i=%3: %4, want %5").arg(op).arg(n).arg(i)
                                                    .arg(out[i], 0, 'g', 17).arg(double(want[op]), 0, 'g', 17);
                            }
                        }
                        if (bad != firstBad)
                            failures << QString("op %1 n=%2: %3 counts %4 bad, %5 counts %6").arg(op).arg(n)
                                            .arg(tables[t].isa).arg(bad).arg(tables[0].isa).arg(firstBad);
                        for (size_t i = 0; i < n; ++i)
                            if (!sameBits(out[i], first[i]) && !(std::isnan(out[i]) && std::isnan(first[i])))
                                failures << QString("op %1 n=%2 i=%3: %4 gives %5, %6 gives %7").arg(op).arg(n).arg(i)
                                                .arg(tables[t].isa).arg(out[i], 0, 'g', 17).arg(tables[0].isa)
                                                .arg(first[i], 0, 'g', 17);
                    }
                    ++checked;
                }
                // The run-level sums: the same bits everywhere, and the sums a plain loop adds.
                detail::RunSeqSums s0;
                detail::PearsonSums p0;
                for (size_t t = 0; t < tables.size(); ++t) {
                    detail::RunSeqSums s;
                    detail::PearsonSums ps;
                    pick(tables[t]).runSeq(a, b, n, &s);
                    pick(tables[t]).pearsonSeq(a, b, n, 0.25, 0.5, &ps);
                    if (t == 0) {
                        s0 = s;
                        p0 = ps;
                        long double sp = 0, sw = 0, cov = 0;
                        uint64_t pairs = 0, miss = 0;
                        for (size_t i = 0; i < n; ++i) {
                            if (isMissing(a[i]) || isMissing(b[i])) { ++miss; continue; }
                            if (!std::isfinite(a[i]) || !std::isfinite(b[i])) continue;
                            ++pairs;
                            sp += expl(a[i]);
                            const long double w = expl((long double)a[i] - b[i]);
                            if (w < 1e300L) sw += w;
                            cov += (expl(a[i]) - 0.25L) * (expl(b[i]) - 0.5L);
                        }
                        if (s.nPair != pairs || s.miss != miss)
                            failures << QString("runSeq n=%1: %2 pairs %3 missing").arg(n).arg(s.nPair).arg(s.miss);
                        auto near = [](double x, long double w) {   // beyond double's range: not finite
                            return fabsl(w) > 1.7e308L ? !std::isfinite(x) : fabsl(x - w) <= 1e-9L * std::max(1.0L, fabsl(w));
                        };
                        if (!near(s.sp, sp) || !near(s.sw, sw) || !near(ps.cov, cov))
                            failures << QString("runSeq n=%1: sums %2 %3 %4, want %5 %6 %7").arg(n)
                                            .arg(s.sp).arg(s.sw).arg(ps.cov).arg(double(sp)).arg(double(sw)).arg(double(cov));
                    }
                    const double mine[] = {s.sw, s.sw2, s.sp, s.sq, s.sumDiff, ps.cov, ps.vp, ps.vq};
                    const double want[] = {s0.sw, s0.sw2, s0.sp, s0.sq, s0.sumDiff, p0.cov, p0.vp, p0.vq};
                    for (int k = 0; k < 8; ++k)
                        if (!sameBits(mine[k], want[k]))
                            failures << QString("run sum %1 n=%2: %3 differs").arg(k).arg(n).arg(tables[t].isa);
                    if (s.nw != s0.nw || s.nPair != s0.nPair || s.miss != s0.miss || s.nf != s0.nf)
                        failures << QString("run counts n=%1: %2 differs").arg(n).arg(tables[t].isa);
                }
            };
            compare([](const detail::TokenKernels& k) -> const auto& { return k.ff; }, af.data(), bf.data());
            compare([](const detail::TokenKernels& k) -> const auto& { return k.fd; }, af.data(), bd.data());
            compare([](const detail::TokenKernels& k) -> const auto& { return k.df; }, ad.data(), bf.data());
            compare([](const detail::TokenKernels& k) -> const auto& { return k.dd; }, ad.data(), bd.data());
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures.mid(0, 5).join("\n")));
        QCOMPARE(checked, 8 * 4 * detail::kTokenOps);
    }

    // A logit that is not finite is reported (2), never summed.
    void nonFiniteRowsAreReported() {
        const auto fns = detail::logitRowGeneric();
        std::vector<double> a{0.5, 1.0, 2.0}, b{0.5, 1.0, 2.0}, scratch(6);
        double out[detail::kLogitCount];
        for (double bad : {std::numeric_limits<double>::quiet_NaN(), inf, -inf}) {
            a[1] = bad;
            QCOMPARE(fns.withJs.dd(a.data(), b.data(), 3, scratch.data(), out), 2);
        }
        a[1] = 1.0;
        QCOMPARE(fns.withJs.dd(a.data(), b.data(), 3, scratch.data(), out), 0);
        QCOMPARE(out[detail::kLogitTV], 0.0);
        QCOMPARE(out[detail::kLogitTOP1], 1.0);
    }
};

QTEST_APPLESS_MAIN(TestDetMath)
#include "test_det_math.moc"
