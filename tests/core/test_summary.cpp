// Summaries (issue 19, SPEC 10): cells per step and slice against a brute force over the
// run's tokens, merging in any order and grouping. Exact sums and the sketch: test_sketch.cpp;
// the files and their bad inputs: test_summary_io.cpp.
#include <QtTest/QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "core/base/errors.h"
#include "core/contract/contract.h"
#include "core/evaluate/evaluator_summary.h"
#include "core/formats/loader.h"
#include "core/formats/run_writer.h"
#include "core/metrics/derived_slices.h"
#include "core/summary/summary.h"
#include "core/summary/summary_views.h"
#include "tests/support/test_files.h"
#include "tests/support/summary_runs.h"
#include "tests/support/test_runs.h"
#include "tests/support/wait_scale.h"

using namespace kcx;
using test::makeRun;
using test::shardOf;
using test::type7;

class TestSummary : public QObject {
    Q_OBJECT
private slots:
    // The cells against a brute force over the tokens: counts, mean, min, max, per-sequence
    // sums, the worst tokens, position buckets.
    void cellsMatchABruteForce() {
        auto run = makeRun(4, 300, 4);
        const RunSummary s = summarizeRun(run);
        const std::vector<int64_t> steps = run->steps();
        struct Ref {
            uint64_t count = 0, missing = 0, nonfinite = 0, sequences = 0, tokens = 0, seqs = 0;
            long double sum = 0, seqSumSq = 0, seqCountSq = 0;
            double min = INFINITY, max = -INFINITY;
            std::vector<std::pair<double, std::string>> all;
            std::vector<double> seqMax;
        };
        std::map<CellKey, Ref> ref;
        for (size_t q = 0; q < run->sequenceCount(); ++q) {
            const int32_t task = run->slices.codes[q * 2];
            std::vector<CellKey> scopes = {{steps[q], "", "", -1}};
            if (task >= 0)
                scopes.push_back({steps[q], "task", run->slices.values[0][size_t(task)], -1});
            for (const CellKey& base : scopes) {
                for (int pos = -1; pos < 5; ++pos) {
                    CellKey k = base;
                    k.pos = pos;
                    Ref& r = ref[k];
                    long double S = 0;
                    uint64_t nS = 0;
                    double mx = -INFINITY;
                    bool any = false;
                    for (size_t i = run->seqBegin(q); i < run->seqEnd(q); ++i) {
                        const size_t p = i - run->seqBegin(q);
                        if (pos >= 0 && positionBucket(p) != pos)
                            continue;
                        any = true;
                        ++r.tokens;
                        const double x = run->lpTrain[i], y = run->lpInf[i];
                        if (isMissing(y)) {
                            ++r.missing;
                            continue;
                        }
                        if (!std::isfinite(y)) {
                            ++r.nonfinite;
                            continue;
                        }
                        const double v = std::fabs(x - y);
                        ++r.count;
                        r.sum += v;
                        r.min = std::min(r.min, v);
                        r.max = std::max(r.max, v);
                        r.all.push_back({v, run->ids[q]});
                        S += v;
                        ++nS;
                        mx = std::max(mx, v);
                    }
                    if (any || pos < 0)
                        ++r.seqs;
                    if (nS) {
                        ++r.sequences;
                        r.seqSumSq += S * S;
                        r.seqCountSq += (long double)(nS * nS);
                        r.seqMax.push_back(mx);
                    }
                }
            }
        }
        int checked = 0;
        for (auto& [key, r] : ref) {
            if (r.tokens == 0)
                continue;
            auto it = s.cells.find(key);
            QVERIFY2(it != s.cells.end(), qPrintable(QString("no cell step %1 %2=%3 pos %4")
                                                         .arg(key.step).arg(key.key.c_str(), key.value.c_str()).arg(key.pos)));
            const CellData& d = it->second;
            QCOMPARE(d.tokens, r.tokens);
            QCOMPARE(d.sequences, r.seqs);
            const MetricCell& m = d.metrics.at("abs_log_ratio");
            QCOMPARE(m.count, r.count);
            QCOMPARE(m.missing, r.missing);
            QCOMPARE(m.nonfinite, r.nonfinite);
            QCOMPARE(m.sequences, r.sequences);
            if (!r.count)
                continue;
            QCOMPARE(m.min, r.min);
            QCOMPARE(m.max, r.max);
            QVERIFY(std::fabs(m.mean() - double(r.sum / r.count)) <= 1e-12 * double(r.sum / r.count));
            QVERIFY(std::fabs(m.seqSumSq.value() - double(r.seqSumSq)) <= 1e-12 * double(r.seqSumSq));
            QCOMPARE(m.seqCountSq.value(), double(r.seqCountSq));
            QCOMPARE(m.seqMax.count(), uint64_t(r.seqMax.size()));
            // The worst: the largest values (all positive here), ties by id.
            std::sort(r.all.begin(), r.all.end(), [](const auto& x, const auto& y) {
                return x.first != y.first ? x.first > y.first : x.second < y.second;
            });
            QCOMPARE(m.worst.size(), std::min<size_t>(5, r.all.size()));
            for (size_t w = 0; w < m.worst.size(); ++w) {
                QCOMPARE(m.worst[w].value, r.all[w].first);
                QCOMPARE(m.worst[w].id, r.all[w].second);
                QCOMPARE(m.worst[w].step, key.step);
            }
            ++checked;
        }
        QVERIFY(checked > 60);   // 4 steps × (all + 3 tasks) × (all + some of 5 buckets)
        // Per-run metrics from their sums against their definitions (SPEC 2.4a).
        long double sw = 0, sw2 = 0;
        uint64_t nw = 0;
        for (size_t i = 0; i < run->tokenCount(); ++i) {
            const double x = run->lpTrain[i], y = run->lpInf[i];
            if (std::isnan(y) || !std::isfinite(y))
                continue;
            const long double w = std::exp((long double)(x - y));
            sw += w;
            sw2 += w * w;
            ++nw;
        }
        const double ess = double(sw * sw / ((long double)nw * sw2));
        const double got = essOf(s.total()->run);
        QVERIFY2(std::fabs(got - ess) <= 1e-9 * ess, qPrintable(QString("%1 vs %2").arg(got, 0, 'g', 17).arg(ess, 0, 'g', 17)));
        // The sequence metric `length` over each step's sequences.
        for (int64_t st = 0; st < 4; ++st) {
            uint64_t n = 0;
            double sum = 0;
            for (size_t q = 0; q < run->sequenceCount(); ++q)
                if (steps[q] == st) {
                    ++n;
                    sum += double(run->seqLength(q));
                }
            const MetricCell& len = s.cells.at({st, "", "", -1}).metrics.at("length");
            QCOMPARE(len.count, n);
            QCOMPARE(len.sum.value(), sum);
            QVERIFY(!s.cells.at({st, "", "", 0}).metrics.count("length"));   // not in split cells
        }
    }

    // A metric the data give no input for (tv_lower needs top-k or logits) is kept in no cell, and
    // reads as every token of the cell missing; merged with a shard that has it, its missing
    // counts add the first shard's tokens, in either order, and survive the file.
    void lackingMetricsAreImplied() {
        auto runA = makeRun(41, 60, 3, "a"), runB = makeRun(42, 50, 3, "b");
        RunSummary a = summarizeRun(runA, {0.2, 1}), b = summarizeRun(runB, {0.2, 1});
        a.inputs = {{"a.jsonl", std::string(64, 'a'), runA->sequenceCount(), runA->tokenCount()}};
        b.inputs = {{"b.jsonl", std::string(64, 'b'), runB->sequenceCount(), runB->tokenCount()}};
        const std::vector<int64_t> stepsA = runA->steps();
        auto tokensAt = [&](int64_t st) {   // the tokens of a's sequences at step st, from the run
            uint64_t n = 0;
            for (size_t q = 0; q < runA->sequenceCount(); ++q)
                if (stepsA[q] == st)
                    n += runA->seqLength(q);
            return n;
        };
        MetricCell implied;
        for (const auto& [key, cell] : a.cells) {
            QVERIFY(!cell.metrics.count("tv_lower"));
            QVERIFY(cell.metrics.count("abs_log_ratio"));
            const MetricCell* tv = a.metric(cell, "tv_lower", implied);
            QVERIFY(tv);
            QCOMPARE(tv->count, uint64_t(0));
            QCOMPARE(tv->missing, cell.tokens);
            if (key.key.empty() && key.pos < 0)
                QCOMPARE(tv->missing, tokensAt(key.step));
        }
        QVERIFY(!a.metric(a.cells.begin()->second, "length_of_nothing", implied));
        // b as if its data had top-k: one tv_lower value 0.5 in each cell, the rest missing.
        b.hasTopK = true;
        for (auto& [key, cell] : b.cells)
            if (cell.tokens) {
                MetricCell& tv = cell.metrics["tv_lower"];
                tv.add(0.5);
                tv.missing = cell.tokens - 1;
            }
        RunSummary ab = a, ba = b;
        ab.merge(b);
        ba.merge(a);
        QCOMPARE(summaryBinaryBytes(ab), summaryBinaryBytes(ba));
        QVERIFY(ab.hasTopK);
        for (int64_t st = 0; st < 3; ++st) {
            const CellData& all = ab.cells.at({st, "", "", -1});
            const CellData& inB = b.cells.at({st, "", "", -1});
            const MetricCell* tv = ab.metric(all, "tv_lower", implied);
            QVERIFY(tv && tv == &all.metrics.at("tv_lower"));
            QCOMPARE(tv->count, uint64_t(1));
            QCOMPARE(tv->missing, tokensAt(st) + inB.tokens - 1);
            QCOMPARE(tv->sum.value(), 0.5);
        }
        // Through the file: the implied entries are written (every token missing) and read back.
        test::TempFiles files;
        const std::string path = files.path("a.kcxsum");
        writeSummary(a, path);
        const RunSummary back = readSummary(path);
        QCOMPARE(summaryBinaryBytes(back), summaryBinaryBytes(a));
        QVERIFY(!back.cells.begin()->second.metrics.count("tv_lower"));
        QVERIFY(summaryJsonText(a).find("\"tv_lower\"") != std::string::npos);
    }

    // A run cut into shards, summarised shard by shard and merged in any order and grouping,
    // is the summary of the whole run, to the byte once written.
    void mergingInAnyGroupingGivesTheSameSummary() {
        auto run = makeRun(5, 240, 6);
        const RunSummary whole = summarizeRun(run, {0.2, 2});
        const std::string wholeText = summaryJsonText(whole);
        std::mt19937_64 rng(6);
        // The sanitizer suite merges three rounds (1 to 3 cuts): each took 8 s under ASan.
        const int rounds = test::shortRun() ? 3 : 6;
        for (int round = 0; round < rounds; ++round) {
            std::vector<size_t> cuts = {0, run->sequenceCount()};
            for (int c = 0; c < 1 + round; ++c)
                cuts.push_back(rng() % run->sequenceCount());
            std::sort(cuts.begin(), cuts.end());
            std::vector<RunSummary> parts;
            for (size_t i = 0; i + 1 < cuts.size(); ++i)
                if (cuts[i] < cuts[i + 1])
                    parts.push_back(summarizeRun(shardOf(*run, cuts[i], cuts[i + 1]), {0.2, 1 + int(rng() % 3)}));
            std::shuffle(parts.begin(), parts.end(), rng);
            // A random binary tree of merges.
            while (parts.size() > 1) {
                const size_t i = rng() % parts.size();
                size_t j = rng() % parts.size();
                if (i == j)
                    continue;
                parts[i].merge(parts[j]);
                parts.erase(parts.begin() + long(j));
            }
            QVERIFY(parts[0].cells == whole.cells);
            QCOMPARE(summaryJsonText(parts[0]), wholeText);
        }
    }

    // RunSummary::mergeHead and mergeCells (kcx merge's batches): the cells merged key by key
    // across the parts give the summary of merging the parts one after another, in batches of
    // any size; a part whose data differ (top-k) is left to merge(); a clash throws at once.
    void mergeInBatchesIsMergeOneByOne() {
        auto run = makeRun(9, 200, 4);
        const RunSummary whole = summarizeRun(run, {0.2, 2});
        std::vector<RunSummary> parts;
        const size_t N = run->sequenceCount();
        for (size_t k = 0; k < 13; ++k) {
            parts.push_back(summarizeRun(shardOf(*run, N * k / 13, N * (k + 1) / 13), {0.2, 1}));
            parts.back().inputs = {{std::string("p").append(std::to_string(k)), std::string(64, char('a' + k)), 1, 1}};
        }
        // As kcx merge does it (summary_io.cpp, readAndMerge), with batches of `batch`.
        const auto inBatches = [&](const std::vector<RunSummary>& ps, size_t batch) {
            RunSummary total = ps[0];
            std::vector<RunSummary> held;
            for (size_t k = 1; k < ps.size(); ++k) {
                if (total.mergeHead(ps[k])) {
                    held.push_back(ps[k]);
                } else {
                    total.mergeCells(held);
                    held.clear();
                    total.merge(ps[k]);
                }
                if (held.size() == batch || k + 1 == ps.size()) {
                    total.mergeCells(held);
                    held.clear();
                }
            }
            return total;
        };
        for (size_t batch : {1, 2, 5, 12}) {
            const RunSummary total = inBatches(parts, batch);
            QVERIFY(total.cells == whole.cells);
            QCOMPARE(total.inputs.size(), parts.size());
        }
        // Part 5 as if its data had top-k: one tv_lower value 0.5 in each of its cells.
        std::vector<RunSummary> mixed = parts;
        mixed[5].hasTopK = true;
        for (auto& [key, cell] : mixed[5].cells)
            if (cell.tokens) {
                MetricCell& tv = cell.metrics["tv_lower"];
                tv.add(0.5);
                tv.missing = cell.tokens - 1;
            }
        RunSummary oneByOne = mixed[0];
        for (size_t k = 1; k < mixed.size(); ++k)
            oneByOne.merge(mixed[k]);
        const RunSummary batched = inBatches(mixed, 4);
        QCOMPARE(summaryBinaryBytes(batched), summaryBinaryBytes(oneByOne));
        QVERIFY(batched.hasTopK);
        size_t checked = 0;
        for (const auto& [key, cell] : mixed[5].cells) {
            if (!cell.tokens)
                continue;
            const MetricCell& tv = batched.cells.at(key).metrics.at("tv_lower");
            QCOMPARE(tv.count, uint64_t(1));
            QCOMPARE(tv.missing, whole.cells.at(key).tokens - 1);
            ++checked;
        }
        QVERIFY(checked > 10);
        // Part 3's input again: refused before any of its cells is merged.
        RunSummary t = parts[0];
        QVERIFY(t.mergeHead(parts[3]));
        RunSummary again = parts[7];
        again.inputs = parts[3].inputs;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, t.mergeHead(again));
    }

    // SPEC 10: a contract evaluated on a summary never contradicts the raw run: each result
    // has the raw status or is inconclusive with a reason. Thresholds are put at the raw
    // figures' own quantiles, so many of them sit close to the observed value, where the
    // sketch's resolution matters; and each clause kind is decided on the summary at least
    // once (a summary that answered `inconclusive` everywhere would pass the first check).
    void contractOnSummaryNeverContradictsTheRun() {
        auto run = makeRun(10, 400, 5);
        const RunSummary sum = summarizeRun(run);
        std::mt19937_64 rng(11);
        std::map<std::string, int> decided, agreed, inconclusive;
        for (int round = 0; round < 16; ++round) {
            auto th = [&](double lo, double hi) {
                return std::to_string(lo * std::pow(hi / lo, double(rng() % 1000) / 999.0));
            };
            const std::string t = "kcx_contract: 1\nname: t\nnumerical:\n"
                "  - {id: P99, metric: abs_log_ratio, aggregate: p99, max: " + th(0.02, 0.2) + ", per_slice: step}\n"
                "  - {id: P50, metric: abs_log_ratio, aggregate: p50, max: " + th(0.005, 0.05) + ", per_slice: task}\n"
                "  - {id: MAX, metric: log_ratio, aggregate: max, max: " + th(0.2, 2) + ", where: {task: [a]}, per_slice: step}\n"
                "  - {id: MEAN, metric: abs_log_ratio, aggregate: mean, max: " + th(0.01, 0.05) + ", per_slice: derived.pos_bucket}\n"
                "  - {id: FA, metric: abs_log_ratio, aggregate: {fraction_above: " + th(0.01, 0.1) + "}, max: " + th(0.05, 0.5) + "}\n"
                "  - {id: POS, metric: abs_log_ratio, aggregate: p90, max: " + th(0.02, 0.1) + ", positions: [64, 256]}\n"
                "  - {id: OFF, metric: abs_log_ratio, aggregate: p90, max: 0.05, positions: [10, 20]}\n"
                "  - {id: SEQ, metric: seq_abs_log_ratio, aggregate: p90, max: " + th(0.05, 5) + ", per_slice: task}\n"
                "  - {id: ESS, metric: ess, aggregate: mean, min: " + th(0.9, 1.0) + "}\n"
                "statistical:\n"
                "  - {id: EXT, metric: abs_log_ratio, test: exceedance, level: " + th(0.02, 0.2) + ", max: " + th(0.01, 0.3) +
                ", per_slice: step, correction: bonferroni, min_samples: 50}\n"
                "  - {id: EXS, metric: abs_log_ratio, test: exceedance, unit: sequence, level: " + th(0.1, 2) + ", max: " +
                th(0.1, 0.9) + ", per_slice: task}\n"
                "  - {id: MT, metric: abs_log_ratio, test: mean, max: " + th(0.015, 0.04) + ", per_slice: task, seed: 3}\n"
                "observability:\n"
                "  - {id: NF, metric: abs_log_ratio, max_nonfinite_fraction: " + th(0.0005, 0.002) + "}\n";
            Contract c = parseContract(t, "c.yaml");
            // Half the rounds move each threshold to within 2 % of a raw figure it is
            // compared with (10 % for the mean test's interval), where resolution matters.
            if (round % 2) {
                const Evaluation first = evaluateContract(c, run);
                for (Clause& cl : c.clauses) {
                    std::vector<const Result*> mine;
                    for (const Result& r : first.results)
                        if (r.clause == cl.id && r.observed)
                            mine.push_back(&r);
                    if (mine.empty() || cl.id == "OFF")
                        continue;
                    const Result& r = *mine[rng() % mine.size()];
                    const double u = double(rng() % 2001) / 1000.0 - 1.0;   // [-1, 1]
                    double at = *r.observed;
                    if (r.upper)
                        at = *r.upper;
                    if (cl.test == Clause::Test::Mean && cl.family == Family::Statistical)
                        at = r.ci->second * (1 + 0.1 * u);
                    else
                        at *= 1 + 0.02 * u;
                    if (cl.max)
                        cl.max->value = at;
                    else if (cl.min)
                        cl.min->value = at;
                    else if (cl.maxNonfiniteFraction)
                        cl.maxNonfiniteFraction->value = at;
                }
            }
            const Evaluation raw = evaluateContract(c, run);
            const Evaluation onSum = evaluateContractOnSummary(c, sum);
            std::map<std::string, const Result*> byKey;
            auto keyOf = [](const Result& r) {
                std::string k = r.clause;
                if (r.slice)
                    for (const auto& [a, b] : *r.slice)
                        k += "|" + a + "=" + b;
                return k;
            };
            for (const Result& r : raw.results)
                byKey[keyOf(r)] = &r;
            for (const Result& r : onSum.results) {
                if (r.status == Status::Inconclusive) {
                    QVERIFY2(!r.message.empty(), keyOf(r).c_str());
                    ++inconclusive[r.clause];
                    continue;
                }
                auto it = byKey.find(keyOf(r));
                QVERIFY2(it != byKey.end(), qPrintable("no raw result for " + QString::fromStdString(keyOf(r))));
                QVERIFY2(r.status == it->second->status,
                         qPrintable(QString::fromStdString(keyOf(r) + ": summary " + statusName(r.status) + " (" + r.message +
                                                           "), run " + statusName(it->second->status) + " (" +
                                                           it->second->message + ")")));
                ++decided[r.clause];
                if (r.observed && it->second->observed && (r.clause == "MAX" || r.clause == "MEAN" || r.clause == "NF"))
                    QVERIFY(std::fabs(*r.observed - *it->second->observed) <= 1e-9 * std::fabs(*it->second->observed));
            }
            QCOMPARE(onSum.results.size() >= raw.results.size() - 4, true);
        }
        for (const char* id : {"P99", "P50", "MAX", "MEAN", "FA", "POS", "SEQ", "ESS", "EXT", "EXS", "MT", "NF"})
            QVERIFY2(decided[id] > 0, id);
        QCOMPARE(decided["OFF"], 0);   // positions [10, 20) lie inside a bucket: inconclusive
        QVERIFY(inconclusive["OFF"] == 16);
        // Some thresholds land inside the sketch's resolution: those are the inconclusive ones.
        QVERIFY(inconclusive["P99"] + inconclusive["P50"] + inconclusive["POS"] + inconclusive["FA"] > 0);
    }

    // What the window and the report read from a summary (summary_views.h), against the
    // raw tokens: the grid by task × position bucket and by step, the series over steps with
    // its interval (the delta method written out per sequence here), the worst tokens.
    void viewsReadTheCells() {
        auto run = makeRun(11, 240, 5);
        const RunSummary s = summarizeRun(run);
        const std::vector<int64_t> steps = run->steps();
        // Per (task value or "", step or −1 for all, pos −1..4): the values of |x − y|, and
        // per sequence its sum and count.
        struct Ref {
            std::vector<double> v;
            std::vector<std::pair<double, double>> seq;   // (S, n)
            std::vector<std::tuple<double, std::string, int64_t>> tokens;   // value, id, position
        };
        std::map<std::tuple<std::string, int64_t, int>, Ref> ref;
        for (size_t q = 0; q < run->sequenceCount(); ++q) {
            const int32_t task = run->slices.codes[q * 2];
            std::vector<std::string> rows = {""};
            if (task >= 0)
                rows.push_back(run->slices.values[0][size_t(task)]);
            for (const std::string& row : rows)
                for (int64_t st : {int64_t(-1), steps[q]})
                    for (int pos = -1; pos < 5; ++pos) {
                        Ref& r = ref[{row, st, pos}];
                        double S = 0, n = 0;
                        for (size_t i = run->seqBegin(q); i < run->seqEnd(q); ++i) {
                            const size_t p = i - run->seqBegin(q);
                            if ((pos >= 0 && positionBucket(p) != pos) || !std::isfinite(run->lpInf[i]))
                                continue;
                            const double v = std::fabs(run->lpTrain[i] - run->lpInf[i]);
                            r.v.push_back(v);
                            r.tokens.push_back({v, run->ids[q], int64_t(p)});
                            S += v;
                            ++n;
                        }
                        if (n > 0)
                            r.seq.push_back({S, n});
                    }
        }
        auto mean = [](const std::vector<double>& v) {
            long double t = 0;
            for (double x : v)
                t += x;
            return double(t / (long double)v.size());
        };
        const CellStatSpec meanStat{CellStat::Mean}, maxStat{CellStat::Max}, countStat{CellStat::Count},
            p99{CellStat::Quantile, 0.99};
        for (const CellStatSpec& stat : {meanStat, maxStat, countStat, p99}) {
            const SummaryGrid g = summaryGrid(s, "abs_log_ratio", "task", std::nullopt, stat);
            QCOMPARE(g.rows, (std::vector<std::string>{"all", "a", "b", "c"}));
            QCOMPARE(g.columns.size(), size_t(6));
            QCOMPARE(g.columns[0], std::string("all positions"));
            int cells = 0;
            for (size_t r = 0; r < g.rowCount(); ++r)
                for (size_t c = 0; c < g.columnCount(); ++c) {
                    const Ref& want = ref[{r == 0 ? std::string() : g.rows[r], -1, int(c) - 1}];
                    const double got = g.value(r, c);
                    QCOMPARE(g.counts[r * g.columnCount() + c], uint64_t(want.v.size()));
                    if (want.v.empty()) {
                        QVERIFY(std::isnan(got) || (stat.stat == CellStat::Count && got == 0));
                        continue;
                    }
                    ++cells;
                    std::vector<double> x = want.v;
                    std::sort(x.begin(), x.end());
                    if (stat.stat == CellStat::Mean)
                        QVERIFY2(std::fabs(got - mean(x)) <= 1e-12 * mean(x), qPrintable(QString::number(got)));
                    else if (stat.stat == CellStat::Max)
                        QCOMPARE(got, x.back());
                    else if (stat.stat == CellStat::Count)
                        QCOMPARE(got, double(x.size()));
                    else {
                        size_t lo = 0;
                        type7(x, 0.99, &lo);
                        const size_t hi = std::min(lo + 1, x.size() - 1);
                        QVERIFY2(got >= x[lo] * 0.99 && got <= x[hi] * 1.01,
                                 qPrintable(QString("%1 not in [%2, %3]").arg(got).arg(x[lo]).arg(x[hi])));
                    }
                }
            QCOMPARE(cells, 16);   // positions 0–299: four buckets of six have values
        }
        // Steps as rows; one step's cells alone.
        const SummaryGrid bySteps = summaryGrid(s, "abs_log_ratio", kStepKey, std::nullopt, meanStat);
        QCOMPARE(bySteps.rowCount(), size_t(6));   // all + 5 steps
        for (int64_t st = 0; st < 5; ++st) {
            QCOMPARE(bySteps.rows[size_t(st) + 1], "step " + std::to_string(st));
            const double want = mean(ref[{"", st, -1}].v);
            QVERIFY(std::fabs(bySteps.value(size_t(st) + 1, 0) - want) <= 1e-12 * want);
        }
        const SummaryGrid step3 = summaryGrid(s, "abs_log_ratio", "task", int64_t(3), maxStat);
        std::vector<double> b3 = ref[{"b", 3, 2}].v;
        QCOMPARE(step3.value(2, 3), *std::max_element(b3.begin(), b3.end()));
        // The series over steps of task=b, with mean ± 1.96 standard errors over sequences.
        const std::vector<StepPoint> series = summarySteps(s, "abs_log_ratio", "task", "b", -1, meanStat);
        QCOMPARE(series.size(), size_t(5));
        for (const StepPoint& p : series) {
            const Ref& r = ref[{"b", p.step, -1}];
            double tS = 0, tn = 0;
            for (auto [S, n] : r.seq)
                tS += S, tn += n;
            const double mu = tS / tn;
            double resid = 0;
            for (auto [S, n] : r.seq)
                resid += (S - mu * n) * (S - mu * n);
            const double m = double(r.seq.size());
            const double se = std::sqrt(resid / (tn * tn) * m / (m - 1));
            QCOMPARE(p.count, uint64_t(r.v.size()));
            QCOMPARE(p.sequences, uint64_t(r.seq.size()));
            QVERIFY(std::fabs(p.value - mu) <= 1e-12 * mu);
            QVERIFY2(std::fabs((p.hi - p.value) - 1.96 * se) <= 1e-6 * se, qPrintable(QString("%1 vs %2").arg(p.hi - p.value).arg(1.96 * se)));
            QVERIFY(std::fabs((p.value - p.lo) - 1.96 * se) <= 1e-6 * se);
        }
        // The worst tokens over everything: the five largest values, with id and position.
        std::vector<std::tuple<double, std::string, int64_t>> all = ref[{"", -1, -1}].tokens;
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
        const std::vector<WorstEntry> worst = summaryWorst(s, "abs_log_ratio", "", "", -1, std::nullopt);
        QCOMPARE(worst.size(), kWorstKept);
        for (size_t i = 0; i < worst.size(); ++i) {
            QCOMPARE(worst[i].value, std::get<0>(all[i]));
            QCOMPARE(worst[i].id, std::get<1>(all[i]));
            QCOMPARE(worst[i].position, std::get<2>(all[i]));
        }
        // What there is to choose from.
        const std::vector<std::string> keys = summaryRowKeys(s);
        QCOMPARE(keys.front(), std::string(kStepKey));
        QCOMPARE(keys[1], std::string("task"));
        const std::vector<std::string> metrics = summaryMetrics(s);
        QVERIFY(std::find(metrics.begin(), metrics.end(), "abs_log_ratio") != metrics.end());
        QVERIFY(std::find(metrics.begin(), metrics.end(), "tv") == metrics.end());   // no top-k: no value
        QCOMPARE(cellStatName(p99), std::string("p99 (sketch)"));
        // The outline the window shows first: the raw run's totals and its distinct steps.
        const SummaryOutline outline = summaryOutline(s);
        QCOMPARE(outline.sequences, uint64_t(run->sequenceCount()));
        QCOMPARE(outline.tokens, uint64_t(run->tokenCount()));
        std::vector<int64_t> distinct = steps;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        QCOMPARE(outline.steps, distinct);
        QCOMPARE(outline.rowKeys, keys);
        QCOMPARE(outline.metrics, metrics);
    }

    // A run longer than a block is summarised block by block and merged: the same summary, to
    // the byte, as at once, whatever the block size; and from a mapped safetensors file, whose
    // pages of each block are dropped once done, the same again, read a second time after.
    void blocksGiveTheSameSummary() {
        auto run = makeRun(21, 160, 4);
        const std::string whole = summaryBinaryBytes(summarizeRun(run, {0.2, 2, 0}));
        for (size_t block : {size_t(1), size_t(300), size_t(4000), size_t(1) << 40}) {
            const RunSummary s = summarizeRun(run, {0.2, 1 + int(block % 2), block});
            QVERIFY2(summaryBinaryBytes(s) == whole, std::to_string(block).c_str());
        }
        test::TempFiles files;
        const std::string path = files.path("r.safetensors");
        writeSafetensors(*run, path);
        auto mapped = std::make_shared<const Run>(loadRun(path));
        const std::string fromFile = summaryBinaryBytes(summarizeRun(mapped, {0.2, 2, 0}));
        QVERIFY(summaryBinaryBytes(summarizeRun(mapped, {0.2, 2, 3000})) == fromFile);   // whole pages dropped
        QVERIFY(summaryBinaryBytes(summarizeRun(mapped, {0.2, 2, 0})) == fromFile);   // pages read again
        QVERIFY(summarizeRun(mapped, {0.2, 2, 0}).cells == summarizeRun(run, {0.2, 2, 0}).cells);
    }

    void inputsMustBeDisjoint() {
        RunSummary a, b;
        a.inputs = {{"x.jsonl", std::string(64, 'a'), 1, 1}};
        b.inputs = {{"y.jsonl", std::string(64, 'a'), 1, 1}};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, a.merge(b));
        b.inputs = {{"x.jsonl", std::string(64, 'b'), 1, 1}};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, a.merge(b));
        b.ppoClip = 0.3;
        b.inputs = {{"z.jsonl", std::string(64, 'c'), 1, 1}};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, a.merge(b));
    }
};

QTEST_GUILESS_MAIN(TestSummary)
#include "test_summary.moc"
