// The contract language (SPEC 4): the SPEC example into typed values, JSON = YAML, every
// kind of mistake rejected at its line and column, source spans, hostile input.
#include <QtTest/QTest>

#include <QElapsedTimer>
#include <QTemporaryDir>

#include <cstdio>
#include <sstream>

#include "core/contract.h"
#include "core/errors.h"

using namespace kcx;

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

// The error a text gets, or "" when it parses.
std::string errorOf(const std::string& text, InputError* out = nullptr) {
    try {
        parseContract(text, "c.yaml");
    } catch (const InputError& e) {
        if (out)
            *out = e;
        return e.what();
    }
    return "";
}

const std::string kHead = "kcx_contract: 1\nname: t\n";
// A valid numerical clause N1 on lines 3-7: id at 4:9, metric 5:13, aggregate 6:16, max 7:10.
const std::string kN1 = kHead + "numerical:\n  - id: N1\n    metric: abs_log_ratio\n    aggregate: p99\n    max: 0.2\n";

}  // namespace

class TestContract : public QObject {
    Q_OBJECT
private slots:
    // fuzz_contract's finding: yaml-cpp 0.7 never finished this 210-byte text (it built
    // nodes until memory ran out). Now a clear error at once.
    void runawayYamlIsStopped() {
        const std::string text = std::string(", " "\x22" "name" "\x22" ": " "\x22" "kcx" "\x0d" "gat" "\x00" "em" "\x22" "9.99an" "\x22" ", " "\x22" "min" "\x22" ": 0.95}], " "\x22" "statistn" "\x22" ": " "\x22" "block_promotion" "\x22" "}, {" "\x22" "default" "\x22" ": " "\x22" "`a{" "\x22" "kcocx_ntra" "a" "t" "\x22" ": 1, " "\x22" "name" "\x22" ": " "\x22" "kcx" "\x0d" "gat" "\x00" "em" "\x22" "9.99an" "\x22" ", " "\x22" "min" "\x22" ": 0.95}], " "\x22" "statistn" "\x22" ": " "\x22" "block_promotion" "\x22" "}, {" "\x22" "default" "\x22" ": " "\x22" "`arn" "\x22" "}]}", 210);
        try {
            parseContract(text, "slow.yaml");
            QFAIL("the runaway text parsed");
        } catch (const InputError& e) {
            // (The fuzzer's text had one stray byte 0xE2, which the UTF-8 check now stops
            // first; it is an 'a' here so that the event budget is what stops it.)
            QVERIFY2(std::string(e.what()).rfind("slow.yaml:", 0) == 0 &&
                         std::string(e.what()).find("did not come to an end") != std::string::npos,
                     e.what());
        }
    }

    // Contracts are UTF-8: a stray byte is an error at its line and column (the fuzzer's
    // find: a byte 0xFF in an observability value reached the JSON output and threw there).
    void invalidUtf8IsAnErrorAtItsPlace() {
        const std::string text = "kcx_contract: 1\nname: x\nobservability:\n  - id: O1\n"
                                 "    require: {inf.name: de\xffmo}\n";
        try {
            parseContract(text, "bytes.yaml");
            QFAIL("invalid UTF-8 parsed");
        } catch (const InputError& e) {
            // Line 5, column 27: "    require: {inf.name: de" is 26 characters.
            QVERIFY2(std::string(e.what()).rfind("bytes.yaml:5:27: invalid UTF-8 (byte 0xFF)", 0) == 0, e.what());
        }
        // Overlong forms and surrogates are not UTF-8 either; real multi-byte text is.
        for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
            const std::string t = std::string("kcx_contract: 1\nname: \"") + bad + "\"\n";
            QVERIFY_THROWS_EXCEPTION(InputError, parseContract(t, "b.yaml"));
        }
        const Contract ok = parseContract("kcx_contract: 1\nname: \"Kontrakt \u00e9\u2227\U0001F600\"\n", "ok.yaml");
        QCOMPARE(ok.name, std::string("Kontrakt \u00e9\u2227\U0001F600"));
    }

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
        errorOf(bad, &e);
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

    void rejected_data() {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<QString>("place");
        QTest::addColumn<QString>("phrase");
        auto row = [](const char* tag, const std::string& text, const char* place, const char* phrase) {
            QTest::newRow(tag) << text << QString(place) << QString::fromUtf8(phrase);
        };
        const std::string n1 = kN1;
        // keys
        row("top typo", kHead + "nmae: x\n", "3:1", "unknown key 'nmae' — did you mean 'name'?");
        row("maximum", n1 + "    maximum: 0.3\n", "8:5", "unknown key 'maximum' — did you mean 'max'?");
        row("metirc", kHead + "numerical:\n  - id: N1\n    metirc: tv\n", "5:5",
            "unknown key 'metirc' — did you mean 'metric'?");
        row("no suggestion", n1 + "    zzzzzz: 1\n", "8:5", "unknown key 'zzzzzz' in a numerical clause (expected one of: id, metric");
        row("bounds key", kHead + "bounds:\n  ppo_clp: 0.2\n", "4:3", "unknown key 'ppo_clp' — did you mean 'ppo_clip'?");
        row("rule key", n1 + "escalation:\n  - when: {status: fail}\n    acton: hold\n", "10:5",
            "unknown key 'acton' — did you mean 'action'?");
        row("when key", n1 + "escalation:\n  - when: {stauts: fail}\n    action: hold\n", "9:12",
            "unknown key 'stauts' — did you mean 'status'?");
        row("yaml duplicate key", kHead + "name: u\n", "3:1", "duplicate key 'name' in the contract (first at line 2, column 1)");
        row("json duplicate key", "{\"kcx_contract\": 1, \"name\": \"a\",\n \"name\": \"b\"}", "2:2", "duplicate key 'name'");
        // required keys
        row("no kcx_contract", "name: t\n", "1:1", "missing 'kcx_contract: 1'");
        row("no name", "kcx_contract: 1\nversion: x\n", "1:1", "missing 'name'");
        row("format 2", "kcx_contract: 2\nname: t\n", "1:15", "unsupported kcx_contract 2");
        row("empty", "# nothing\n", "1:1", "empty contract");
        row("not a mapping", "- a\n- b\n", "1:1", "a contract must be a mapping");
        // clause ids, metrics, aggregates
        row("duplicate id", n1 + "  - {id: N1, metric: tv, aggregate: max, max: 1}\n", "8:10", "duplicate clause id 'N1' (first at line 4, column 9)");
        row("no id", kHead + "numerical:\n  - metric: tv\n", "4:5", "a numerical clause needs an 'id'");
        row("unknown metric", kHead + "numerical:\n  - id: N1\n    metric: abs_log_ration\n", "5:13",
            "unknown metric 'abs_log_ration' — did you mean 'abs_log_ratio'?");
        row("bad aggregate", kHead + "numerical:\n  - id: N1\n    metric: tv\n    aggregate: p101\n", "6:16",
            "aggregate 'p101' is not a percentile");
        row("bad aggregate map", kHead + "numerical:\n  - id: N1\n    metric: tv\n    aggregate: {fraction_abov: 0.2}\n",
            "6:16", "unknown aggregate 'fraction_abov: 0.2'");
        row("aggregate arg", kHead + "numerical:\n  - id: N1\n    metric: tv\n    aggregate: {fraction_above: x}\n",
            "6:16", "fraction_above needs a number, got 'x'");
        row("no bound", kHead + "numerical:\n  - id: N1\n    metric: tv\n    aggregate: max\n", "4:5",
            "numerical clause 'N1' needs 'max' and/or 'min'");
        row("min above max", n1 + "    min: 0.5\n", "8:10", "'min' (0.5) is above 'max' (0.2)");
        // types
        row("max not a number", kHead + "numerical:\n  - id: N1\n    metric: tv\n    aggregate: max\n    max: abc\n",
            "7:10", "'max' must be a number, found 'abc'");
        row("max empty", kHead + "numerical:\n  - id: N1\n    metric: tv\n    aggregate: max\n    max:\n", "7:5",
            "'max' must be a number, found nothing");
        row("numerical not a list", kHead + "numerical: {id: N1}\n", "3:12", "'numerical' must be a list, found a mapping");
        row("clause not a mapping", kHead + "numerical:\n  - N1\n", "4:5", "a numerical clause must be a mapping");
        row("name a list", "kcx_contract: 1\nname: [a]\n", "2:7", "'name' must be a string, found a list");
        row("where nested", n1 + "    where: {task: {a: b}}\n", "8:19", "'task' must be a string or a list of strings");
        // statistical
        row("confidence 1.5", kHead + "statistical:\n  - {id: S, metric: tv, level: 0.1, max: 0.1, confidence: 1.5}\n",
            "4:59", "'confidence' must lie in (0, 1), found 1.5");
        row("confidence 0", kHead + "statistical:\n  - {id: S, metric: tv, level: 0.1, max: 0.1, confidence: 0}\n",
            "4:59", "'confidence' must lie in (0, 1)");
        row("no level", kHead + "statistical:\n  - id: S\n    metric: tv\n    max: 0.1\n", "4:5", "needs 'level'");
        row("mean no bounds", kHead + "statistical:\n  - id: S\n    metric: tv\n    test: mean\n", "4:5",
            "statistical clause 'S' needs 'max' and/or 'min'");
        row("exceedance min", kHead + "statistical:\n  - {id: S, metric: tv, level: 0.1, max: 0.1, min: 0}\n", "4:52",
            "'min' does not apply to test: exceedance");
        row("share above 1", kHead + "statistical:\n  - {id: S, metric: tv, level: 0.1, max: 2}\n", "4:42",
            "between 0 and 1");
        row("test name", kHead + "statistical:\n  - {id: S, metric: tv, test: means, max: 1}\n", "4:31",
            "unknown test 'means' — did you mean 'mean'?");
        row("correction", kHead + "statistical:\n  - {id: S, metric: tv, level: 0, max: 0, correction: bonf}\n", "4:55",
            "unknown correction 'bonf' — did you mean 'bonferroni'?");
        row("resamples 0", kHead + "statistical:\n  - {id: S, metric: tv, test: mean, max: 0, resamples: 0}\n", "4:56",
            "'resamples' must be a whole number ≥ 1, found '0'");
        row("seed -1", kHead + "statistical:\n  - {id: S, metric: tv, test: mean, max: 0, seed: -1}\n", "4:51",
            "'seed' must be a whole number ≥ 0");
        row("min_samples 1.5", kHead + "statistical:\n  - {id: S, metric: tv, test: mean, max: 0, min_samples: 1.5}\n",
            "4:58", "'min_samples' must be a whole number");
        // names
        row("severity", n1 + "    severity: fatal\n", "8:15",
            "unknown severity 'fatal' (expected one of: info, warn, error, critical)");
        row("action", n1 + "escalation:\n  - when: {family: numerical}\n    action: block\n", "10:13",
            "unknown action 'block' — did you mean 'block_promotion'?");
        row("status", n1 + "escalation:\n  - when: {status: [fail, failed]}\n    action: hold\n", "9:27",
            "unknown status 'failed' — did you mean 'fail'?");
        row("family", n1 + "escalation:\n  - when: {family: numeric}\n    action: hold\n", "9:20",
            "unknown family 'numeric' — did you mean 'numerical'?");
        row("default action", n1 + "escalation:\n  - default: nothing\n", "9:14", "unknown action 'nothing'");
        // positions
        row("positions reversed", n1 + "    positions: [10, 5]\n", "8:16", "'positions' must be [from, to) with from < to");
        row("positions negative", n1 + "    positions: [-1, 5]\n", "8:17", "'positions' must be a whole number ≥ 0");
        row("positions one", n1 + "    positions: [1]\n", "8:16", "'positions' must be [from, to)");
        row("positions per-seq", kHead + "numerical:\n  - {id: N, metric: length, aggregate: max, max: 1, positions: [0, 1]}\n",
            "4:64", "'positions' applies to per-token metrics");
        // escalation
        row("when clause", n1 + "escalation:\n  - when: {clause: [N1, N9]}\n    action: hold\n", "9:25",
            "escalation names clause 'N9', which the contract does not define");
        row("when stage", n1 + "stages: [ci, prod]\nescalation:\n  - when: {stage: canary}\n    action: hold\n", "10:19",
            "unknown stage 'canary'");
        row("rule shape", n1 + "escalation:\n  - when: {status: fail}\n", "9:5", "an escalation rule needs 'action: ACTION'");
        row("default plus when", n1 + "escalation:\n  - default: warn\n    when: {}\n", "10:5", "a default rule is only");
        row("after default", n1 + "escalation:\n  - default: warn\n  - when: {}\n    action: hold\n", "10:5",
            "can never match");
        row("escalation not list", n1 + "escalation: warn\n", "8:13", "'escalation' must be a list");
        row("stage twice", kHead + "stages: [a, a]\n", "3:13", "stage 'a' is listed twice");
        // runtime, observability
        row("runtime shape", kHead + "runtime:\n  - id: R\n    max: 3\n", "4:5",
            "runtime clause 'R' needs 'field' with 'aggregate'");
        row("runtime two shapes", kHead + "runtime:\n  - {id: R, require_equal: x, require: {a: 1}}\n", "4:31",
            "has both 'require_equal' and 'require'");
        row("runtime no aggregate", kHead + "runtime:\n  - {id: R, field: batch_size, max: 1}\n", "4:5", "needs 'aggregate'");
        row("require value list", kHead + "runtime:\n  - {id: R, require: {a: [1]}}\n", "4:26", "'a' must be a single value");
        row("observability shape", kHead + "observability:\n  - id: O\n    min_coverage: 0.5\n", "4:5",
            "needs 'require_fields: [...]'");
        row("coverage 1.5", kHead + "observability:\n  - {id: O, require_fields: [tokens], min_coverage: 1.5}\n", "4:53",
            "'min_coverage' must lie in [0, 1]");
        row("unknown field", kHead + "observability:\n  - {id: O, require_fields: [tokens, logp_trian]}\n", "4:38",
            "unknown field 'logp_trian' — did you mean 'logp_train'?");
        row("nonfinite 2", kHead + "observability:\n  - {id: O, metric: tv, max_nonfinite_fraction: 2}\n", "4:49",
            "'max_nonfinite_fraction' must lie in [0, 1]");
        // bounds
        row("reward_range", kHead + "bounds:\n  reward_range: [1, 0]\n", "4:17", "'reward_range' must be [min, max] with min < max");
        row("seq_len 0", kHead + "bounds:\n  seq_len: 0\n", "4:12", "'seq_len' must be a whole number ≥ 1");
        row("ppo_clip", kHead + "bounds:\n  ppo_clip: -1\n", "4:13", "'ppo_clip' must be above 0");
        // syntax
        row("yaml syntax", kHead + "numerical: [a, b\n", "4:1", "invalid YAML");
        row("json syntax", "{\"kcx_contract\": 1,\n \"name\": \"t\",}", "2:14", "invalid JSON: syntax error while parsing object key");
        row("json trailing", "{\"kcx_contract\": 1, \"name\": \"t\"} x", "1:34", "invalid JSON");
        row("two documents", kHead + "---\nname: u\n", "4:1", "a contract is one YAML document");
    }

    void rejected() {
        QFETCH(std::string, text);
        QFETCH(QString, place);
        QFETCH(QString, phrase);
        InputError e("", "", "");
        const std::string what = errorOf(text, &e);
        QVERIFY2(!what.empty(), "the contract was accepted");
        QVERIFY2(QString::fromStdString(e.message()).contains(phrase), what.c_str());
        QCOMPARE(QString::fromStdString(e.place()), place);
        QCOMPARE(e.file(), std::string("c.yaml"));
        QVERIFY(what.rfind("c.yaml:" + place.toStdString() + ": ", 0) == 0);
    }

    void hostile() {
        // A billion laughs: 10^9 strings through aliases.
        std::string bomb = kHead + "description: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
        for (char c = 'b'; c <= 'i'; ++c)
            bomb += std::string("owner: ").replace(0, 5, std::string("k") + c) + "&" + c + " [*" + char(c - 1) +
                    ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
                    char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
                    char(c - 1) + "]\n";
        QElapsedTimer timer;
        timer.start();
        std::string what = errorOf(bomb);
        QVERIFY2(what.find("expands to more than 1000000 values") != std::string::npos, what.c_str());
        QVERIFY2(timer.elapsed() < 10000, "took too long");
        // The same, hidden inside a clause.
        timer.restart();
        what = errorOf(bomb.substr(0, bomb.size()) .replace(bomb.find("ki:"), 3, "numerical:"));
        QVERIFY2(what.find("expands to more than") != std::string::npos, what.c_str());
        QVERIFY2(timer.elapsed() < 10000, "took too long");
        // A recursive alias, deep nesting.
        what = errorOf(kHead + "numerical: &a [*a]\n");
        QVERIFY2(what.find("nests deeper than") != std::string::npos, what.c_str());
        what = errorOf(kHead + "description: " + std::string(100000, '[') + std::string(100000, ']') + "\n");
        QVERIFY2(!what.empty(), "deep nesting accepted");
        what = errorOf("{\"kcx_contract\": 1, \"name\": \"t\", \"description\": " + std::string(100000, '[') +
                       std::string(100000, ']') + "}");
        QVERIFY2(!what.empty(), "deep JSON accepted");
        // Garbage never crashes.
        for (const char* junk : {"\x01\x02\xff", "{", "[", "\"", "kcx_contract: 1\nname: t\nnumerical: [{id: }]\n",
                                 "kcx_contract: 1\nname: t\n? [a]\n: b\n", "&a *a", "!!binary x"})
            QVERIFY(!errorOf(junk).empty());
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
