// The contract language (SPEC 4): every kind of mistake rejected at its line and column,
// invalid UTF-8, runaway YAML and hostile input stopped with a clear error.
#include <QtTest/QTest>

#include <QElapsedTimer>

#include <string>

#include "core/base/errors.h"
#include "core/contract/contract.h"
#include "tests/support/contract_text.h"

using namespace kcx;
using test::kHead;
using test::kN1;

Q_DECLARE_METATYPE(std::string)

class TestContractErrors : public QObject {
    Q_OBJECT
private slots:
    // fuzz_contract's finding: yaml-cpp 0.7 never finished this 210-byte text (it built
    // nodes until memory ran out). Now a clear error at once.
    void runawayYamlIsStopped() {
        const std::string text = std::string(", " "\x22" "name" "\x22" ": " "\x22" "kcx" "\x0d" "gat" "\x01" "em" "\x22" "9.99an" "\x22" ", " "\x22" "min" "\x22" ": 0.95}], " "\x22" "statistn" "\x22" ": " "\x22" "block_promotion" "\x22" "}, {" "\x22" "default" "\x22" ": " "\x22" "`a{" "\x22" "kcocx_ntra" "a" "t" "\x22" ": 1, " "\x22" "name" "\x22" ": " "\x22" "kcx" "\x0d" "gat" "\x01" "em" "\x22" "9.99an" "\x22" ", " "\x22" "min" "\x22" ": 0.95}], " "\x22" "statistn" "\x22" ": " "\x22" "block_promotion" "\x22" "}, {" "\x22" "default" "\x22" ": " "\x22" "`arn" "\x22" "}]}", 210);
        try {
            parseContract(text, "slow.yaml");
            QFAIL("the runaway text parsed");
        } catch (const InputError& e) {
            // (The fuzzer's text had one stray byte 0xE2, which the UTF-8 check now stops
            // first; it is an 'a' here so that the event budget is what stops it. Its NUL bytes
            // are 0x01 for the same reason: a NUL is now refused at once.)
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
        // caps on counts (issue 16: `resamples: 1e13` died with std::bad_alloc and no place)
        const std::string s2 = kHead + "statistical:\n  - id: S2\n    metric: reward_diff\n    test: mean\n"
                                       "    min: -0.01\n    max: 0.01\n    resamples: ";
        row("resamples 1e13", s2 + "1e13\n", "9:16", "'resamples' must be at most 1,000,000 (the cap on this count), found '1e13'");
        row("resamples 1e8", s2 + "100000000\n", "9:16", "'resamples' must be at most 1,000,000");
        row("resamples beyond int64", s2 + "100000000000000000000000\n", "9:16", "'resamples' must be at most 1,000,000");
        row("resamples json", "{\"kcx_contract\": 1, \"name\": \"t\", \"statistical\": [{\"id\": \"S\",\n"
            "\"metric\": \"reward_diff\", \"test\": \"mean\", \"max\": 1, \"resamples\": 1e13}]}",
            "2:65", "'resamples' must be at most 1,000,000");
        row("min_samples", kHead + "statistical:\n  - {id: S, metric: tv, test: exceedance, level: 0.1, max: 0.1, "
            "min_samples: 1e300}\n", "4:78", "'min_samples' must be at most 1,000,000,000,000");
        row("positions", n1 + "    positions: [0, 1e15]\n", "8:20", "'positions' must be at most 1,000,000,000,000");
        row("seq_len", kHead + "bounds:\n  seq_len: 99999999999999999\n", "4:12", "'seq_len' must be at most 1,000,000,000,000");
        // deep nesting, at the first bracket past the limit (issue 16, case 5)
        row("deep yaml", kHead + "description: " + std::string(100000, '[') + std::string(100000, ']') + "\n", "3:78",
            "nested deeper than 64 levels");
        row("deep json", "{\"kcx_contract\": 1, \"name\": \"t\", \"description\": " + std::string(1000000, '[') +
            std::string(1000000, ']') + "}", "1:112", "JSON nested deeper than 64 levels");
        // clause ids that read the same as another (issue 16, case 8: "N1" and "N1\u200B" passed as two)
        const std::string n1b = n1 + "  - id: N1\u200B\n    metric: abs_log_ratio\n    aggregate: p99\n    max: 0.2\n";
        row("zero-width id", n1b, "8:9", "'id' holds U+200B (a character that does not show) at character 3");
        row("bidi id", kHead + "numerical:\n  - id: \"\u202EN1\"\n", "4:9", "'id' holds U+202E");
        row("isolate id", kHead + "numerical:\n  - {id: N\u20661, metric: tv}\n", "4:10", "'id' holds U+2066");
        row("bom id", kHead + "numerical:\n  - id: \uFEFFN1\n", "4:9", "'id' holds U+FEFF");
        row("word joiner id", kHead + "numerical:\n  - id: N\u20601\n", "4:9", "'id' holds U+2060");
        row("control id", kHead + "numerical:\n  - id: \"N\\t1\"\n", "4:9", "'id' holds U+0009 (a control character)");
        row("nbsp id", kHead + "numerical:\n  - id: N1\u00A0\n", "4:9", "'id' holds U+00A0");
        row("space id", kHead + "numerical:\n  - id: \"N1 \"\n", "4:9", "'id' holds a space at the end");
        row("json zwj id", "{\"kcx_contract\": 1, \"name\": \"t\", \"numerical\": [{\"id\": \"N\\u200d1\"}]}", "1:55",
            "'id' holds U+200D");
        // ids that read the same in other bytes: A + combining ring above, the Angstrom sign
        // and the Kelvin sign are "Å" / "K" in normal form C (U+00C5, U+004B)
        row("combining id", kHead + "numerical:\n  - id: A\u030A1\n", "4:9",
            "'id' is not in Unicode normal form C: character 1 (U+0041) is U+00C5 in normal form C");
        row("angstrom id", kHead + "numerical:\n  - id: \u212B1\n", "4:9", "character 1 (U+212B) is U+00C5");
        row("kelvin id", kHead + "numerical:\n  - id: N\u212A\n", "4:9", "character 2 (U+212A) is U+004B");
        // SPEC 8's persist and until
        row("persist no window", n1 + "escalation:\n  - when: {clause: N1}\n    persist: {failures: 2}\n    action: hold\n",
            "10:14", "persist needs both 'failures: K' and 'window: W'");
        row("persist short window", n1 + "escalation:\n  - when: {clause: N1}\n    persist: {failures: 3, window: 2}\n    action: hold\n",
            "10:36", "the window (2 steps) is shorter than the 3 failures it must hold");
        row("persist zero", n1 + "escalation:\n  - when: {clause: N1}\n    persist: {failures: 0, window: 2}\n    action: hold\n",
            "10:25", "'failures' must be a whole number ≥ 1, found '0'");
        row("persist key", n1 + "escalation:\n  - when: {clause: N1}\n    persist: {failures: 1, windw: 2}\n    action: hold\n",
            "10:28", "unknown key 'windw' — did you mean 'window'?");
        row("until zero", n1 + "escalation:\n  - when: {clause: N1}\n    until: {passes: 0}\n    action: hold\n",
            "10:21", "'passes' must be a whole number ≥ 1, found '0'");
        row("until no passes", n1 + "escalation:\n  - when: {clause: N1}\n    until: {}\n    action: hold\n",
            "10:12", "until needs 'passes: R'");
        row("default persist", n1 + "escalation:\n  - default: hold\n    persist: {failures: 1, window: 1}\n",
            "10:5", "a default rule is only '- default: ACTION'; 'persist' belongs in a rule of its own");
        // a NUL byte (yaml-cpp read it as the end of a scalar)
        row("nul", kHead + "description: ab" + std::string(1, '\0') + "c\n", "3:16", "NUL byte at line 3 column 16");
    }

    // Ids in any script stay valid (SPEC 4 allows any id); only what does not show is refused.
    void visibleUnicodeIdsAreAccepted() {
        const Contract c = parseContract(kHead + "numerical:\n  - {id: \"Größe-N1\", metric: tv, aggregate: mean, max: 1}\n"
                                                 "  - {id: 数値1, metric: tv, aggregate: mean, max: 1}\n"
                                                 "  - {id: \"a b\", metric: tv, aggregate: mean, max: 1}\n",
                                         "ok.yaml");
        QCOMPARE(c.clauses.size(), size_t(3));
        QCOMPARE(c.clauses[1].id, std::string("数値1"));
    }

    void rejected() {
        QFETCH(std::string, text);
        QFETCH(QString, place);
        QFETCH(QString, phrase);
        InputError e("", "", "");
        const std::string what = test::contractErrorOf(text, &e);
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
        std::string what = test::contractErrorOf(bomb);
        QVERIFY2(what.find("expands to more than 1000000 values") != std::string::npos, what.c_str());
        QVERIFY2(timer.elapsed() < 10000, "took too long");
        // The same, hidden inside a clause.
        timer.restart();
        what = test::contractErrorOf(bomb.substr(0, bomb.size()) .replace(bomb.find("ki:"), 3, "numerical:"));
        QVERIFY2(what.find("expands to more than") != std::string::npos, what.c_str());
        QVERIFY2(timer.elapsed() < 10000, "took too long");
        // A recursive alias, deep nesting.
        what = test::contractErrorOf(kHead + "numerical: &a [*a]\n");
        QVERIFY2(what.find("nests deeper than") != std::string::npos, what.c_str());
        what = test::contractErrorOf(kHead + "description: " + std::string(100000, '[') + std::string(100000, ']') + "\n");
        QVERIFY2(!what.empty(), "deep nesting accepted");
        what = test::contractErrorOf("{\"kcx_contract\": 1, \"name\": \"t\", \"description\": " + std::string(100000, '[') +
                       std::string(100000, ']') + "}");
        QVERIFY2(!what.empty(), "deep JSON accepted");
        // Garbage never crashes.
        for (const char* junk : {"\x01\x02\xff", "{", "[", "\"", "kcx_contract: 1\nname: t\nnumerical: [{id: }]\n",
                                 "kcx_contract: 1\nname: t\n? [a]\n: b\n", "&a *a", "!!binary x"})
            QVERIFY(!test::contractErrorOf(junk).empty());
    }

};

QTEST_GUILESS_MAIN(TestContractErrors)
#include "test_contract_errors.moc"
