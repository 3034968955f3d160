// The metric engine (SPEC 2) against closed forms worked out by hand, and against the
// inequalities that must hold on any input.
#include <QFile>
#include <QtTest/QTest>
#include <algorithm>
#include <limits>
#include <cstring>

#include <cmath>
#include <random>

#include "core/metrics/metrics.h"
#include "tests/support/reference_math.h"
#include "tests/support/test_runs.h"

using namespace kcx;

namespace {

// Builds a run from plain vectors: seqs[s] = (lp_train, lp_inf) of sequence s.
struct RunBuilder {
    std::vector<std::vector<double>> train, inf;
    std::shared_ptr<Run> build() const { return test::runFromLogprobs(train, inf); }
};

std::shared_ptr<const MetricValues> metric(const std::shared_ptr<Run>& run, const char* name, int threads = 0) {
    MetricOptions o;
    o.threads = threads;
    MetricEngine e(run, o);
    return e.get(name);
}

// A run with one token whose full logits are z (train) and zq (inf), and optionally top-k.
std::shared_ptr<Run> logitRun(const std::vector<double>& z, const std::vector<double>& zq) {
    RunBuilder b;
    b.train = {{-1}};
    b.inf = {{-1}};
    auto run = b.build();
    run->logits.vocab = int64_t(z.size());
    run->logits.rows = Array<int64_t>(std::vector<int64_t>{0});
    run->logits.train = Column(Array<double>(z));
    run->logits.inf = Column(Array<double>(zq));
    return run;
}

void setTopk(Run& run, const std::vector<int32_t>& idsA, const std::vector<double>& lpA,
             const std::vector<int32_t>& idsB, const std::vector<double>& lpB) {
    run.topkTrain.k = int(idsA.size());
    run.topkTrain.ids = Array<int32_t>(idsA);
    run.topkTrain.logp = Column(Array<double>(lpA));
    run.topkInf.k = int(idsB.size());
    run.topkInf.ids = Array<int32_t>(idsB);
    run.topkInf.logp = Column(Array<double>(lpB));
}

double one(const std::shared_ptr<Run>& run, const char* name) {
    const auto v = metric(run, name);
    return v->count ? v->values[0] : NAN;
}

// Softmax worked out directly in the test, for the inequality checks.
using test::softmax;

}  // namespace

class TestMetrics : public QObject {
    Q_OBJECT
private slots:
    // docs/metrics.md's "What each metric means" and the catalogue (whose lines the window
    // shows as tooltips) say the same, metric for metric, in the same order.
    void docsTableIsTheCatalogue() {
        QFile f(QStringLiteral(KCX_SOURCE_DIR "/docs/metrics.md"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        const int at = text.indexOf(QStringLiteral("## What each metric means"));
        QVERIFY(at >= 0);
        const int end = text.indexOf(QStringLiteral("\n## "), at + 3);
        const QStringList lines = text.mid(at, end - at).split(QLatin1Char('\n'));
        QStringList rows;
        for (const QString& l : lines)
            if (l.startsWith(QStringLiteral("| `")))
                rows << l;
        const auto& catalog = kcx::metricCatalog();
        QCOMPARE(rows.size(), int(catalog.size()));
        for (size_t i = 0; i < catalog.size(); ++i) {
            const auto& m = catalog[i];
            const QString want = QStringLiteral("| `%1` | %2 | %3 |")
                                     .arg(QString::fromStdString(m.name), QString::fromLatin1(kcx::levelName(m.level)),
                                          QString::fromStdString(m.description).replace(QLatin1Char('|'), QStringLiteral("\\|")));
            QCOMPARE(rows[int(i)], want);
        }
    }

    // lp_train = log 1/2, lp_inf = log 1/4: r = log 2, w = 2.
    void logprobClosedForms() {
        RunBuilder b;
        b.train = {{std::log(0.5)}};
        b.inf = {{std::log(0.25)}};
        const auto run = b.build();
        const double l2 = std::log(2.0);
        QCOMPARE(one(run, "log_ratio"), l2);
        QCOMPARE(one(run, "abs_log_ratio"), l2);
        QCOMPARE(one(run, "ratio"), 2.0);
        QCOMPARE(one(run, "prob_diff"), 0.25);
        QCOMPARE(one(run, "k1"), -l2);
        QCOMPARE(one(run, "k2"), 0.5 * l2 * l2);
        QCOMPARE(one(run, "k3"), 1.0 - l2);
        QCOMPARE(one(run, "chi2"), 3.0);
        QCOMPARE(one(run, "clip_excess"), 1.0);
    }

    void clipBudget() {
        RunBuilder b;   // w = 1.1 (inside 0.2), 0.7 (outside), 1.25 (outside)
        b.train = {{std::log(0.11), std::log(0.07), std::log(0.125)}};
        b.inf = {{std::log(0.1), std::log(0.1), std::log(0.1)}};
        const auto v = metric(b.build(), "clip_excess");
        QCOMPARE(v->values, (std::vector<double>{0, 1, 1}));
    }

    void identicalKernelsGiveZeros() {
        std::mt19937_64 rng(1);
        std::uniform_real_distribution<double> u(-8, 0);
        RunBuilder b;
        for (int s = 0; s < 50; ++s) {
            b.train.emplace_back();
            for (int t = 0; t < 40; ++t)
                b.train.back().push_back(u(rng));
        }
        b.inf = b.train;
        const auto run = b.build();
        for (const char* m : {"log_ratio", "abs_log_ratio", "prob_diff", "k1", "k2", "k3", "clip_excess",
                              "seq_log_ratio", "seq_max_abs_log_ratio"}) {
            const auto v = metric(run, m);
            for (double x : v->values)
                QCOMPARE(x, 0.0);
        }
        QCOMPARE(metric(run, "ess")->values[0], 1.0);
        QCOMPARE(metric(run, "prob_pearson")->values[0], 1.0);
        QCOMPARE(metric(run, "log_ppl_diff")->values[0], 0.0);
        const std::vector<double> z = {1, -2, 0.5, 3};
        const auto lr = logitRun(z, z);
        for (const char* m : {"tv", "kl_train_inf", "kl_inf_train", "js", "max_abs_logit_diff", "logit_drift",
                              "entropy_diff"})
            QCOMPARE(one(lr, m), 0.0);
        QCOMPARE(one(lr, "top1_agree"), 1.0);
    }

    // Two outcomes: p = (1/2, 1/2), q = (s, 1-s) with s = sigmoid(a).
    void twoPointLogits() {
        const double a = 1.3, s = 1 / (1 + std::exp(-a));
        const auto run = logitRun({0, 0}, {a, 0});
        QVERIFY(std::fabs(one(run, "tv") - std::fabs(0.5 - s)) < 1e-15);
        QVERIFY(std::fabs(one(run, "kl_train_inf") - (0.5 * std::log(0.5 / s) + 0.5 * std::log(0.5 / (1 - s)))) < 1e-15);
        QVERIFY(std::fabs(one(run, "kl_inf_train") - (s * std::log(s / 0.5) + (1 - s) * std::log((1 - s) / 0.5))) < 1e-15);
        const double m1 = (0.5 + s) / 2, m2 = (0.5 + 1 - s) / 2;
        const double js = 0.5 * (0.5 * std::log(0.5 / m1) + 0.5 * std::log(0.5 / m2)) +
                          0.5 * (s * std::log(s / m1) + (1 - s) * std::log((1 - s) / m2));
        QVERIFY(std::fabs(one(run, "js") - js) < 1e-15);
        QCOMPARE(one(run, "max_abs_logit_diff"), a);
        QCOMPARE(one(run, "logit_drift"), a / 2);
        QVERIFY(std::fabs(one(run, "entropy_train") - std::log(2.0)) < 1e-15);
        QVERIFY(std::fabs(one(run, "entropy_inf") - (-s * std::log(s) - (1 - s) * std::log(1 - s))) < 1e-15);
        QCOMPARE(one(run, "top1_agree"), 1.0);   // both rank outcome 0 first (train's tie goes to index 0)
        QCOMPARE(one(logitRun({0, 0}, {0, a}), "top1_agree"), 0.0);
    }

    void constantShiftIsNoDrift() {
        const std::vector<double> z = {0.3, -1, 2.5, 0, 7};
        std::vector<double> shifted = z;
        for (double& x : shifted)
            x += 3;
        const auto run = logitRun(z, shifted);
        QVERIFY(std::fabs(one(run, "logit_drift")) < 1e-15);
        QCOMPARE(one(run, "max_abs_logit_diff"), 3.0);
        QVERIFY(one(run, "tv") < 1e-15);
        QVERIFY(one(run, "kl_train_inf") < 1e-15);
    }

    // Train top-2 {1: .5, 2: .3}, inf top-2 {2: .4, 3: .35}: only id 2 is shared.
    void topkByHand() {
        RunBuilder b;
        b.train = {{-1}};
        b.inf = {{-1}};
        auto run = b.build();
        setTopk(*run, {1, 2}, {std::log(0.5), std::log(0.3)}, {3, 2}, {std::log(0.35), std::log(0.4)});
        QVERIFY(std::fabs(one(run, "tv_lower") - 0.5 * (0.1 + 0.1)) < 1e-15);
        QVERIFY(std::fabs(one(run, "kl_lower") - (0.3 * std::log(0.3 / 0.4) + 0.7 * std::log(0.7 / 0.6))) < 1e-15);
        QCOMPARE(one(run, "top1_agree"), 0.0);   // inf row was unsorted: its first is id 2
        QCOMPARE(metric(run, "tv")->missing, uint64_t(1));   // no logits: missing, not zero
    }

    // On random distributions: tv_lower <= tv <= tanh(drift/2), kl_lower <= kl, k3 >= 0.
    void inequalitiesHold() {
        std::mt19937_64 rng(42);
        std::normal_distribution<double> n(0, 1);
        for (int trial = 0; trial < 300; ++trial) {
            const size_t V = 2 + rng() % 60, k = 1 + rng() % std::min<size_t>(V, 8);
            const double scale = std::exp(n(rng) * 1.5), noise = std::exp(n(rng) * 2 - 2);
            std::vector<double> z(V), zq(V);
            for (size_t i = 0; i < V; ++i) {
                z[i] = n(rng) * scale;
                zq[i] = z[i] + n(rng) * noise;
            }
            const auto exact = logitRun(z, zq);
            const double tv = one(exact, "tv"), kl = one(exact, "kl_train_inf");
            QVERIFY(tv <= std::tanh(one(exact, "logit_drift") / 2) + 1e-12);
            QVERIFY(one(exact, "js") <= std::log(2.0) + 1e-12);
            QVERIFY(one(exact, "js") <= tv * std::log(2.0) + 1e-12 || tv < 1e-9);   // JS <= TV log 2
            // Top-k rows taken from the same distributions, without the logits.
            const auto p = softmax(z), q = softmax(zq);
            auto topk = [&](const std::vector<double>& prob, std::vector<int32_t>& ids, std::vector<double>& lp) {
                std::vector<size_t> idx(V);
                std::iota(idx.begin(), idx.end(), 0);
                std::partial_sort(idx.begin(), idx.begin() + ptrdiff_t(k), idx.end(),
                                  [&](size_t x, size_t y) { return prob[x] > prob[y]; });
                for (size_t j = 0; j < k; ++j) {
                    ids.push_back(int32_t(idx[j]));
                    lp.push_back(std::log(prob[idx[j]]));
                }
            };
            std::vector<int32_t> ia, ib;
            std::vector<double> la, lb;
            topk(p, ia, la);
            topk(q, ib, lb);
            RunBuilder b;
            b.train = {{la[0]}};
            b.inf = {{std::log(q[size_t(ia[0])])}};
            auto lower = b.build();
            setTopk(*lower, ia, la, ib, lb);
            QVERIFY2(one(lower, "tv_lower") <= tv + 1e-12, qPrintable(QString::number(trial)));
            QVERIFY2(one(lower, "kl_lower") <= kl + 1e-12, qPrintable(QString("%1: V=%2 k=%3 kl_lower=%4 kl=%5").arg(trial).arg(V).arg(k).arg(one(lower, "kl_lower"), 0, 'g', 17).arg(kl, 0, 'g', 17)));
            QVERIFY(one(lower, "k3") >= 0);
            // With both top-k and logits at the position, the exact value wins.
            setTopk(*exact, ia, la, ib, lb);
            QCOMPARE(one(exact, "tv_lower"), tv);
        }
    }

    void sequenceMetrics() {
        RunBuilder b;   // r = [0.1, -0.3]; second sequence has a missing value
        b.train = {{-1.0, -2.3}, {-1, missingDouble()}, {-1, NAN}};
        b.inf = {{-1.1, -2.0}, {-1, -1}, {-1, -1}};
        const auto run = b.build();
        auto v = metric(run, "seq_log_ratio");
        QVERIFY(std::fabs(v->values[0] - (-0.2)) < 1e-12);
        QVERIFY(isMissing(v->values[1]));                            // the gap is marked missing ...
        QVERIFY(std::isnan(v->values[2]) && !isMissing(v->values[2]));   // ... the NaN non-finite
        QCOMPARE(v->count, uint64_t(1));
        QCOMPARE(v->missing, uint64_t(1));
        QCOMPARE(v->nonfinite, uint64_t(1));
        QVERIFY(std::fabs(metric(run, "seq_abs_log_ratio")->values[0] - 0.2) < 1e-12);
        QVERIFY(std::fabs(metric(run, "seq_max_abs_log_ratio")->values[0] - 0.3) < 1e-12);
        QVERIFY(std::fabs(metric(run, "seq_mean_abs_log_ratio")->values[0] - 0.2) < 1e-12);
        QVERIFY(std::fabs(metric(run, "seq_geo_ratio")->values[0] - std::exp(-0.1)) < 1e-12);
        QVERIFY(std::fabs(metric(run, "seq_ratio")->values[0] - std::exp(-0.2)) < 1e-12);
        QCOMPARE(metric(run, "length")->values, (std::vector<double>{2, 2, 2}));
        // Per-token counts: one missing and one non-finite position.
        const auto lr = metric(run, "log_ratio");
        QCOMPARE(lr->count, uint64_t(4));
        QCOMPARE(lr->missing, uint64_t(1));
        QCOMPARE(lr->nonfinite, uint64_t(1));
        QVERIFY(!metric(run, "reward_diff")->supported());
    }

    void seqRatioIsClamped() {
        RunBuilder b;
        b.train = {std::vector<double>(30, -0.01)};
        b.inf = {std::vector<double>(30, -1.01)};   // sum r = 30
        QCOMPARE(metric(b.build(), "seq_ratio")->values[0], std::exp(20.0));
    }

    // w = (1, 2): ess = 3^2 / (2 * 5); Pearson of p = (.5,.25,.125) against q = (.4,.3,.1).
    void runMetrics() {
        RunBuilder b;
        b.train = {{std::log(0.5)}, {std::log(0.5)}};
        b.inf = {{std::log(0.5)}, {std::log(0.25)}};
        QVERIFY(std::fabs(metric(b.build(), "ess")->values[0] - 0.9) < 1e-15);
        RunBuilder c;
        c.train = {{std::log(0.5), std::log(0.25)}, {std::log(0.125)}};
        c.inf = {{std::log(0.4), std::log(0.3)}, {std::log(0.1)}};
        const double mp = 0.875 / 3, mq = 0.8 / 3;
        const double px[] = {0.5, 0.25, 0.125}, qx[] = {0.4, 0.3, 0.1};
        double sxy = 0, sxx = 0, syy = 0;
        for (int i = 0; i < 3; ++i) {
            sxy += (px[i] - mp) * (qx[i] - mq);
            sxx += (px[i] - mp) * (px[i] - mp);
            syy += (qx[i] - mq) * (qx[i] - mq);
        }
        const auto run = c.build();
        QVERIFY(std::fabs(metric(run, "prob_pearson")->values[0] - sxy / std::sqrt(sxx * syy)) < 1e-12);
        const double seq0 = ((std::log(0.4) - std::log(0.5)) + (std::log(0.3) - std::log(0.25))) / 2;
        const double seq1 = std::log(0.1) - std::log(0.125);
        QVERIFY(std::fabs(metric(run, "log_ppl_diff")->values[0] - (seq0 + seq1) / 2) < 1e-12);
    }

    void summaryAndThreads() {
        std::mt19937_64 rng(3);
        std::normal_distribution<double> n(0, 0.1);
        RunBuilder b;
        for (int s = 0; s < 300; ++s) {
            b.train.emplace_back();
            b.inf.emplace_back();
            for (int t = 0; t < 1 + s % 97; ++t) {
                b.train.back().push_back(-std::fabs(n(rng)) - 0.5);
                b.inf.back().push_back(b.train.back().back() + n(rng));
            }
        }
        const auto run = b.build();
        const auto one = metric(run, "abs_log_ratio", 1), four = metric(run, "abs_log_ratio", 4);
        QCOMPARE(one->values, four->values);
        std::vector<double> sorted = one->values;
        std::sort(sorted.begin(), sorted.end());
        const Summary s = summarize(*one);
        QCOMPARE(*s.max, sorted.back());
        QCOMPARE(*s.min, sorted.front());
        const double h = double(sorted.size() - 1) * 0.5;
        const size_t lo = size_t(h);
        QCOMPARE(*s.p50, sorted[lo] + (h - double(lo)) * (sorted[lo + 1] - sorted[lo]));
        QCOMPARE(metric(run, "ess", 1)->values[0], metric(run, "ess", 3)->values[0]);
    }

    // take() hands the array over (the caller may change it) and the next get() computes it
    // again; nothing is taken while somebody else holds it. A lean engine keeps no array it
    // computed for moments(). A released array is reused by the next metric (same values
    // as a fresh engine's).
    void takeReleaseAndLean() {
        RunBuilder b;
        b.train = {{std::log(0.5), std::log(0.25)}, {std::log(0.125)}};
        b.inf = {{std::log(0.25), std::log(0.25)}, {std::log(0.5)}};
        MetricEngine e(b.build());
        const double l2 = std::log(2.0);
        {
            const auto held = e.get("abs_log_ratio");
            QVERIFY(!e.take("abs_log_ratio"));   // held: not taken
            QCOMPARE(held->values.size(), size_t(3));
        }
        auto taken = e.take("abs_log_ratio");
        QVERIFY(taken);
        QCOMPARE(taken->values[0], l2);
        QCOMPARE(taken->values[1], 0.0);
        QCOMPARE(taken->values[2], 2 * l2);
        taken->values[0] = 99;   // the engine's next array is its own
        QCOMPARE(e.get("abs_log_ratio")->values[0], l2);
        e.release("abs_log_ratio");
        const auto k1 = e.get("k1");   // written into the released array
        QCOMPARE(k1->values[0], -l2);
        QCOMPARE(k1->values[1], 0.0);
        QCOMPARE(k1->values[2], 2 * l2);
        QCOMPARE(k1->count, uint64_t(3));

        MetricEngine lean(b.build());
        lean.setLean();
        const auto m = lean.moments("ratio");
        QCOMPARE(m.n, uint64_t(3));
        QCOMPARE(m.max, 2.0);
        QCOMPARE(m.mean, (2.0 + 1.0 + 0.25) / 3);
        // The array moments() computed is gone: get() computes it again (it reports progress
        // only when it computes); an engine that is not lean keeps it.
        int reports = 0;
        const Progress counting = [&](double) { ++reports; return true; };
        QCOMPARE(lean.get("ratio", counting)->values[2], 0.25);
        QVERIFY(reports > 0);
        MetricEngine keeping(b.build());
        keeping.moments("ratio");
        reports = 0;
        QCOMPARE(keeping.get("ratio", counting)->values[2], 0.25);
        QCOMPARE(reports, 0);
    }

    // kcx metrics summarises the cheap log-prob metrics without an array, recomputing each
    // block on every pass (issue 17): over several blocks, with missing, NaN and infinite
    // inputs, the counts, extremes and quantiles are those of the values worked out here
    // (type 7 from a sort) and the mean agrees to 1e-12; and every per-token log-prob
    // metric's summary is, to the bit, that of its stored array.
    void streamedSummariesAreTheStoredOnes() {
        std::mt19937_64 rng(1717);
        std::exponential_distribution<double> lp(1.0);
        std::normal_distribution<double> noise(0, 0.01);
        RunBuilder b;
        for (int s = 0; s < 70; ++s) {
            b.train.emplace_back();
            b.inf.emplace_back();
            for (int t = 0; t < 3001; ++t) {
                double a = -lp(rng), q = a + noise(rng);
                const int k = s * 3001 + t;
                if (k % 9973 == 5) a = missingDouble();
                if (k % 7919 == 3) q = std::numeric_limits<double>::quiet_NaN();
                if (k % 10007 == 1) q = -std::numeric_limits<double>::infinity();
                b.train.back().push_back(a);
                b.inf.back().push_back(q);
            }
        }
        const auto run = b.build();   // 210,070 tokens: four reduction blocks
        MetricEngine e(run);
        auto same = [](const std::optional<double>& x, const std::optional<double>& y) {
            return x.has_value() == y.has_value() && (!x || std::memcmp(&*x, &*y, sizeof(double)) == 0);
        };
        for (const char* name : {"log_ratio", "abs_log_ratio", "k1", "k2"}) {
            std::vector<double> v;
            uint64_t missing = 0, nonfinite = 0;
            for (size_t s = 0; s < b.train.size(); ++s)
                for (size_t t = 0; t < b.train[s].size(); ++t) {
                    const double a = b.train[s][t], q = b.inf[s][t];
                    if (isMissing(a) || isMissing(q)) { ++missing; continue; }
                    if (!std::isfinite(a) || !std::isfinite(q)) { ++nonfinite; continue; }
                    const double r = a - q;
                    const std::string n = name;
                    v.push_back(n == "log_ratio" ? r : n == "abs_log_ratio" ? std::fabs(r) : n == "k1" ? -r : 0.5 * r * r);
                }
            const Summary got = e.summary(name);
            QCOMPARE(got.count, uint64_t(v.size()));
            QCOMPARE(got.missing, missing);
            QCOMPARE(got.nonfinite, nonfinite);
            std::sort(v.begin(), v.end());
            QCOMPARE(*got.min, v.front());
            QCOMPARE(*got.max, v.back());
            long double sum = 0;
            for (double x : v)
                sum += x;
            QVERIFY(std::fabs(*got.mean - double(sum / v.size())) <= 1e-12 * std::max(1.0, std::fabs(*got.mean)));
            const std::pair<double, std::optional<double>> qs[] = {{0.5, got.p50}, {0.99, got.p99}, {0.999, got.p999}};
            for (const auto& [q, x] : qs) {
                const double h = double(v.size() - 1) * q;
                const size_t lo = size_t(h);
                const double a = v[lo], c = v[std::min(lo + 1, v.size() - 1)], f = h - double(lo);
                QCOMPARE(*x, f >= 0.5 ? c - (c - a) * (1 - f) : a + (c - a) * f);
            }
        }
        for (const char* name : {"log_ratio", "abs_log_ratio", "k1", "k2", "ratio", "prob_diff", "k3", "chi2", "clip_excess"}) {
            MetricEngine fresh(run);
            const Summary streamed = fresh.summary(name), stored = summarize(*fresh.get(name));
            QVERIFY2(streamed.count == stored.count && streamed.missing == stored.missing &&
                         streamed.nonfinite == stored.nonfinite && same(streamed.mean, stored.mean) &&
                         same(streamed.min, stored.min) && same(streamed.max, stored.max) &&
                         same(streamed.p50, stored.p50) && same(streamed.p99, stored.p99) &&
                         same(streamed.p999, stored.p999),
                     name);
        }
    }

    void unknownMetricAndCancel() {
        RunBuilder b;
        b.train = {{-1}};
        b.inf = {{-1}};
        MetricEngine e(b.build());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, e.get("tvv"));
        QVERIFY_THROWS_EXCEPTION(Cancelled, e.get("k3", [](double) { return false; }));
        QCOMPARE(e.get("k3")->count, uint64_t(1));   // nothing half-cached after a cancel
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "test_metrics.moc"
