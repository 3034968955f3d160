// The contract language (SPEC 4): the SPEC example into typed values, JSON = YAML, defaults,
// source spans, loading files. Mistakes and hostile input: test_contract_errors.cpp.
#include <QtTest/QTest>

#include <QTemporaryDir>

#include <cstdio>
#include <sstream>

#include "core/base/errors.h"
#include "core/contract/contract.h"
#include "tests/support/contract_text.h"

using namespace kcx;
using test::kHead;
using test::kN1;

Q_DECLARE_METATYPE(std::string)

namespace {

// SPEC 4, verbatim.
const char* const kSpecYaml = R"YAML(kcx_contract: 1                  # required, format version
name: fp8-rollouts-vs-fsdp       # required
version: "2026.12.1"             # free string
description: Bounds for FP8 vLLM rollouts against the FSDP bf16 training kernel.
owner: rl-infra
bounds:                          # constants used by metrics and the bound chain
  ppo_clip: 0.2
  reward_range: [0, 1]
  seq_len: 4096                  # horizon T for sequence-level bounds (default: the run's max length)
numerical:                       # N
  - id: N1
    metric: abs_log_ratio
    aggregate: p99.9
    max: 0.2
    severity: error              # info | warn | error | critical (default error)
    where: {task: math}          # optional: restrict to sequences whose slices match (all given keys equal; a list means any of)
    positions: [0, 2048]         # optional: token positions [from, to) within each sequence
    per_slice: task              # optional: evaluate separately for every value of this key
statistical:                     # S
  - id: S1
    metric: abs_log_ratio
    test: exceedance             # share of values above `level` must be ≤ max, at confidence
    level: 0.2
    max: 0.01
    confidence: 0.95
    per_slice: task
    min_samples: 500             # fewer values in a slice → inconclusive
    correction: bonferroni       # none | bonferroni, across the slices of this clause
  - id: S2
    metric: reward_diff
    test: mean                   # mean must lie within [min, max] at confidence (bootstrap)
    min: -0.01
    max: 0.01
    confidence: 0.95
    resamples: 2000
    seed: 7
runtime:                         # R
  - id: R1
    field: batch_size
    aggregate: max
    max: 256
  - id: R2
    require_equal: weights_sha256     # header.kernels.train[x] == header.kernels.inf[x]
  - id: R3
    require: {inf.batch_invariant: true}
observability:                   # O
  - id: O1
    require_fields: [logp_train, logp_inf, slices.task]
    min_coverage: 0.99           # share of sequences (or tokens, for per-token fields) that have them
  - id: O2
    metric: log_ratio
    max_nonfinite_fraction: 0.0
escalation:                      # Π: first matching rule wins, per failed or inconclusive clause
  - when: {severity: [error, critical]}
    action: block_promotion
  - when: {clause: N1, slice: {task: math}}
    action: route_to_reference
  - when: {status: inconclusive}
    action: hold
  - default: warn
stages: [offline_ci, shadow, canary, full]
)YAML";

// The same contract as JSON.
const char* const kSpecJson = R"JSON({
  "kcx_contract": 1,
  "name": "fp8-rollouts-vs-fsdp",
  "version": "2026.12.1",
  "description": "Bounds for FP8 vLLM rollouts against the FSDP bf16 training kernel.",
  "owner": "rl-infra",
  "bounds": {"ppo_clip": 0.2, "reward_range": [0, 1], "seq_len": 4096},
  "numerical": [
    {"id": "N1", "metric": "abs_log_ratio", "aggregate": "p99.9", "max": 0.2, "severity": "error",
     "where": {"task": "math"}, "positions": [0, 2048], "per_slice": "task"}
  ],
  "statistical": [
    {"id": "S1", "metric": "abs_log_ratio", "test": "exceedance", "level": 0.2, "max": 0.01,
     "confidence": 0.95, "per_slice": "task", "min_samples": 500, "correction": "bonferroni"},
    {"id": "S2", "metric": "reward_diff", "test": "mean", "min": -0.01, "max": 0.01,
     "confidence": 0.95, "resamples": 2000, "seed": 7}
  ],
  "runtime": [
    {"id": "R1", "field": "batch_size", "aggregate": "max", "max": 256},
    {"id": "R2", "require_equal": "weights_sha256"},
    {"id": "R3", "require": {"inf.batch_invariant": true}}
  ],
  "observability": [
    {"id": "O1", "require_fields": ["logp_train", "logp_inf", "slices.task"], "min_coverage": 0.99},
    {"id": "O2", "metric": "log_ratio", "max_nonfinite_fraction": 0.0}
  ],
  "escalation": [
    {"when": {"severity": ["error", "critical"]}, "action": "block_promotion"},
    {"when": {"clause": "N1", "slice": {"task": "math"}}, "action": "route_to_reference"},
    {"when": {"status": "inconclusive"}, "action": "hold"},
    {"default": "warn"}
  ],
  "stages": ["offline_ci", "shadow", "canary", "full"]
}
)JSON";

// Everything the model holds except positions, as text: equal strings = equal contracts.
std::string dump(const Contract& c) {
    std::ostringstream o;
    o.precision(17);
    auto filter = [&](const SliceFilter& f) {
        for (const auto& [k, vs] : f.anyOf) {
            o << k << "=";
            for (const auto& v : vs)
                o << v << "|";
            o << ";";
        }
    };
    auto thr = [&](const char* n, const std::optional<Threshold>& t) {
        if (t)
            o << n << "=" << t->value << " ";
    };
    o << c.format << "/" << c.name << "/" << c.version << "/" << c.description << "/" << c.owner << "\n";
    o << "bounds " << c.bounds.ppoClip << " " << (c.bounds.rewardRange ? c.bounds.rewardRange->first : -99) << " "
      << (c.bounds.rewardRange ? c.bounds.rewardRange->second : -99) << " " << c.bounds.seqLen.value_or(-1) << " "
      << c.bounds.gradNorm.value_or(-1) << " " << c.bounds.advantageMax.value_or(-1) << "\n";
    for (const auto& cl : c.clauses) {
        o << cl.id << " " << familyName(cl.family) << " " << severityName(cl.severity) << " [" << cl.description
          << "] " << cl.metric << " agg=" << (cl.aggregate ? cl.aggregate->text : "-") << " ";
        thr("min", cl.min);
        thr("max", cl.max);
        thr("level", cl.level);
        thr("cov", cl.minCoverage);
        thr("nonfinite", cl.maxNonfiniteFraction);
        o << "conf=" << cl.confidence.value << " where=";
        filter(cl.where);
        if (cl.positions)
            o << " pos=" << cl.positions->first << ".." << cl.positions->second;
        o << " per=" << cl.perSlice << " test=" << int(cl.test) << " n=" << cl.minSamples
          << " corr=" << int(cl.correction) << " unit=" << int(cl.unit) << " B=" << cl.resamples
          << " seed=" << cl.seed << " field=" << cl.field << " eq=" << cl.requireEqual << " req=";
        for (const auto& [p, v] : cl.require)
            o << p << ":" << v.dump() << ",";
        o << " fields=";
        for (const auto& f : cl.requireFields)
            o << f << ",";
        o << "\n";
    }
    for (const auto& r : c.escalation) {
        o << "rule " << r.isDefault << " " << actionName(r.action) << " c=";
        for (const auto& x : r.clauses)
            o << x << ",";
        o << " f=";
        for (auto x : r.families)
            o << familyName(x) << ",";
        o << " sev=";
        for (auto x : r.severities)
            o << severityName(x) << ",";
        o << " st=";
        for (auto x : r.statuses)
            o << statusName(x) << ",";
        o << " stage=";
        for (const auto& x : r.stages)
            o << x << ",";
        o << " slice=";
        filter(r.slice);
        o << "\n";
    }
    for (const auto& s : c.stages)
        o << s << " ";
    return o.str();
}

}  // namespace

class TestContract : public QObject {
    Q_OBJECT
private slots:
    void specExample() {
        const Contract c = parseContract(kSpecYaml, "spec.yaml");
        QCOMPARE(c.format, 1);
        QCOMPARE(c.name, std::string("fp8-rollouts-vs-fsdp"));
        QCOMPARE(c.version, std::string("2026.12.1"));
        QCOMPARE(c.owner, std::string("rl-infra"));
        QVERIFY(c.description.rfind("Bounds for FP8", 0) == 0);
        QCOMPARE(c.text, std::string(kSpecYaml));
        QCOMPARE(c.bounds.ppoClip, 0.2);
        QVERIFY(c.bounds.rewardRange && c.bounds.rewardRange->first == 0 && c.bounds.rewardRange->second == 1);
        QCOMPARE(c.bounds.seqLen.value_or(0), int64_t(4096));
        QVERIFY(!c.bounds.gradNorm && !c.bounds.advantageMax);
        QCOMPARE(c.clauses.size(), size_t(8));
        QCOMPARE(c.stages, (std::vector<std::string>{"offline_ci", "shadow", "canary", "full"}));

        const Clause& n1 = *c.find("N1");
        QCOMPARE(n1.family, Family::Numerical);
        QCOMPARE(n1.metric, std::string("abs_log_ratio"));
        QVERIFY(n1.aggregate && n1.aggregate->kind == Aggregate::Kind::Quantile);
        QCOMPARE(n1.aggregate->q, 0.999);
        QVERIFY(n1.max && !n1.min);
        QCOMPARE(n1.max->value, 0.2);
        QCOMPARE(n1.severity, Severity::Error);
        QCOMPARE(n1.where.anyOf.at("task"), std::vector<std::string>{"math"});
        QVERIFY(n1.positions && n1.positions->first == 0 && n1.positions->second == 2048);
        QCOMPARE(n1.perSlice, std::string("task"));
        QCOMPARE(n1.span.line, 11);
        QCOMPARE(n1.span.column, 9);

        const Clause& s1 = *c.find("S1");
        QCOMPARE(s1.family, Family::Statistical);
        QCOMPARE(s1.test, Clause::Test::Exceedance);
        QCOMPARE(s1.level->value, 0.2);
        QCOMPARE(s1.max->value, 0.01);
        QCOMPARE(s1.confidence.value, 0.95);
        QCOMPARE(s1.minSamples, int64_t(500));
        QCOMPARE(s1.correction, Clause::Correction::Bonferroni);
        QCOMPARE(s1.unit, Clause::Unit::Token);
        QCOMPARE(s1.perSlice, std::string("task"));
        const Clause& s2 = *c.find("S2");
        QCOMPARE(s2.test, Clause::Test::Mean);
        QCOMPARE(s2.metric, std::string("reward_diff"));
        QCOMPARE(s2.min->value, -0.01);
        QCOMPARE(s2.max->value, 0.01);
        QCOMPARE(s2.resamples, int64_t(2000));
        QCOMPARE(s2.seed, uint64_t(7));
        QVERIFY(!s2.level);

        const Clause& r1 = *c.find("R1");
        QCOMPARE(r1.family, Family::Runtime);
        QCOMPARE(r1.field, std::string("batch_size"));
        QCOMPARE(r1.aggregate->kind, Aggregate::Kind::Max);
        QCOMPARE(r1.max->value, 256.0);
        QCOMPARE(c.find("R2")->requireEqual, std::string("weights_sha256"));
        const Clause& r3 = *c.find("R3");
        QCOMPARE(r3.require.size(), size_t(1));
        QCOMPARE(r3.require[0].first, std::string("inf.batch_invariant"));
        QVERIFY(r3.require[0].second == nlohmann::json(true));

        const Clause& o1 = *c.find("O1");
        QCOMPARE(o1.family, Family::Observability);
        QCOMPARE(o1.requireFields, (std::vector<std::string>{"logp_train", "logp_inf", "slices.task"}));
        QCOMPARE(o1.minCoverage->value, 0.99);
        const Clause& o2 = *c.find("O2");
        QCOMPARE(o2.metric, std::string("log_ratio"));
        QCOMPARE(o2.maxNonfiniteFraction->value, 0.0);

        QCOMPARE(c.escalation.size(), size_t(4));
        QCOMPARE(c.escalation[0].severities, (std::vector<Severity>{Severity::Error, Severity::Critical}));
        QCOMPARE(c.escalation[0].action, Action::BlockPromotion);
        QCOMPARE(c.escalation[1].clauses, std::vector<std::string>{"N1"});
        QCOMPARE(c.escalation[1].slice.anyOf.at("task"), std::vector<std::string>{"math"});
        QCOMPARE(c.escalation[1].action, Action::RouteToReference);
        QCOMPARE(c.escalation[2].statuses, std::vector<Status>{Status::Inconclusive});
        QCOMPARE(c.escalation[2].action, Action::Hold);
        QVERIFY(c.escalation[3].isDefault);
        QCOMPARE(c.escalation[3].action, Action::Warn);
        QCOMPARE(c.escalation[3].span.line, 60);
    }

    void jsonEqualsYaml() {
        const Contract y = parseContract(kSpecYaml, "spec.yaml");
        const Contract j = parseContract(kSpecJson, "spec.json");
        QCOMPARE(dump(j), dump(y));
        // JSON positions are real too: "max": 0.2 of N1 is on line 9.
        const Clause& n1 = *j.find("N1");
        QCOMPARE(n1.max->span.line, 9);
        QCOMPARE(j.text.substr(n1.max->span.offset, n1.max->span.length), std::string("0.2"));
        QCOMPARE(j.text.substr(n1.span.offset, n1.span.length), std::string("\"N1\""));
    }

    void jsonEscapes() {
        // Python's json.dumps writes characters beyond U+FFFF as surrogate pairs; yaml-cpp cannot
        // read those, so they are rewritten — positions must still be those of the original text.
        const std::string text = "{\"kcx_contract\": 1, \"name\": \"\\ud83d\\ude00 \\u00e9\\ud83d\\ude00\",\n"
                                 " \"description\": \"\\ud83d\\ude00\", \"numerical\": [{\"id\": \"N1\", "
                                 "\"metric\": \"tv\", \"aggregate\": \"max\", \"max\": 1E-3}]}";
        const Contract c = parseContract(text, "e.json");
        QCOMPARE(c.name, std::string("\xF0\x9F\x98\x80 \xC3\xA9\xF0\x9F\x98\x80"));
        const Threshold& max = *c.find("N1")->max;
        QCOMPARE(text.substr(max.span.offset, max.span.length), std::string("1E-3"));
        QCOMPARE(max.span.line, 2);
        QCOMPARE(max.span.column, int(text.find("1E-3") - text.find('\n')));
        const std::string bad = text.substr(0, text.size() - 3) + ", \"maximum\": 2}]}";
        InputError e("", "", "");
        test::contractErrorOf(bad, &e);
        QVERIFY2(e.message().find("unknown key 'maximum'") != std::string::npos, e.what());
        QCOMPARE(QString::fromStdString(e.place()),
                 QString("2:%1").arg(bad.find("\"maximum") - bad.find('\n')));
    }

    void defaults() {
        const Contract c = parseContract(kN1 + "statistical:\n  - id: S\n    metric: k3\n    level: 0.1\n"
                                               "    max: 0.05\n",
                                         "d.yaml");
        QCOMPARE(c.version, std::string());
        QCOMPARE(c.bounds.ppoClip, 0.2);
        QCOMPARE(c.stages.size(), size_t(4));
        QVERIFY(c.escalation.empty());
        const Clause& n = *c.find("N1");
        QCOMPARE(n.severity, Severity::Error);
        QVERIFY(n.where.empty() && !n.positions && n.perSlice.empty());
        const Clause& s = *c.find("S");
        QCOMPARE(s.test, Clause::Test::Exceedance);
        QCOMPARE(s.confidence.value, 0.95);
        QVERIFY(!s.confidence.span.known());
        QCOMPARE(s.resamples, int64_t(2000));
        QCOMPARE(s.correction, Clause::Correction::None);
        QCOMPARE(s.minSamples, int64_t(0));
    }

    void variants() {
        // numbers kept as written, quoted numbers, aggregates as mappings, lists in filters,
        // scalar types of require values.
        const Contract c = parseContract(kHead + "version: 2.10\nnumerical:\n"
                                                 "  - {id: A, metric: tv, aggregate: {fraction_above: 0.2}, max: 1e-3}\n"
                                                 "  - id: B\n    metric: tv\n    aggregate: 'fraction_outside: [-1, 1]'\n"
                                                 "    max: \"0.5\"\n    where: {task: [math, code], n: 3, ok: true}\n"
                                                 "  - id: C\n    metric: tv\n    aggregate: {fraction_outside: [-2, 2.5]}\n"
                                                 "    min: 0\nruntime:\n  - id: R\n    require: {inf.batch_invariant: "
                                                 "false, inf.precision: fp8, inf.version: 3, x: \"true\", y: ~}\n",
                                         "v.yaml");
        QCOMPARE(c.version, std::string("2.10"));
        const Clause& a = *c.find("A");
        QCOMPARE(a.aggregate->kind, Aggregate::Kind::FractionAbove);
        QCOMPARE(a.aggregate->a, 0.2);
        QCOMPARE(a.max->value, 1e-3);
        QCOMPARE(c.text.substr(a.max->span.offset, a.max->span.length), std::string("1e-3"));
        const Clause& b = *c.find("B");
        QCOMPARE(b.aggregate->kind, Aggregate::Kind::FractionOutside);
        QCOMPARE(b.aggregate->a, -1.0);
        QCOMPARE(b.max->value, 0.5);
        QCOMPARE(c.text.substr(b.max->span.offset, b.max->span.length), std::string("\"0.5\""));
        QCOMPARE(b.where.anyOf.at("task"), (std::vector<std::string>{"math", "code"}));
        QCOMPARE(b.where.anyOf.at("n"), std::vector<std::string>{"3"});
        QCOMPARE(b.where.anyOf.at("ok"), std::vector<std::string>{"true"});
        const Clause& cc = *c.find("C");
        QCOMPARE(cc.aggregate->b, 2.5);
        QCOMPARE(cc.min->value, 0.0);
        const auto& req = c.find("R")->require;
        QCOMPARE(req.size(), size_t(5));
        QVERIFY(req[0].second == nlohmann::json(false));
        QVERIFY(req[1].second == nlohmann::json("fp8"));
        QVERIFY(req[2].second == nlohmann::json(3));
        QVERIFY(req[3].second == nlohmann::json("true"));
        QVERIFY(req[4].second.is_null());
    }

    void spans() {
        const Contract c = parseContract(kSpecYaml, "spec.yaml");
        auto at = [&](const SourceSpan& s) { return c.text.substr(s.offset, s.length); };
        struct Want {
            const char* id;
            std::optional<Threshold> Clause::*member;
            const char* text;
            int line, column;
        };
        const Want wants[] = {{"N1", &Clause::max, "0.2", 14, 10},      {"S1", &Clause::level, "0.2", 23, 12},
                              {"S1", &Clause::max, "0.01", 24, 10},     {"S2", &Clause::min, "-0.01", 32, 10},
                              {"S2", &Clause::max, "0.01", 33, 10},     {"R1", &Clause::max, "256", 41, 10},
                              {"O1", &Clause::minCoverage, "0.99", 49, 19},
                              {"O2", &Clause::maxNonfiniteFraction, "0.0", 52, 29}};
        for (const Want& w : wants) {
            const auto& t = c.find(w.id)->*w.member;
            QVERIFY2(t && t->span.known(), w.id);
            QCOMPARE(at(t->span), std::string(w.text));
            QCOMPARE(t->span.line, w.line);
            QCOMPARE(t->span.column, w.column);
        }
        QCOMPARE(at(c.find("S1")->confidence.span), std::string("0.95"));
        QCOMPARE(c.find("S1")->confidence.span.line, 25);
        for (const auto& cl : c.clauses) {
            QCOMPARE(at(cl.span), cl.id);
            // line and column agree with the offset
            const std::string before = c.text.substr(0, cl.span.offset);
            QCOMPARE(int(std::count(before.begin(), before.end(), '\n')) + 1, cl.span.line);
            QCOMPARE(int(cl.span.offset - (before.rfind('\n') + 1)) + 1, cl.span.column);
        }
        QCOMPARE(at(c.escalation[0].span), std::string("block_promotion"));

        // Anchors, quotes, CRLF line ends, a byte order mark.
        const std::string odd = "\xEF\xBB\xBFkcx_contract: 1\r\nname: t\r\nnumerical:\r\n  - id: 'N1'\r\n"
                                "    metric: tv\r\n    aggregate: max\r\n    max: &m 0.25 # c\r\n    min: '-1e-3'\r\n"
                                "  - {id: N2, metric: tv, aggregate: max, max: *m}\r\n";
        const Contract o = parseContract(odd, "odd.yaml");
        const Clause& n1 = *o.find("N1");
        QCOMPARE(o.text.substr(n1.span.offset, n1.span.length), std::string("'N1'"));
        QCOMPARE(o.text.substr(n1.max->span.offset, n1.max->span.length), std::string("0.25"));
        QCOMPARE(n1.max->span.line, 7);
        QCOMPARE(n1.max->span.column, 13);
        QCOMPARE(o.text.substr(n1.min->span.offset, n1.min->span.length), std::string("'-1e-3'"));
        QCOMPARE(n1.min->value, -1e-3);
        // An alias points at the value it stands for: editing it there edits both.
        const Clause& n2 = *o.find("N2");
        QCOMPARE(n2.max->span.offset, n1.max->span.offset);
    }

    void load() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("c.yaml").toStdString();
        FILE* f = std::fopen(path.c_str(), "wb");
        std::fputs(kSpecYaml, f);
        std::fclose(f);
        const Contract c = loadContract(path);
        QCOMPARE(c.path, path);
        QCOMPARE(c.text, std::string(kSpecYaml));
        QCOMPARE(c.clauses.size(), size_t(8));
        try {
            loadContract(path + ".missing");
            QFAIL("a missing file was accepted");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("cannot read the contract") != std::string::npos);
        }
        f = std::fopen(path.c_str(), "wb");
        std::fputs("kcx_contract: 1\nname: t\nnumerical:\n  - id: N1\n    metric: tv\n    maximum: 1\n", f);
        std::fclose(f);
        try {
            loadContract(path);
            QFAIL("a bad contract was accepted");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()), path + ":6:5: unknown key 'maximum' — did you mean 'max'?");
        }
    }
};

QTEST_GUILESS_MAIN(TestContract)
#include "test_contract.moc"
