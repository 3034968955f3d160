// The bound chain (SPEC 5): every inequality checked on many random instances with the
// quantities computed here from first principles, the per-token bound's tightness, and
// boundChain's inputs, bounds, observed values and vacuous flags on runs built in code.
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/evaluate/bounds.h"
#include "tests/support/reference_math.h"
#include "tests/support/test_runs.h"

using namespace kcx;

namespace {

// ---- first principles ------------------------------------------------------------------
using test::softmax;

double tvOf(const std::vector<double>& p, const std::vector<double>& q) {
    double s = 0;
    for (size_t i = 0; i < p.size(); ++i)
        s += std::fabs(p[i] - q[i]);
    return 0.5 * s;
}

double driftOf(const std::vector<double>& z, const std::vector<double>& zq) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < z.size(); ++i) {
        lo = std::min(lo, z[i] - zq[i]);
        hi = std::max(hi, z[i] - zq[i]);
    }
    return 0.5 * (hi - lo);
}

// ---- runs and contracts built in code ---------------------------------------------------
struct RunBuilder {
    std::vector<std::vector<double>> train, inf;   // per sequence, the log-probs
    struct Row {
        int64_t token;
        std::vector<double> z, zq;
    };
    std::vector<Row> logits;                      // ascending token index
    std::vector<double> rewardTrain, rewardInf;

    std::shared_ptr<Run> build() const {
        auto run = test::runFromLogprobs(train, inf);
        if (!logits.empty()) {
            std::vector<int64_t> rows;
            std::vector<double> zt, zi;
            for (const Row& r : logits) {
                rows.push_back(r.token);
                zt.insert(zt.end(), r.z.begin(), r.z.end());
                zi.insert(zi.end(), r.zq.begin(), r.zq.end());
            }
            run->logits.vocab = int64_t(logits[0].z.size());
            run->logits.rows = Array<int64_t>(rows);
            run->logits.train = Column(Array<double>(zt));
            run->logits.inf = Column(Array<double>(zi));
        }
        run->rewardTrain = rewardTrain;
        run->rewardInf = rewardInf;
        return run;
    }
};

Clause maxClause(const std::string& id, const std::string& metric, double max, const char* aggregate = "max") {
    return test::maxClause(id, metric, aggregate, max);
}

std::vector<BoundStep> chain(const Contract& contract, const std::shared_ptr<Run>& run, double engineClip = 0.2) {
    MetricOptions o;
    o.threads = 1;
    o.ppoClip = engineClip;
    MetricEngine engine(run, o);
    return boundChain(contract, engine);
}

const BoundStep& stepOf(const std::vector<BoundStep>& steps, const char* name) {
    for (const BoundStep& s : steps)
        if (s.step == name)
            return s;
    throw std::runtime_error(std::string("no step ") + name);
}

bool allFinite(const std::vector<BoundStep>& steps) {
    for (const BoundStep& s : steps)
        for (const auto* v : {&s.input, &s.bound, &s.observed, &s.lower, &s.limit})
            if (*v && !std::isfinite(**v))
                return false;
    return true;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The run of chainOnBuiltRun: two sequences (lengths 3 and 2), logits at tokens 0 and 3,
// both rewards.
RunBuilder smallRun() {
    RunBuilder b;
    b.train = {{-1.0, -2.0, -0.5}, {-0.3, -0.7}};
    b.inf = {{-1.1, -1.9, -0.5}, {-0.2, -1.0}};
    b.logits = {{0, {0.0, 1.0, 2.0}, {0.1, 1.0, 1.9}}, {3, {1.0, 0.0, -1.0}, {0.5, 0.0, -0.5}}};
    b.rewardTrain = {1.0, 0.0};
    b.rewardInf = {0.5, 0.25};
    return b;
}

}  // namespace

class TestBounds : public QObject {
    Q_OBJECT
private slots:
    // (a) tv <= tanh(logit_drift / 2) on 1,000 random logit pairs; on a share of them also
    // through the metric engine and boundChain.
    void perTokenTvHoldsOnRandomPairs() {
        std::mt19937_64 rng(20261201);
        std::uniform_int_distribution<int> vocab(2, 64), kind(0, 3);
        std::normal_distribution<double> gauss(0.0, 1.0);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        const double scales[] = {1e-3, 0.1, 1.0, 5.0, 20.0};
        const double noises[] = {1e-6, 1e-3, 0.05, 0.5, 3.0};
        double worstRatio = 0;
        for (int it = 0; it < 1000; ++it) {
            const int V = vocab(rng);
            const double scale = scales[it % 5], noise = noises[(it / 5) % 5];
            std::vector<double> z(V), zq(V);
            for (int i = 0; i < V; ++i)
                z[i] = scale * gauss(rng);
            const int k = kind(rng);
            for (int i = 0; i < V; ++i) {
                double d = 0;
                if (k == 0)
                    d = noise * gauss(rng);                         // dense Gaussian noise
                else if (k == 1)
                    d = i == 0 ? noise * gauss(rng) : 0.0;          // one logit moves
                else if (k == 2)
                    d = noise * (2 * unit(rng) - 1) + 7.0;          // uniform noise plus a shift
                else
                    d = (i % 2 ? noise : -noise);                   // two-level, the extreme shape
                zq[i] = z[i] - d;
            }
            const double tv = tvOf(softmax(z), softmax(zq));
            const double eps = driftOf(z, zq);
            const double bound = std::tanh(eps / 2);
            QVERIFY2(tv <= bound + 1e-15, qPrintable(QString("it %1: tv %2 > tanh(eps/2) %3").arg(it).arg(tv).arg(bound)));
            if (bound > 1e-9)
                worstRatio = std::max(worstRatio, tv / bound);
            if (it % 10 == 0) {
                RunBuilder b;
                b.train = {{-1.0}};
                b.inf = {{-1.0}};
                b.logits = {{0, z, zq}};
                const auto steps = chain(Contract{}, b.build());
                const BoundStep& s = stepOf(steps, "tv_per_token");
                QVERIFY(s.input && s.bound && s.observed);
                QVERIFY(std::fabs(*s.input - eps) <= 1e-12 * std::max(1.0, eps));
                QVERIFY(std::fabs(*s.bound - bound) <= 1e-12);
                QVERIFY(std::fabs(*s.observed - tv) <= 1e-12);
                QVERIFY(*s.observed <= *s.bound + 1e-15);
                QVERIFY(allFinite(steps));
            }
        }
        QVERIFY(worstRatio <= 1.0 + 1e-12);
        QVERIFY(worstRatio > 0.99);   // small two-level drifts come within 1% of the bound
    }

    // (a) Sequences over V = 3, T = 4, enumerated exactly (81 sequences): TV_seq <=
    // 1 - (1 - delta)^T <= T delta, |E_p R - E_q R| <= (R_max - R_min) TV_seq,
    // |log P(y) - log Q(y)| <= T rho, per-token gradient bias <= G A_max (e^rho - 1),
    // |w - 1| <= e^rho - 1. Half the instances use one distribution per depth (products of
    // per-token distributions), half one per prefix (autoregressive).
    void sequenceBoundsHoldOnEnumeratedTrees() {
        constexpr int V = 3, T = 4, N = 81;
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        std::exponential_distribution<double> expo(1.0);
        auto randomDist = [&](double peak) {
            std::vector<double> p(V);
            double s = 0;
            for (double& x : p)
                s += x = std::pow(expo(rng), peak) + 1e-300;
            for (double& x : p)
                x /= s;
            return p;
        };
        int nearTight = 0;
        for (int it = 0; it < 400; ++it) {
            const bool perDepth = it % 2 == 0;
            const double lambdaMax = std::pow(10.0, -3.0 + 3.0 * unit(rng));   // 1e-3 .. 1
            const double peak = 0.5 + 3.0 * unit(rng);
            // Distributions keyed by prefix: node id = base-3 prefix with a depth marker.
            const int nodes = 1 + 3 + 9 + 27;
            std::vector<std::vector<double>> P(nodes), Q(nodes);
            std::vector<std::vector<double>> depthP(T), depthQ(T);
            for (int d = 0; d < T; ++d) {
                depthP[d] = randomDist(peak);
                const auto r = randomDist(peak);
                const double lam = lambdaMax * unit(rng);
                depthQ[d].resize(V);
                for (int i = 0; i < V; ++i)
                    depthQ[d][i] = (1 - lam) * depthP[d][i] + lam * r[i];
            }
            int id = 0;
            std::vector<int> firstOfDepth(T + 1);
            for (int d = 0, width = 1; d < T; ++d, width *= V) {
                firstOfDepth[d] = id;
                for (int j = 0; j < width; ++j, ++id) {
                    if (perDepth) {
                        P[id] = depthP[d];
                        Q[id] = depthQ[d];
                    } else {
                        P[id] = randomDist(peak);
                        const auto r = randomDist(peak);
                        const double lam = lambdaMax * unit(rng);
                        Q[id].resize(V);
                        for (int i = 0; i < V; ++i)
                            Q[id][i] = (1 - lam) * P[id][i] + lam * r[i];
                    }
                }
            }
            double delta = 0, rho = 0;
            for (int n = 0; n < nodes; ++n) {
                delta = std::max(delta, tvOf(P[n], Q[n]));
                for (int i = 0; i < V; ++i)
                    rho = std::max(rho, std::fabs(std::log(P[n][i]) - std::log(Q[n][i])));
            }
            // Per-token: gradient bias for a random score g*A in [-1, 1] (G A_max = 1),
            // and the ratio's distance from 1.
            for (int n = 0; n < nodes; ++n) {
                double bias = 0, rhoNode = 0;
                for (int i = 0; i < V; ++i) {
                    const double f = 2 * unit(rng) - 1;
                    bias += (P[n][i] - Q[n][i]) * f;   // E_train f - E_inf f = E_inf[(w - 1) f]
                    const double r = std::log(P[n][i]) - std::log(Q[n][i]);
                    rhoNode = std::max(rhoNode, std::fabs(r));
                    QVERIFY(std::fabs(std::exp(r) - 1) <= std::expm1(rhoNode) + 1e-15);
                }
                QVERIFY(std::fabs(bias) <= std::expm1(rhoNode) + 1e-15);
                QVERIFY(std::fabs(bias) <= 2.0);   // the trivial maximum 2 G A_max
            }
            // Sequences: enumerate all 81.
            double tvSeq = 0, reward = 0, rewardWide = 0;
            for (int y = 0; y < N; ++y) {
                double lp = 0, lq = 0;
                int node = 0, prefix = 0;
                for (int d = 0, rest = y; d < T; ++d) {
                    const int tok = rest % V;
                    rest /= V;
                    node = firstOfDepth[d] + prefix;
                    lp += std::log(P[node][tok]);
                    lq += std::log(Q[node][tok]);
                    prefix = prefix * V + tok;
                }
                const double py = std::exp(lp), qy = std::exp(lq);
                tvSeq += 0.5 * std::fabs(py - qy);
                const double R = unit(rng);
                reward += (py - qy) * R;
                rewardWide += (py - qy) * (-2.0 + 5.0 * R);   // R in [-2, 3]
                QVERIFY(std::fabs(lp - lq) <= T * rho * (1 + 1e-12) + 1e-12);
            }
            const double bound = 1 - std::pow(1 - delta, T);
            QVERIFY2(tvSeq <= bound + 1e-12, qPrintable(QString("it %1: TV_seq %2 > %3").arg(it).arg(tvSeq).arg(bound)));
            QVERIFY(bound <= T * delta + 1e-15);
            QVERIFY(std::fabs(reward) <= tvSeq + 1e-12);
            QVERIFY(std::fabs(rewardWide) <= 5.0 * tvSeq + 1e-12);
            if (tvSeq > 0.5 * bound)
                ++nearTight;
        }
        QVERIFY(nearTight > 0);
    }

    // The sequence bound is reached: p = (1, 0, 0), q = (1 - delta, delta, 0) at every
    // position, independent; the sequences differ exactly when some token leaves id 0.
    void sequenceBoundIsTight() {
        for (double delta : {1e-3, 0.05, 0.3, 0.9}) {
            const int V = 3, T = 4;
            const std::vector<double> p{1.0, 0.0, 0.0}, q{1 - delta, delta, 0.0};
            double tvSeq = 0;
            for (int y = 0; y < 81; ++y) {
                double py = 1, qy = 1;
                for (int d = 0, rest = y; d < T; ++d, rest /= V) {
                    py *= p[rest % V];
                    qy *= q[rest % V];
                }
                tvSeq += 0.5 * std::fabs(py - qy);
            }
            QVERIFY(std::fabs(tvSeq - (1 - std::pow(1 - delta, T))) <= 1e-12);
        }
    }

    // (b) The per-token bound is tight: z = (eps/2, -eps/2), z' = (-eps/2, eps/2) has
    // d = (eps, -eps), logit_drift = eps, and TV = sigma(eps) - sigma(-eps) = tanh(eps/2).
    void perTokenBoundIsTight() {
        for (double eps : {1e-4, 0.01, 0.3, 1.0, 2.5, 8.0}) {
            const std::vector<double> z{eps / 2, -eps / 2}, zq{-eps / 2, eps / 2};
            QCOMPARE(driftOf(z, zq), eps);
            const double tv = tvOf(softmax(z), softmax(zq));
            QVERIFY2(std::fabs(tv - std::tanh(eps / 2)) <= 1e-12, qPrintable(QString::number(eps)));
            RunBuilder b;
            b.train = {{-0.5}};
            b.inf = {{-0.5}};
            b.logits = {{0, z, zq}};
            const auto steps = chain(Contract{}, b.build());
            const BoundStep& s = stepOf(steps, "tv_per_token");
            QVERIFY(s.input && s.bound && s.observed);
            QVERIFY(std::fabs(*s.input - eps) <= 1e-12);
            QVERIFY(std::fabs(*s.bound - std::tanh(eps / 2)) <= 1e-12);
            QVERIFY(std::fabs(*s.observed - *s.bound) <= 1e-12);   // the run reaches its bound
            QVERIFY(!s.vacuous);
        }
    }

    // (c) Every step on a small run, against values worked out here.
    void chainOnBuiltRun() {
        const RunBuilder b = smallRun();
        Contract contract;
        contract.bounds.rewardRange = std::make_pair(-1.0, 2.0);
        contract.bounds.gradNorm = 2.0;
        contract.bounds.advantageMax = 3.0;
        const auto steps = chain(contract, b.build());
        QCOMPARE(steps.size(), size_t(6));
        const char* order[] = {"tv_per_token", "tv_sequence", "reward_drift", "pg_bias", "seq_ratio", "ppo_clip"};
        for (size_t i = 0; i < 6; ++i)
            QCOMPARE(steps[i].step, std::string(order[i]));
        QVERIFY(allFinite(steps));

        // Hand values.
        double eps = 0, tvMax = 0;
        for (const auto& r : b.logits) {
            eps = std::max(eps, driftOf(r.z, r.zq));
            tvMax = std::max(tvMax, tvOf(softmax(r.z), softmax(r.zq)));
        }
        QVERIFY(std::fabs(eps - 0.5) < 1e-15);
        double rho = 0, maxSeqAbs = 0, seqTvEstimate = 0;
        int outside = 0, tokens = 0;
        for (size_t s = 0; s < b.train.size(); ++s) {
            double sum = 0;
            for (size_t t = 0; t < b.train[s].size(); ++t) {
                const double r = b.train[s][t] - b.inf[s][t];
                rho = std::max(rho, std::fabs(r));
                sum += r;
                const double w = std::exp(r);
                outside += (w < 0.8 || w > 1.2);
                ++tokens;
            }
            maxSeqAbs = std::max(maxSeqAbs, std::fabs(sum));
            seqTvEstimate += std::max(0.0, 1 - std::exp(sum)) / 2;
        }
        const double delta = std::tanh(eps / 2), T = 3;
        const double tvSeq = 1 - std::pow(1 - delta, T);
        const auto near = [](std::optional<double> v, double want) {
            return v && std::fabs(*v - want) <= 1e-12 * std::max(1.0, std::fabs(want));
        };

        const BoundStep& tv = stepOf(steps, "tv_per_token");
        QVERIFY(near(tv.input, eps));
        QVERIFY(near(tv.bound, delta));
        QVERIFY(near(tv.observed, tvMax));
        QVERIFY(!tv.vacuous);
        QVERIFY(contains(tv.inputName, "observed max logit_drift"));

        const BoundStep& seq = stepOf(steps, "tv_sequence");
        QVERIFY(near(seq.input, delta));
        QVERIFY(near(seq.bound, tvSeq));
        QVERIFY(near(seq.observed, seqTvEstimate));
        QVERIFY(!seq.vacuous);
        QVERIFY(contains(seq.title, "T delta"));
        QVERIFY(contains(seq.inputName, "T = 3"));

        const BoundStep& rew = stepOf(steps, "reward_drift");
        QVERIFY(near(rew.input, tvSeq));
        QVERIFY(near(rew.bound, 3.0 * tvSeq));
        QVERIFY(near(rew.observed, 0.125));   // diffs -0.5 and 0.25
        QVERIFY(!rew.vacuous);

        const BoundStep& pg = stepOf(steps, "pg_bias");
        QVERIFY(std::fabs(rho - 0.3) < 1e-12);
        QVERIFY(near(pg.input, rho));
        QVERIFY(near(pg.bound, 6.0 * std::expm1(rho)));
        QVERIFY(!pg.observed);
        QVERIFY(!pg.vacuous);

        const BoundStep& sr = stepOf(steps, "seq_ratio");
        QVERIFY(near(sr.input, rho));
        QVERIFY(near(sr.lower, std::exp(-T * rho)));
        QVERIFY(near(sr.bound, std::exp(T * rho)));
        QVERIFY(near(sr.observed, std::exp(maxSeqAbs)));
        QVERIFY(*sr.observed <= *sr.bound);
        QVERIFY(!sr.vacuous);

        const BoundStep& pc = stepOf(steps, "ppo_clip");
        QVERIFY(near(pc.bound, std::expm1(rho)));
        QVERIFY(near(pc.limit, 0.2));
        QVERIFY(pc.exceedsLimit);   // e^0.3 - 1 = 0.35 > 0.2
        QVERIFY(contains(pc.title, "clipping acts at identical weights"));
        QCOMPARE(outside, 1);
        QVERIFY(near(pc.observed, double(outside) / tokens));
        QVERIFY(!pc.vacuous);

        // Without G and A_max the bound is per unit G A_max.
        Contract plain;
        const auto s2 = chain(plain, b.build());
        const BoundStep& pg2 = stepOf(s2, "pg_bias");
        QVERIFY(near(pg2.bound, std::expm1(rho)));
        QVERIFY(contains(pg2.title, "x G A_max"));

        // The contract's clip is used even when the engine was built with another.
        Contract tight;
        tight.bounds.ppoClip = 0.05;
        const auto s3 = chain(tight, b.build(), 0.2);
        QVERIFY(near(stepOf(s3, "ppo_clip").observed, 4.0 / 5.0));   // only r = 0 stays inside
        QVERIFY(near(stepOf(s3, "ppo_clip").limit, 0.05));
        // A wide clip: the kernel pair alone does not reach it.
        Contract wide;
        wide.bounds.ppoClip = 0.5;
        const auto s4 = chain(wide, b.build(), 0.5);
        QVERIFY(!stepOf(s4, "ppo_clip").exceedsLimit);
        QVERIFY(contains(stepOf(s4, "ppo_clip").title, "does not act"));
        QVERIFY(near(stepOf(s4, "ppo_clip").observed, 0.0));
    }

    // (c) Vacuous flags and missing inputs.
    void vacuousAndMissing() {
        const RunBuilder b = smallRun();
        const auto run = b.build();

        // Long horizon: tv_sequence (and reward_drift) vacuous; short: not.
        Contract longT;
        longT.bounds.seqLen = 1000;
        longT.bounds.rewardRange = std::make_pair(0.0, 1.0);
        auto s = chain(longT, run);
        QVERIFY(!stepOf(s, "tv_per_token").vacuous);
        QVERIFY(stepOf(s, "tv_sequence").vacuous);
        QVERIFY(stepOf(s, "reward_drift").vacuous);
        QVERIFY(!stepOf(s, "seq_ratio").vacuous);          // T rho = 300
        Contract shortT = longT;
        shortT.bounds.seqLen = 10;
        s = chain(shortT, run);
        QVERIFY(!stepOf(s, "tv_sequence").vacuous);
        QVERIFY(contains(stepOf(s, "tv_sequence").inputName, "T = 10 (bounds.seq_len)"));

        // T rho > 700: the sequence ratio's interval is vacuous and has no numbers.
        Contract veryLong;
        veryLong.bounds.seqLen = 3000;
        s = chain(veryLong, run);
        QVERIFY(stepOf(s, "seq_ratio").vacuous);
        QVERIFY(!stepOf(s, "seq_ratio").bound);
        QVERIFY(!stepOf(s, "seq_ratio").lower);
        QVERIFY(allFinite(s));

        // Large epsilon from a clause: tanh(20) rounds to 1, everything downstream vacuous.
        Contract bigEps;
        bigEps.clauses.push_back(maxClause("N1", "logit_drift", 40.0));
        bigEps.bounds.rewardRange = std::make_pair(0.0, 1.0);
        s = chain(bigEps, run);
        QVERIFY(stepOf(s, "tv_per_token").vacuous);
        QVERIFY(stepOf(s, "tv_sequence").vacuous);
        QVERIFY(stepOf(s, "reward_drift").vacuous);

        // rho >= ln 3: e^rho - 1 >= 2, the trivial maximum of the gradient bias (2 G A_max).
        Contract bigRho;
        bigRho.clauses.push_back(maxClause("N2", "abs_log_ratio", 1.2));
        s = chain(bigRho, run);
        QVERIFY(stepOf(s, "pg_bias").vacuous);
        QVERIFY(stepOf(s, "ppo_clip").exceedsLimit);
        QVERIFY(!stepOf(s, "ppo_clip").vacuous);

        // rho so large that e^rho overflows: no bound, vacuous, still finite.
        Contract hugeRho;
        hugeRho.clauses.push_back(maxClause("N2", "abs_log_ratio", 800.0));
        s = chain(hugeRho, run);
        QVERIFY(stepOf(s, "pg_bias").vacuous && !stepOf(s, "pg_bias").bound);
        QVERIFY(stepOf(s, "seq_ratio").vacuous && !stepOf(s, "seq_ratio").bound);
        QVERIFY(!stepOf(s, "ppo_clip").bound && stepOf(s, "ppo_clip").exceedsLimit);
        QVERIFY(allFinite(s));

        // reward_range absent: the step is listed, without a bound, saying why.
        s = chain(Contract{}, run);
        const BoundStep& rew = stepOf(s, "reward_drift");
        QVERIFY(!rew.bound);
        QVERIFY(rew.observed);
        QVERIFY(contains(rew.title, "reward_range"));

        // No logits and no clause: no epsilon, and nothing downstream of it.
        RunBuilder nl = smallRun();
        nl.logits.clear();
        nl.rewardTrain.clear();
        nl.rewardInf.clear();
        Contract withRange;
        withRange.bounds.rewardRange = std::make_pair(0.0, 1.0);
        s = chain(withRange, nl.build());
        QCOMPARE(s.size(), size_t(6));
        const BoundStep& tv = stepOf(s, "tv_per_token");
        QVERIFY(!tv.input && !tv.bound && !tv.observed);
        QVERIFY(contains(tv.title, "needs full logits or a logit_drift clause"));
        QVERIFY(!stepOf(s, "tv_sequence").bound);
        QVERIFY(!stepOf(s, "reward_drift").bound);
        QVERIFY(!stepOf(s, "reward_drift").observed);   // no rewards either
        QVERIFY(stepOf(s, "pg_bias").bound);            // log-probs still give rho
        QVERIFY(allFinite(s));

        // Top-k only: the observed per-token TV is the certified lower bound, named so.
        auto tk = nl.build();
        const size_t M = tk->tokenCount();
        std::vector<int32_t> ids;
        std::vector<double> la, lb;
        for (size_t i = 0; i < M; ++i) {
            ids.insert(ids.end(), {0, 1});
            la.insert(la.end(), {std::log(0.6), std::log(0.3)});
            lb.insert(lb.end(), {std::log(0.5), std::log(0.3)});
        }
        tk->topkTrain = TopK{2, Array<int32_t>(ids), Column(Array<double>(la))};
        tk->topkInf = TopK{2, Array<int32_t>(ids), Column(Array<double>(lb))};
        s = chain(Contract{}, tk);
        const BoundStep& tv2 = stepOf(s, "tv_per_token");
        QVERIFY(tv2.observed && std::fabs(*tv2.observed - 0.1) < 1e-12);   // (0.1 + 0 + 0.1) / 2
        QVERIFY(contains(tv2.observedName, "tv_lower"));

        // An observed sequence log ratio beyond 700: no number, the name says why.
        RunBuilder far;
        far.train = {{0.0}};
        far.inf = {{-800.0}};
        s = chain(Contract{}, far.build());
        QVERIFY(!stepOf(s, "seq_ratio").observed);
        QVERIFY(contains(stepOf(s, "seq_ratio").observedName, "overflows"));
        QVERIFY(stepOf(s, "seq_ratio").vacuous);
        QVERIFY(allFinite(s));

        // An empty run: every step listed, nothing to compute, nothing non-finite.
        RunBuilder empty;
        s = chain(Contract{}, empty.build());
        QCOMPARE(s.size(), size_t(6));
        QVERIFY(allFinite(s));
    }

    // (d) A logit_drift clause's threshold is the epsilon, not the observed maximum; only
    // clauses that cover the whole run with aggregate max count, and the smallest wins.
    void clauseThresholdIsEpsilon() {
        const auto run = smallRun().build();   // observed max logit_drift 0.5
        Contract c;
        c.clauses.push_back(maxClause("N1", "logit_drift", 0.7));
        c.clauses.push_back(maxClause("N2", "logit_drift", 0.2));
        Clause sliced = maxClause("N3", "logit_drift", 0.01);
        sliced.where.anyOf["task"] = {"math"};
        c.clauses.push_back(sliced);
        c.clauses.push_back(maxClause("N4", "logit_drift", 0.05, "p99"));
        auto s = chain(c, run);
        const BoundStep& tv = stepOf(s, "tv_per_token");
        QVERIFY(tv.input && *tv.input == 0.2);
        QVERIFY(std::fabs(*tv.bound - std::tanh(0.1)) < 1e-15);
        QVERIFY(contains(tv.inputName, "N2"));
        QVERIFY(contains(tv.inputName, "contract guarantee"));
        QVERIFY(*tv.observed > *tv.bound);   // the run breaks the guarantee: observed shows it

        Contract half;
        half.clauses.push_back(maxClause("N1", "logit_drift", 0.5));
        s = chain(half, run);
        QVERIFY(*stepOf(s, "tv_per_token").input == 0.5);
        QVERIFY(std::fabs(*stepOf(s, "tv_per_token").bound - std::tanh(0.25)) < 1e-15);

        // And an abs_log_ratio clause gives rho.
        Contract r;
        r.clauses.push_back(maxClause("N5", "abs_log_ratio", 0.05));
        s = chain(r, run);
        QVERIFY(*stepOf(s, "pg_bias").input == 0.05);
        QVERIFY(std::fabs(*stepOf(s, "ppo_clip").bound - std::expm1(0.05)) < 1e-15);
        QVERIFY(!stepOf(s, "ppo_clip").exceedsLimit);
        QVERIFY(contains(stepOf(s, "seq_ratio").inputName, "N5"));
    }
};

QTEST_GUILESS_MAIN(TestBounds)
#include "test_bounds.moc"
