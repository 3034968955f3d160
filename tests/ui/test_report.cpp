// The review report (ui/report/report.h, docs/report.md) on the demo run and demo contract: the
// HTML holds every result, the verdict, each stage's action, the escaped contract text,
// decodable pictures and the bound chain; the PDF has pages and every clause; sign-off
// records beside the contract are listed as verified, and as stale once the contract changes.
#include <QtTest/QTest>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>

#include "core/base/sha256.h"
#include "core/demo/demo.h"
#include "core/signoff/signoff.h"
#include "core/signoff/trusted_keys.h"
#include "ui/contract/bounds_model.h"
#include "ui/report/report.h"
#include "ui/report/report_action.h"
#include "ui/session/session.h"

#include "tests/support/qt_files.h"

using namespace kcx;
using namespace kcx::ui;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

// The text of a result's observed value as the window's table prints it (4 digits).
QString printed(double v) { return QString::number(v, 'g', 4); }

QString sliceText(const Result& r) {
    QStringList parts;
    if (r.slice)
        for (const auto& [k, v] : *r.slice)
            parts << QString::fromStdString(k + "=" + v);
    return parts.join(QStringLiteral(", "));
}

// Every table row of `html` whose tag is `open` (e.g. "<tr class=\"r\">"), in order.
QStringList rows(const QString& html, const QString& open) {
    QStringList out;
    for (qsizetype at = html.indexOf(open); at >= 0; at = html.indexOf(open, at + 1))
        out << html.mid(at, html.indexOf(QStringLiteral("</tr>"), at) - at);
    return out;
}

}  // namespace

class TestReport : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::shared_ptr<const Run> run_;
    std::string contractPath_;

    ReportInput input(const std::string& contractPath, const std::string& stage = {}) {
        ReportInput in;
        in.run = run_;
        in.contractPath = contractPath;
        auto contract = std::make_shared<Contract>(loadContract(contractPath));
        in.contractText = contract->text;
        in.contract = contract;
        EvaluateOptions o;
        o.stage = stage;
        in.evaluation = evaluateContract(*contract, run_, o);
        in.signoffPaths = signoffsBesideContract(contractPath);
        return in;
    }
    QString html(const ReportInput& in, ReportData* out = nullptr) {
        ReportData data = prepareReport(in);
        renderReportFigures(in, data);
        const QString h = QString::fromStdString(reportHtml(in, data));
        if (out)
            *out = std::move(data);
        return h;
    }
    // A record signed by a fresh key over `in`'s evaluation at `stage`.
    void sign(const ReportInput& in, const std::string& stage, const std::string& path) {
        const std::string key = dir_.filePath(QString::fromStdString("key-" + stage)).toStdString();
        if (!QFile::exists(QString::fromStdString(key))) {
            generateKeyPair(key);
            // Alice's keys are trusted signers (SPEC 6.4), so her records can be "verified".
            addTrustedKey(qgetenv("KCX_TRUSTED_KEYS").toStdString(), "Alice Example", readPublicKey(key + ".pub"));
        }
        EvaluateOptions o;
        o.stage = stage;
        const Evaluation ev = evaluateContract(*in.contract, run_, o);
        SignoffRecord r;
        r.contractSha256 = sha256Hex(in.contractText);
        r.runSha256 = std::string(64, 'a');   // an in-memory run: the run is not checked
        r.resultsSha256 = resultsSha256(ev);
        r.verdict = statusName(ev.verdict);
        r.stage = ev.stage;
        r.action = actionName(ev.action);
        r.reviewer = "Alice Example";
        r.decision = "approve";
        r.comment = "drift accepted <for now>";
        r.time = utcNow();
        r.kcxVersion = KCX_VERSION;
        signRecord(r, readSecretKey(key));
        writeSignoff(r, path);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("KCX_TRUSTED_KEYS", dir_.filePath(QStringLiteral("trusted_keys")).toUtf8());
        run_ = std::make_shared<const Run>(makeDemoRun());
        contractPath_ = dir_.filePath(QStringLiteral("demo.yaml")).toStdString();
        spit(contractPath_, slurp(KCX_SOURCE_DIR "/resources/contracts/demo.yaml"));
    }

    void htmlHasEveryResult() {
        const ReportInput in = input(contractPath_);
        QElapsedTimer clock;
        clock.start();
        const QString h = html(in);
        qInfo("HTML report of the demo: %lld ms, %lld bytes", qint64(clock.elapsed()), qint64(h.toUtf8().size()));
        QVERIFY(h.startsWith(QStringLiteral("<!DOCTYPE html>")));
        const QStringList resultRows = rows(h, QStringLiteral("<tr class=\"r\">"));
        QCOMPARE(resultRows.size(), qsizetype(in.evaluation.results.size()));
        int quantiles = 0;
        for (size_t i = 0; i < in.evaluation.results.size(); ++i) {
            const Result& r = in.evaluation.results[i];
            const QString& row = resultRows[qsizetype(i)];
            QVERIFY2(row.contains(QStringLiteral("<b>%1</b>").arg(esc(r.clause))), qPrintable(row));
            QVERIFY2(row.contains(sliceText(r).toHtmlEscaped()), qPrintable(row));
            if (r.observed)
                QVERIFY2(row.contains(QStringLiteral(">%1<").arg(printed(*r.observed))), qPrintable(row));
            QVERIFY2(row.contains(QStringLiteral("<b>%1</b>").arg(statusName(r.status))), qPrintable(row));
            // A numerical quantile: its interval and the values beyond, under the observed value.
            if (r.family == Family::Numerical && r.ci) {
                ++quantiles;
                const auto end = [](double v, const char* none) { return std::isfinite(v) ? printed(v) : QString(none); };
                const QString ci = QStringLiteral("95\u00a0%\u00a0CI\u00a0%1%2,\u00a0%3%4")
                                       .arg(std::isfinite(r.ci->first) ? "[" : "(", end(r.ci->first, "−∞"),
                                            end(r.ci->second, "∞"), std::isfinite(r.ci->second) ? "]" : ")");
                QVERIFY2(row.contains(ci), qPrintable(row + "\n" + ci));
                const QString beyond = QStringLiteral("<br>%1\u00a0%2").arg(*r.beyond).arg(
                    r.min && r.max ? "outside" : r.max ? "above\u00a0max" : "below\u00a0min");
                QVERIFY2(row.contains(beyond), qPrintable(row + "\n" + beyond));
            } else {
                QVERIFY2(!row.contains("CI\u00a0"), qPrintable(row));
            }
        }
        QVERIFY(quantiles >= 2);   // the demo contract's p99.9 per precision and p99
        QCOMPARE(in.evaluation.verdict, Status::Fail);
        QVERIFY(h.contains(QStringLiteral(">FAIL</span>")));
    }

    void htmlHasEachStageAction() {
        const ReportInput in = input(contractPath_);
        const QString h = html(in);
        QCOMPARE(in.contract->stages.size(), size_t(4));
        for (const std::string& stage : in.contract->stages) {
            const QStringList r = rows(h, QStringLiteral("<tr><td>%1").arg(esc(stage)));
            QCOMPARE(r.size(), qsizetype(1));
            QVERIFY2(r[0].contains(QStringLiteral("<b>%1</b>").arg(actionName(in.evaluation.stageActions.at(stage)))),
                     qPrintable(r[0]));
        }
    }

    void htmlHasContractBoundsAndIdentities() {
        const ReportInput in = input(contractPath_);
        const QString h = html(in);
        QVERIFY(h.contains(QStringLiteral("<pre>") + esc(in.contractText) + QStringLiteral("</pre>")));
        QVERIFY(h.contains(esc(sha256Hex(in.contractText))));
        QVERIFY(!in.evaluation.bounds.empty());
        const QStringList boundRows = rows(h.mid(h.indexOf(QStringLiteral("id=\"bounds\""))), QStringLiteral("<tr><td><b>"));
        QVERIFY(boundRows.size() >= qsizetype(in.evaluation.bounds.size()));
        for (size_t i = 0; i < in.evaluation.bounds.size(); ++i) {
            const BoundStep& s = in.evaluation.bounds[i];
            QVERIFY2(boundRows[qsizetype(i)].contains(boundStepName(s.step).toHtmlEscaped()), s.step.c_str());
            if (s.vacuous)
                QVERIFY(boundRows[qsizetype(i)].contains(QStringLiteral("vacuous")));
        }
        // Kernel identities from the run header.
        for (const char* k : {"demo-train", "demo-inf", "bf16", "fp32"})
            QVERIFY2(h.contains(QString::fromLatin1(k)), k);
        QVERIFY(h.contains(QStringLiteral("Generated by KCX " KCX_VERSION)));
        // Self-contained: every image is inline, nothing is fetched.
        QVERIFY(!h.contains(QStringLiteral("http://")) && !h.contains(QStringLiteral("https://")));
        QCOMPARE(h.count(QStringLiteral("src=\"")), h.count(QStringLiteral("src=\"data:image/png;base64,")));
        // Balanced structure.
        for (const char* tag : {"table", "tr", "pre", "h2", "div", "ul"})
            QCOMPARE(h.count(QStringLiteral("<%1").arg(tag) + QLatin1Char('>')) + h.count(QStringLiteral("<%1 ").arg(tag)),
                     h.count(QStringLiteral("</%1>").arg(tag)));
    }

    void picturesDecode() {
        const ReportInput in = input(contractPath_);
        const QString h = html(in);
        static const QRegularExpression re(QStringLiteral("src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\""));
        int n = 0;
        for (auto it = re.globalMatch(h); it.hasNext();) {
            const QImage img = QImage::fromData(QByteArray::fromBase64(it.next().captured(1).toLatin1()), "PNG");
            QVERIFY(!img.isNull());
            QCOMPARE(img.size(), QSize(kFigureWidth, kFigureHeight));
            // Not blank: a picture has many colours.
            QSet<QRgb> colours;
            for (int y = 0; y < img.height(); y += 7)
                for (int x = 0; x < img.width(); x += 7)
                    colours.insert(img.pixel(x, y));
            QVERIFY2(colours.size() > 8, qPrintable(QString::number(n)));
            ++n;
        }
        // heatmap, histogram, positions, and per-slice bars of N1, S1, S2
        QCOMPARE(n, 6);
        QVERIFY(h.contains(QStringLiteral("id=\"figure-heatmap\"")));
        QVERIFY(h.contains(QStringLiteral("id=\"figure-slices-S1\"")));
    }

    void scriptInContractIsEscaped() {
        const std::string path = dir_.filePath(QStringLiteral("script.yaml")).toStdString();
        spit(path, slurp(contractPath_) + "\n# </pre><script>alert('x')</script> & more\n");
        const QString h = html(input(path));
        QVERIFY(!h.contains(QStringLiteral("<script")));
        QVERIFY(h.contains(QStringLiteral("&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more")) ||
                h.contains(QStringLiteral("&lt;/pre&gt;&lt;script&gt;alert('x')&lt;/script&gt; &amp; more")));
    }

    void pdfHasPagesAndEveryClause() {
        const ReportInput in = input(contractPath_);
        const QString pdf = dir_.filePath(QStringLiteral("report.pdf"));
        int pages = 0;
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(writeReport(pdf, in, &pages), QString());
        QFile f(pdf);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        qInfo("PDF report of the demo: %d pages, %lld bytes, %lld ms", pages, qint64(bytes.size()), qint64(clock.elapsed()));
        QVERIFY(bytes.startsWith("%PDF"));
        QVERIFY(pages > 1);
        QVERIFY(bytes.size() > 50000);
        QVERIFY(QDir(dir_.path()).entryList({QStringLiteral("report.pdf*")}, QDir::Files).size() == 1);   // no temporary left
        const QString pdftotext = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
        if (pdftotext.isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed: the PDF's text is not checked");
        QProcess p;
        p.start(pdftotext, {pdf, QStringLiteral("-")});
        QVERIFY(p.waitForFinished(60000));
        const QString text = QString::fromUtf8(p.readAllStandardOutput());
        for (const Clause& c : in.contract->clauses)
            QVERIFY2(text.contains(QString::fromStdString(c.id)), c.id.c_str());
        QVERIFY(text.contains(QStringLiteral("block_promotion")));
        QVERIFY(text.contains(QStringLiteral("page %1 of %1").arg(pages)));
    }

    void signoffsVerifiedThenStale() {
        const std::string dir = dir_.filePath(QStringLiteral("signed")).toStdString();
        QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
        const std::string contract = dir + "/c.yaml";
        spit(contract, slurp(contractPath_));
        ReportInput in = input(contract);
        sign(in, "offline_ci", dir + "/c.signoff.json");
        sign(in, "canary", dir + "/c.bob.signoff.json");   // another stage: re-evaluated there
        spit(dir + "/c.broken.signoff.json", "{\"kcx_signoff\": 1}");
        spit(dir + "/other.signoff.json", "{}");            // another contract's: not listed
        in.signoffPaths = signoffsBesideContract(contract);
        QCOMPARE(in.signoffPaths.size(), size_t(3));
        ReportData data;
        QString h = html(in, &data);
        QCOMPARE(data.signoffs.size(), size_t(3));
        for (const ReportSignoff& s : data.signoffs) {
            if (s.path.find("broken") != std::string::npos) {
                QCOMPARE(s.statusText(), std::string("unreadable"));
                continue;
            }
            QVERIFY2(s.verified(), s.path.c_str());
            QCOMPARE(s.statusText(), std::string("verified"));
        }
        QCOMPARE(h.count(QStringLiteral("<b>verified</b>")), 2);
        QVERIFY(h.contains(QStringLiteral("c.signoff.json")));
        QVERIFY(h.contains(QStringLiteral("drift accepted &lt;for now&gt;")));

        // One byte of the contract changes (in a comment): every record is now stale, naming the contract.
        std::string text = slurp(contract);
        text[text.find("demo-contract")] = 'D';
        spit(contract, text);
        in = input(contract);
        h = html(in, &data);
        QCOMPARE(h.count(QStringLiteral("<b>verified</b>")), 0);
        QCOMPARE(h.count(QStringLiteral("<b>stale: contract differs</b>")), 2);
        QVERIFY(h.contains(QStringLiteral("has changed since it was signed")));
    }

    // File > Export report: the window's run, contract and evaluation, written in the background.
    void exportFromSession() {
        qputenv("KCX_NO_DIALOGS", "1");
        Session session;
        QSignalSpy evaluated(&session, &Session::evaluated);
        session.openDemo();
        QVERIFY(session.openContract(QString::fromStdString(contractPath_)));
        QTRY_VERIFY_WITH_TIMEOUT(!evaluated.isEmpty() && !session.evaluating() && !session.loading(), 60000);
        for (const char* name : {"window.html", "window.pdf"}) {
            const QString path = dir_.filePath(QString::fromLatin1(name));
            bool finished = false;
            QString error = QStringLiteral("not called");
            QElapsedTimer clock;
            clock.start();
            exportReport(nullptr, &session, path, [&](const QString& e) {
                finished = true;
                error = e;
            });
            QTRY_VERIFY_WITH_TIMEOUT(finished, 60000);
            qInfo("exportReport %s: %lld ms", name, qint64(clock.elapsed()));
            QCOMPARE(error, QString());
            QVERIFY(QFileInfo(path).size() > 50000);
        }
        const QString h = QString::fromStdString(slurp(dir_.filePath(QStringLiteral("window.html")).toStdString()));
        for (const Result& r : session.latest().evaluation->results)
            QVERIFY(h.contains(QStringLiteral("<b>%1</b>").arg(esc(r.clause))));
        QVERIFY(h.contains(QStringLiteral("the built-in demo run")));
        // No file name and no dialog: nothing is written, and it says why.
        QString why;
        exportReport(nullptr, &session, {}, [&](const QString& e) { why = e; });
        QVERIFY(why.contains(QStringLiteral("KCX_NO_DIALOGS")));
    }

    void refusesWhatItCannotWrite() {
        const ReportInput in = input(contractPath_);
        QVERIFY(writeReport(dir_.filePath(QStringLiteral("report.txt")), in).contains(QStringLiteral("report.txt")));
        const QString missing = dir_.filePath(QStringLiteral("no/such/dir/report.html"));
        QVERIFY(writeReport(missing, in).contains(missing));
        QVERIFY(!QFile::exists(missing));
        QVERIFY(!isReportPath(QStringLiteral("x.png")));
        QVERIFY(isReportPath(QStringLiteral("X.PDF")));
    }

    // Issue 16: the report never replaces what it reports on. A run, contract or record at
    // the report's path (here: reached through a link named report.html) is refused by
    // name and left as it was.
    void neverWritesOverItsInputs() {
        ReportInput in = input(contractPath_);
        in.runPath = dir_.filePath(QStringLiteral("the-run.jsonl")).toStdString();
        kcx::test::writeAll(QString::fromStdString(in.runPath), "{\"id\": \"s\"}\n");
        for (const QString& role : {QStringLiteral("contract"), QStringLiteral("run")}) {
            const std::string target = role == QLatin1String("run") ? in.runPath : in.contractPath;
            QVERIFY(!target.empty());
            const QByteArray before = kcx::test::readAll(QString::fromStdString(target));
            const QString link = dir_.filePath(QStringLiteral("report.html"));
            QFile::remove(link);
            QVERIFY(QFile::link(QString::fromStdString(target), link));
            const QString error = writeReport(link, in);
            QVERIFY2(error.contains(QStringLiteral("refusing")) && error.contains(role), qPrintable(error));
            QCOMPARE(kcx::test::readAll(QString::fromStdString(target)), before);
            QFile::remove(link);
        }
    }
};

QTEST_MAIN(TestReport)
#include "test_report.moc"
