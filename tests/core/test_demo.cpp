// The built-in demo run (docs/demo.md): its shape, its determinism, its numbers checked
// against values recomputed here from the data it carries, and where its divergence lies.
#include <QtTest/QTest>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include "core/demo/demo.h"
#include "core/formats/loader.h"

using namespace kcx;

namespace {

// Mean |lp_train - lp_inf| over the tokens that `keep(s, t, T)` selects.
template <class F>
double meanAbsLogRatio(const Run& r, F keep) {
    double sum = 0;
    size_t n = 0;
    for (size_t s = 0; s < r.sequenceCount(); ++s)
        for (size_t t = 0; t < r.seqLength(s); ++t)
            if (keep(s, t, r.seqLength(s))) {
                const size_t i = r.seqBegin(s) + t;
                sum += std::fabs(r.lpTrain[i] - r.lpInf[i]);
                ++n;
            }
    return n ? sum / double(n) : std::nan("");
}

// log-softmax at one index, in long double, from a row of logits.
double logSoftmaxAt(const Column& c, size_t row, size_t vocab, size_t idx) {
    long double m = -INFINITY;
    for (size_t v = 0; v < vocab; ++v)
        m = std::max<long double>(m, c[row * vocab + v]);
    long double sum = 0;
    for (size_t v = 0; v < vocab; ++v)
        sum += std::exp((long double)c[row * vocab + v] - m);
    return double((long double)c[row * vocab + idx] - m - std::log(sum));
}

bool sameColumn(const Column& a, const Column& b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i] && !(std::isnan(a[i]) && std::isnan(b[i])))
            return false;
    return true;
}

template <class T>
bool sameArray(const Array<T>& a, const Array<T>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

void compareRuns(const Run& a, const Run& b) {
    QCOMPARE(a.ids, b.ids);
    QVERIFY(sameArray(a.offsets, b.offsets));
    QVERIFY(sameArray(a.tokens, b.tokens));
    QVERIFY(sameColumn(a.lpTrain, b.lpTrain));
    QVERIFY(sameColumn(a.lpInf, b.lpInf));
    QCOMPARE(a.topkTrain.k, b.topkTrain.k);
    QVERIFY(sameArray(a.topkTrain.ids, b.topkTrain.ids));
    QVERIFY(sameArray(a.topkInf.ids, b.topkInf.ids));
    QVERIFY(sameColumn(a.topkTrain.logp, b.topkTrain.logp));
    QVERIFY(sameColumn(a.topkInf.logp, b.topkInf.logp));
    QVERIFY(sameArray(a.logits.rows, b.logits.rows));
    QCOMPARE(a.logits.vocab, b.logits.vocab);
    QVERIFY(sameColumn(a.logits.train, b.logits.train));
    QVERIFY(sameColumn(a.logits.inf, b.logits.inf));
    QVERIFY(a.rewardTrain == b.rewardTrain);
    QVERIFY(a.rewardInf == b.rewardInf);
    QCOMPARE(a.slices.keys, b.slices.keys);
    QCOMPARE(a.slices.values, b.slices.values);
    QCOMPARE(a.slices.codes, b.slices.codes);
    QVERIFY(a.runtime == b.runtime);
    QCOMPARE(a.textPool, b.textPool);
    QCOMPARE(a.textOffsets, b.textOffsets);
    QVERIFY(a.header == b.header);
}

}  // namespace

class TestDemo : public QObject {
    Q_OBJECT
    Run run_;                       // the default demo, made once
    std::vector<double> fractions_; // what it reported as progress

    const std::string& label(size_t s, const char* key) const {
        return *run_.slices.label(s, size_t(run_.slices.keyIndex(key)));
    }

private slots:
    void initTestCase() {
        run_ = makeDemoRun({}, [this](double f) {
            fractions_.push_back(f);
            return true;
        });
    }

    void sizesAndInvariants() {
        QVERIFY(run_.sequenceCount() >= 200);
        QVERIFY(run_.tokenCount() >= 50000);
        run_.checkInvariants();
        QCOMPARE(std::set<std::string>(run_.ids.begin(), run_.ids.end()).size(), run_.sequenceCount());
        QCOMPARE(run_.path, std::string());
        for (size_t s = 0; s < run_.sequenceCount(); ++s)
            QVERIFY(run_.seqLength(s) >= 1);
        QVERIFY(run_.hasTopK());
        QVERIFY(run_.hasLogits());
        QVERIFY(run_.hasRewards());
        QVERIFY(run_.hasText());
    }

    void determinism() {
        // Same seed, a different thread count: the same bytes.
        DemoOptions one;
        one.threads = 1;
        const Run again = makeDemoRun(one);
        compareRuns(run_, again);
    }

    void differentSeed() {
        DemoOptions a, b;
        a.sequences = b.sequences = 12;
        b.seed = a.seed + 1;
        const Run ra = makeDemoRun(a), rb = makeDemoRun(b);
        QVERIFY(!sameArray(ra.tokens, rb.tokens));
        QVERIFY(!sameColumn(ra.lpInf, rb.lpInf));
        QVERIFY(ra.header["kernels"]["train"]["weights_sha256"] != rb.header["kernels"]["train"]["weights_sha256"]);
        // The traffic of a sequence depends on the seed and its index only: a shorter run
        // with the same seed has the same lengths and slices as the start of a longer one.
        QVERIFY(std::equal(ra.offsets.begin(), ra.offsets.end(), run_.offsets.begin()));
        QVERIFY(std::equal(ra.slices.codes.begin(), ra.slices.codes.end(), run_.slices.codes.begin()));
    }

    void logProbs() {
        for (const Column* c : {&run_.lpTrain, &run_.lpInf})
            for (size_t i = 0; i < c->size(); ++i) {
                const double v = (*c)[i];
                if (!std::isfinite(v) || v > 0)
                    QFAIL(qPrintable(QString("log-prob %1 at token %2").arg(v).arg(i)));
            }
        // The kernels differ (a real mismatch), yet agree closely.
        size_t differ = 0;
        for (size_t i = 0; i < run_.tokenCount(); ++i)
            differ += run_.lpTrain[i] != run_.lpInf[i];
        QVERIFY(differ > run_.tokenCount() / 2);
        const double mean = meanAbsLogRatio(run_, [](size_t, size_t, size_t) { return true; });
        QVERIFY(mean > 1e-3);
        QVERIFY(mean < 0.5);
    }

    void topK() {
        const int64_t vocab = run_.header["model"]["vocab"].get<int64_t>();
        for (const auto& [tk, lp] : {std::pair{&run_.topkTrain, &run_.lpTrain}, std::pair{&run_.topkInf, &run_.lpInf}}) {
            QCOMPARE(tk->k, 8);
            size_t present = 0;
            for (size_t i = 0; i < run_.tokenCount(); ++i) {
                std::set<int32_t> seen;
                double mass = 0;
                for (int j = 0; j < 8; ++j) {
                    const size_t at = i * 8 + size_t(j);
                    const int32_t id = tk->ids[at];
                    const double l = tk->logp[at];
                    QVERIFY(id >= 0 && id < vocab);
                    QVERIFY(seen.insert(id).second);
                    QVERIFY(std::isfinite(l) && l <= 0);
                    if (j > 0 && l > tk->logp[at - 1])
                        QFAIL("top-k row not sorted");
                    mass += std::exp(l);
                    if (id == run_.tokens[i]) {
                        QCOMPARE(l, (*lp)[i]);
                        ++present;
                    }
                }
                QVERIFY(mass <= 1.0 + 1e-12);
                // Anything outside the top-k is no more likely than its last entry.
                if (seen.count(run_.tokens[i]) == 0 && (*lp)[i] > tk->logp[i * 8 + 7])
                    QFAIL("sampled token more likely than the top-k but not in it");
            }
            QVERIFY(present > run_.tokenCount() / 2);
        }
    }

    void logitsMatchLogProbs() {
        const Logits& lg = run_.logits;
        const size_t vocab = size_t(lg.vocab);
        QCOMPARE(int64_t(vocab), run_.header["model"]["vocab"].get<int64_t>());
        QVERIFY(lg.rows.size() >= 200);
        for (size_t p = 0; p < lg.rows.size(); ++p) {
            const size_t i = size_t(lg.rows[p]);
            const size_t s = run_.sequenceOf(i);
            QVERIFY(s % 4 == 0 && (i - run_.seqBegin(s)) % 16 == 0);   // as documented
            const size_t tok = size_t(run_.tokens[i]);
            QVERIFY(std::fabs(logSoftmaxAt(lg.inf, p, vocab, tok) - run_.lpInf[i]) < 1e-9);
            QVERIFY(std::fabs(logSoftmaxAt(lg.train, p, vocab, tok) - run_.lpTrain[i]) < 1e-9);
            // The top-k is the k largest of the same logits.
            for (const auto& [col, tk] : {std::pair{&lg.inf, &run_.topkInf}, std::pair{&lg.train, &run_.topkTrain}}) {
                std::vector<size_t> order(vocab);
                std::iota(order.begin(), order.end(), size_t(0));
                const auto* logits = col;   // (clang 14 does not capture a structured binding)
                std::stable_sort(order.begin(), order.end(),
                                 [&](size_t a, size_t b) { return (*logits)[p * vocab + a] > (*logits)[p * vocab + b]; });
                for (size_t j = 0; j < 8; ++j) {
                    QCOMPARE(size_t(tk->ids[i * 8 + j]), order[j]);
                    QVERIFY(std::fabs(tk->logp[i * 8 + j] - logSoftmaxAt(*col, p, vocab, order[j])) < 1e-9);
                }
            }
        }
    }

    void divergenceConcentrates() {
        const int prec = run_.slices.keyIndex("precision"), task = run_.slices.keyIndex("task");
        QVERIFY(prec >= 0 && task >= 0);
        auto is = [&](size_t s, int key, const char* value) {
            return *run_.slices.label(s, size_t(key)) == value;
        };
        const double bf16 = meanAbsLogRatio(run_, [&](size_t s, size_t, size_t) { return is(s, prec, "bf16"); });
        const double fp8 = meanAbsLogRatio(run_, [&](size_t s, size_t, size_t) { return is(s, prec, "fp8"); });
        qInfo("mean |log ratio|: bf16 %.5f, fp8 %.5f", bf16, fp8);
        QVERIFY(fp8 > 2.0 * bf16);
        // Within bf16 traffic, long contexts diverge more than the other tasks.
        const double longCtx = meanAbsLogRatio(
            run_, [&](size_t s, size_t, size_t) { return is(s, prec, "bf16") && is(s, task, "long_context"); });
        const double others = meanAbsLogRatio(
            run_, [&](size_t s, size_t, size_t) { return is(s, prec, "bf16") && !is(s, task, "long_context"); });
        qInfo("bf16: long_context %.5f, other tasks %.5f", longCtx, others);
        QVERIFY(longCtx > 1.15 * others);
        // Later positions diverge more than earlier ones.
        const double first = meanAbsLogRatio(run_, [](size_t, size_t t, size_t n) { return t < n / 2; });
        const double second = meanAbsLogRatio(run_, [](size_t, size_t t, size_t n) { return t >= n / 2; });
        const double early = meanAbsLogRatio(run_, [&](size_t s, size_t t, size_t) { return is(s, prec, "bf16") && t < 64; });
        const double late = meanAbsLogRatio(run_, [&](size_t s, size_t t, size_t) { return is(s, prec, "bf16") && t >= 256; });
        qInfo("halves %.5f %.5f; bf16 t<64 %.5f, t>=256 %.5f", first, second, early, late);
        QVERIFY(second > first);
        QVERIFY(late > 1.2 * early);
    }

    void slices() {
        QCOMPARE(run_.slices.keys, (std::vector<std::string>{"task", "length_bucket", "precision"}));
        std::map<std::string, std::set<std::string>> seen;
        for (size_t s = 0; s < run_.sequenceCount(); ++s) {
            for (size_t k = 0; k < run_.slices.keys.size(); ++k) {
                const std::string* l = run_.slices.label(s, k);
                QVERIFY(l);
                seen[run_.slices.keys[k]].insert(*l);
            }
            const size_t n = run_.seqLength(s);
            QCOMPARE(label(s, "length_bucket"), std::string(n < 128 ? "short" : n < 256 ? "medium" : "long"));
        }
        QCOMPARE(seen["task"], (std::set<std::string>{"math", "code", "chat", "long_context"}));
        QCOMPARE(seen["length_bucket"], (std::set<std::string>{"short", "medium", "long"}));
        QCOMPARE(seen["precision"], (std::set<std::string>{"bf16", "fp8"}));
    }

    void rewards() {
        QCOMPARE(run_.rewardTrain.size(), run_.sequenceCount());
        QCOMPARE(run_.rewardInf.size(), run_.sequenceCount());
        const int horizon = run_.header["demo"]["reward_horizon"].get<int>();
        size_t differ = 0;
        for (size_t s = 0; s < run_.sequenceCount(); ++s)
            for (double r : {run_.rewardTrain[s], run_.rewardInf[s]}) {
                QVERIFY(r >= 0 && r <= 1);
                const double k = r * horizon;
                QCOMPARE(k, std::round(k));   // a fraction of the greedy positions
            }
        for (size_t s = 0; s < run_.sequenceCount(); ++s)
            differ += run_.rewardTrain[s] != run_.rewardInf[s];
        QVERIFY(differ > 0);
        QVERIFY(differ < run_.sequenceCount());
    }

    void runtime() {
        QCOMPARE(run_.runtime.size(), run_.sequenceCount());
        std::set<int> batches;
        for (size_t s = 0; s < run_.sequenceCount(); ++s) {
            const auto& o = run_.runtime[s];
            QVERIFY(o.at("batch_size").is_number_integer());
            const int b = o.at("batch_size").get<int>();
            QVERIFY(b >= 1 && b <= 32);
            batches.insert(b);
            const double latency = o.at("latency_ms").get<double>();
            QVERIFY(latency > 0);
            const double tps = o.at("tokens_per_s").get<double>();
            QVERIFY(std::fabs(tps - double(run_.seqLength(s)) / (latency / 1000.0)) < 0.01 + 1e-4 * tps);
            const std::string v = o.at("kernel_version").get<std::string>();
            QCOMPARE(v.ends_with("-fp8"), label(s, "precision") == "fp8");
        }
        QVERIFY(batches.size() >= 4);   // the batcher really varies
    }

    void header() {
        const auto& h = run_.header;
        const auto& tr = h.at("kernels").at("train");
        const auto& in = h.at("kernels").at("inf");
        QCOMPARE(tr.at("name").get<std::string>(), std::string("demo-train"));
        QCOMPARE(in.at("name").get<std::string>(), std::string("demo-inf"));
        QCOMPARE(tr.at("precision").get<std::string>(), std::string("fp32"));
        QCOMPARE(in.at("precision").get<std::string>(), std::string("bf16"));
        QVERIFY(in.contains("fp8"));
        QCOMPARE(tr.at("batch_invariant").get<bool>(), true);
        QCOMPARE(in.at("batch_invariant").get<bool>(), false);
        const std::string sha = tr.at("weights_sha256").get<std::string>();
        QCOMPARE(sha.size(), size_t(64));
        QVERIFY(sha.find_first_not_of("0123456789abcdef") == std::string::npos);
        QCOMPARE(in.at("weights_sha256").get<std::string>(), sha);
        QVERIFY(h.at("model").at("layers").get<int>() >= 2);
        QVERIFY(h.at("model").at("d_model").get<int>() > 0);
        QCOMPARE(h.at("source").get<std::string>(), std::string("kcx demo"));
        QVERIFY(h.at("created").is_string());
    }

    void text() {
        QCOMPARE(run_.textOffsets.size(), run_.tokenCount() + 1);
        std::map<int32_t, std::string> textOf;
        for (size_t i = 0; i < run_.tokenCount(); ++i) {
            const std::string t(run_.tokenText(i));
            QVERIFY(!t.empty());
            const auto [it, fresh] = textOf.emplace(run_.tokens[i], t);
            if (!fresh && it->second != t)
                QFAIL("one token id, two texts");
        }
        std::set<std::string> distinct;
        for (const auto& [id, t] : textOf)
            distinct.insert(t);
        QCOMPARE(distinct.size(), textOf.size());
    }

    void identicalKernelsGiveZero() {
        DemoOptions o;
        o.sequences = 24;
        o.identicalKernels = true;
        const Run r = makeDemoRun(o);
        QVERIFY(r.tokenCount() > 1000);
        for (size_t i = 0; i < r.tokenCount(); ++i)
            if (r.lpTrain[i] != r.lpInf[i])
                QFAIL(qPrintable(QString("log ratio %1 at token %2").arg(r.lpTrain[i] - r.lpInf[i]).arg(i)));
        QVERIFY(sameArray(r.topkTrain.ids, r.topkInf.ids));
        QVERIFY(sameColumn(r.topkTrain.logp, r.topkInf.logp));
        QVERIFY(sameColumn(r.logits.train, r.logits.inf));
        QVERIFY(r.rewardTrain == r.rewardInf);
        QVERIFY(r.header["kernels"]["inf"]["weights_sha256"] == run_.header["kernels"]["inf"]["weights_sha256"]);
    }

    void progressAndCancel() {
        QVERIFY(fractions_.size() >= 2);
        QCOMPARE(fractions_.front(), 0.0);
        QCOMPARE(fractions_.back(), 1.0);
        QVERIFY(std::is_sorted(fractions_.begin(), fractions_.end()));
        DemoOptions o;
        o.sequences = 40;
        int calls = 0;
        QVERIFY_THROWS_EXCEPTION(Cancelled, makeDemoRun(o, [&](double) { return ++calls < 2; }));
    }

    void writeDemoFiles() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dir = (std::filesystem::path(tmp.path().toStdString()) / "sub" / "demo").string();
        DemoOptions o;
        o.sequences = 12;
        const std::string path = writeDemo(dir, o);
        QCOMPARE(path, (std::filesystem::path(dir) / "demo.jsonl").string());
        QVERIFY(std::filesystem::exists(path));
        const std::string st = (std::filesystem::path(dir) / "demo.safetensors").string();
        QVERIFY(std::filesystem::exists(st));
        const Run made = makeDemoRun(o);
        for (const std::string& file : {path, st}) {
            const Run back = loadRun(file);
            QCOMPARE(back.ids, made.ids);
            QVERIFY(sameArray(back.tokens, made.tokens));
            QVERIFY(sameColumn(back.lpTrain, made.lpTrain));
            QVERIFY(sameColumn(back.lpInf, made.lpInf));
            QCOMPARE(back.slices.keys, made.slices.keys);
            for (size_t q = 0; q < made.sequenceCount(); ++q)
                for (size_t k = 0; k < made.slices.keys.size(); ++k)
                    QCOMPARE(*back.slices.label(q, k), *made.slices.label(q, k));
            QVERIFY(back.rewardInf == made.rewardInf);
        }
    }
};

QTEST_GUILESS_MAIN(TestDemo)
#include "test_demo.moc"
