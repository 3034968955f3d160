// Issue 16, hostile input that is not a reader's own format: CSV text cells a spreadsheet
// would run as formulas, and the bounded-JSON pre-scan every tree-building reader uses.
#include <QtTest/QTest>

#include <string>

#include "core/base/csv_cell.h"
#include "core/base/json_depth.h"
#include "core/base/unicode_nfc.h"
#include "core/contract/contract.h"

using namespace kcx;

class TestHostileInput : public QObject {
    Q_OBJECT
private slots:
    void csvTextCellsAreNeutralised() {
        // Formula starters get a leading quote (OWASP), then RFC 4180 quoting where needed.
        QCOMPARE(csvTextCell("=HYPERLINK(\"http://x\",\"y\")"), std::string("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""));
        QCOMPARE(csvTextCell("=1+2"), std::string("'=1+2"));
        QCOMPARE(csvTextCell("+cmd"), std::string("'+cmd"));
        QCOMPARE(csvTextCell("-2+3+cmd|' /C calc'!A0"), std::string("'-2+3+cmd|' /C calc'!A0"));
        QCOMPARE(csvTextCell("@SUM(A1)"), std::string("'@SUM(A1)"));
        QCOMPARE(csvTextCell("\tx"), std::string("'\tx"));
        QCOMPARE(csvTextCell("\rx"), std::string("\"'\rx\""));
        // Plain text and numbers stay as they are.
        QCOMPARE(csvTextCell("seq-1"), std::string("seq-1"));
        QCOMPARE(csvTextCell("a=b"), std::string("a=b"));
        QCOMPARE(csvTextCell(""), std::string(""));
        for (const char* n : {"-5", "+3", "-1.5", "-1.5e-3", "2E+10", ".5", "-.5", "7"})
            QCOMPARE(csvTextCell(n), std::string(n));
        for (const char* n : {"-", "+", "-e5", "-1e", "-1.5x", "--1", "-inf", "-NaN"})
            QVERIFY2(!isPlainNumber(n), n);
        // RFC 4180 as before.
        QCOMPARE(csvTextCell("a,b"), std::string("\"a,b\""));
        QCOMPARE(csvTextCell("say \"hi\""), std::string("\"say \"\"hi\"\"\""));
        QCOMPARE(csvTextCell("two\nlines"), std::string("\"two\nlines\""));
    }

    // Clause ids in normal form C (issue 16 item 6): precomposed and non-Latin ids pass and
    // load; decomposed text normalises to the precomposed bytes.
    void nfcOfClauseIds() {
        QCOMPARE(kcx::toNfc("A\u030A"), std::string("\u00C5"));
        QCOMPARE(kcx::toNfc("\u212B"), std::string("\u00C5"));
        QCOMPARE(kcx::toNfc("N1"), std::string("N1"));
        QVERIFY(!kcx::nfcProblem("\u00C51"));
        QVERIFY(!kcx::nfcProblem("\u65E5\u672C-\u03A9"));   // 日本-Ω
        QVERIFY(!kcx::nfcProblem("N1"));
        QCOMPARE(*kcx::nfcProblem("e\u0301"), std::string("character 1 (U+0065) is U+00E9 in normal form C"));
        const auto c = kcx::parseContract(
            "kcx_contract: 1\nname: t\nnumerical:\n  - {id: \u00C51, metric: abs_log_ratio, aggregate: mean, max: 1}\n"
            "  - {id: \u65E5\u672C, metric: abs_log_ratio, aggregate: mean, max: 1}\n",
            "ids.yaml");
        QCOMPARE(c.clauses.size(), size_t(2));
        QCOMPARE(c.clauses[0].id, std::string("\u00C51"));
    }

    void jsonDepthPreScan() {
        QCOMPARE(jsonDepthExceeded("[]"), std::string_view::npos);
        QCOMPARE(jsonDepthExceeded(std::string(64, '[') + std::string(64, ']')), std::string_view::npos);
        QCOMPARE(jsonDepthExceeded(std::string(65, '[') + std::string(65, ']')), size_t(64));
        QCOMPARE(jsonDepthExceeded("{\"a\": [{\"b\": [1]}]}", 3), size_t(13));
        // Brackets in strings, escaped quotes included, do not count.
        QCOMPARE(jsonDepthExceeded("[\"" + std::string(100, '[') + "\\\"" + std::string(100, '{') + "\"]", 2),
                 std::string_view::npos);
        // Closing brackets at depth 0 do not go negative and open a deeper budget.
        QCOMPARE(jsonDepthExceeded("]]]][[", 1), size_t(5));
        // A million levels are found at once, without recursion.
        const std::string deep(1000000, '[');
        QCOMPARE(jsonDepthExceeded(deep), size_t(kMaxJsonDepth));
        QCOMPARE(jsonDepthMessage(), std::string("JSON nested deeper than 64 levels"));
    }
};

QTEST_GUILESS_MAIN(TestHostileInput)
#include "test_hostile_input.moc"
