// printable(): text from files printed to a terminal as text (core/base/printable.h).
// Every expectation is written out by hand from the escaping rules.
#include <QtTest/QTest>

#include <string>

#include "core/base/printable.h"

using kcx::printable;

class TestPrintable : public QObject {
    Q_OBJECT
private slots:
    void keepsOrdinaryText() {
        QCOMPARE(printable("Ada Reviewer"), std::string("Ada Reviewer"));
        QCOMPARE(printable("task=long_context"), std::string("task=long_context"));
        const std::string greek = "\xce\xb1\xce\xb2 \xe2\x89\xa4 0.3 \xf0\x9f\x98\x80";   // "αβ ≤ 0.3 😀"
        QCOMPARE(printable(greek), greek);
        QVERIFY(kcx::isPrintable(greek));
        QCOMPARE(printable("C:\\runs"), std::string("C:\\runs"));
        QCOMPARE(printable("C:\\runs", true), std::string("C:\\\\runs"));
    }
    void escapesControls() {
        QCOMPARE(printable("a\nb\rc\td"), std::string("a\\nb\\rc\\td"));
        QCOMPARE(printable("x\x1b[8my"), std::string("x\\x1b[8my"));
        QCOMPARE(printable(std::string("n\0l", 3)), std::string("n\\x00l"));
        QCOMPARE(printable("del\x7f"), std::string("del\\x7f"));
        QVERIFY(!kcx::isPrintable("a\nb"));
    }
    void escapesC1BidiAndInvisibles() {
        QCOMPARE(printable("\xc2\x9b" "31m"), std::string("\\u{009B}31m"));            // C1 CSI
        QCOMPARE(printable("abc\xe2\x80\xae" "fed"), std::string("abc\\u{202E}fed"));  // RLO
        QCOMPARE(printable("N\xe2\x80\x8b" "1"), std::string("N\\u{200B}1"));          // zero width space
        QCOMPARE(printable("\xe2\x81\xa6x\xe2\x81\xa9"), std::string("\\u{2066}x\\u{2069}"));
        QCOMPARE(printable("\xef\xbb\xbfid"), std::string("\\u{FEFF}id"));
        QCOMPARE(printable("\xd8\x9c"), std::string("\\u{061C}"));
    }
    void escapesInvalidUtf8() {
        QCOMPARE(printable("a\xff" "b"), std::string("a\\xffb"));
        QCOMPARE(printable("\xc0\xaf"), std::string("\\xc0\\xaf"));          // overlong '/'
        QCOMPARE(printable("\xed\xa0\x80"), std::string("\\xed\\xa0\\x80"));  // a surrogate
        QCOMPARE(printable("\xe2\x80"), std::string("\\xe2\\x80"));          // cut short
    }
};

QTEST_MAIN(TestPrintable)
#include "test_printable.moc"
