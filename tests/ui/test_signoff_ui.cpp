// Sign-off in the window (issue 5 item 2): the records panel finds the records beside the
// contract, verifies each against the files, shows a changed contract or run as stale with
// what changed, a changed record as invalid and garbage as unreadable; the dialog refuses
// to sign without a reviewer, a decision and a key.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRadioButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <fstream>

#include "core/demo/demo.h"
#include "core/signoff/signoff.h"
#include "core/signoff/signoff_files.h"
#include "ui/session/session.h"
#include "ui/signoff/signoff_dialog.h"
#include "ui/signoff/signoff_model.h"
#include "ui/signoff/signoff_panel.h"

using namespace kcx;
using namespace kcx::ui;

namespace {
std::string slurp(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
void spit(const QString& path, const std::string& text) { std::ofstream(path.toStdString(), std::ios::binary) << text; }
}  // namespace

class TestSignoffUi : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString runPath_, contractPath_, key_;
    std::string contractText_;

    QString path(const char* name) const { return dir_.filePath(QString::fromLatin1(name)); }

    // A session on the demo run and contract as files, evaluated.
    void openFiles(Session& session) {
        QSignalSpy loaded(&session, &Session::runLoaded);
        QSignalSpy evaluated(&session, &Session::evaluated);
        QVERIFY(session.openContract(contractPath_));
        session.openRun(runPath_);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.size() == 1 && !session.evaluating() && evaluated.size() > 0, 120000);
    }

    static const SignoffEntry& only(const SignoffPanel& panel) { return panel.model()->entries().front(); }

private slots:
    void initTestCase() {
        qputenv("KCX_NO_DIALOGS", "1");
        QVERIFY(dir_.isValid());
        runPath_ = QString::fromStdString(writeDemo(dir_.path().toStdString()));
        QFile demo(QStringLiteral(KCX_SOURCE_DIR "/resources/contracts/demo.yaml"));
        QVERIFY(demo.open(QIODevice::ReadOnly));
        contractText_ = demo.readAll().toStdString();
        contractPath_ = path("gate.yaml");
        spit(contractPath_, contractText_);
        key_ = path("alice.key");
        generateKeyPair(key_.toStdString());
    }

    void modelIsSound() {
        SignoffModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        SignoffEntry unreadable;
        unreadable.path = "x.signoff.json";
        unreadable.error = "x.signoff.json: not JSON";
        SignoffEntry checking;
        checking.path = "y.signoff.json";
        checking.record = SignoffRecord{};
        model.setEntries({unreadable, checking});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, SignoffModel::StatusColumn).data().toString(), QString("unreadable"));
        QVERIFY(model.index(0, 0).data(Qt::ToolTipRole).toString().contains("x.signoff.json: not JSON"));
        QCOMPARE(model.index(1, SignoffModel::StatusColumn).data().toString(), QString("checking…"));
        checking.error = "gate.yaml: cannot read";
        QVERIFY(model.updateEntry(checking));
        QCOMPARE(model.index(1, SignoffModel::StatusColumn).data().toString(), QString("not checked"));
        QVERIFY(model.index(1, 0).data(Qt::ToolTipRole).toString().contains("gate.yaml: cannot read"));
        QVERIFY(!model.updateEntry(SignoffEntry{}));
    }

    void dialogNeedsReviewerDecisionAndKey() {
        SignoffDialog d(contractPath_, runPath_, {"offline_ci", "shadow"}, "verdict fail", nullptr);
        d.reviewerEdit()->setText("");
        QVERIFY(d.problem().contains("reviewer"));
        d.reviewerEdit()->setText("Alice");
        QVERIFY(d.problem().contains("approve or reject"));
        d.rejectButton()->setChecked(true);
        d.keyEdit()->setText(path("nowhere.key"));
        QVERIFY(d.problem().contains("no such key file"));
        d.keyEdit()->setText(key_);
        QCOMPARE(d.outPath(), path("gate.signoff.json"));   // the name the panel looks for
        d.outEdit()->setText(contractPath_);
        QVERIFY(d.problem().contains("must not replace"));
        d.outEdit()->setText(path("gate.signoff.json"));
        QCOMPARE(d.problem(), QString());
        d.commentEdit()->setPlainText("fp8 tail too heavy");
        d.accept();
        QCOMPARE(d.result(), int(QDialog::Accepted));
        const SignoffRequest r = d.request();
        QCOMPARE(r.reviewer, std::string("Alice"));
        QCOMPARE(r.decision, std::string("reject"));
        QCOMPARE(r.comment, std::string("fp8 tail too heavy"));
        QCOMPARE(r.stage, std::string("offline_ci"));
        QCOMPARE(QString::fromStdString(r.contractPath), contractPath_);
        // A public key in place of the private one is caught before anything is signed.
        SignoffDialog wrongKey(contractPath_, runPath_, {"offline_ci"}, "", nullptr);
        wrongKey.approveButton()->setChecked(true);
        wrongKey.keyEdit()->setText(key_ + ".pub");
        wrongKey.accept();
        QVERIFY(wrongKey.result() != int(QDialog::Accepted));
    }

    void demoRunCannotBeSigned() {
        Session session;
        QSignalSpy loaded(&session, &Session::runLoaded);
        QVERIFY(session.openContract(contractPath_));
        session.openDemo();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 120000);
        SignoffPanel panel(&session);
        QVERIFY(panel.cannotSignReason().contains("kcx demo --out"));
        QSignalSpy failed(&panel, &SignoffPanel::signingFailed);
        panel.signOff();
        QCOMPARE(failed.size(), 1);
    }

    // Sign, then change each bound thing on disk and watch the status say what changed.
    void signThenStale() {
        Session session;
        openFiles(session);
        SignoffPanel panel(&session);
        QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTRY_VERIFY(!panel.busy());
        QCOMPARE(panel.model()->rowCount(), 0);

        QSignalSpy signedOff(&panel, &SignoffPanel::signedOff);
        QSignalSpy checked(&panel, &SignoffPanel::checked);
        SignoffRequest req{contractPath_.toStdString(), runPath_.toStdString(), "Alice", "approve", "ok", ""};
        const QString out = QString::fromStdString(newSignoffPath(contractPath_.toStdString(), "Alice"));
        panel.signWith(req, key_, out);
        QTRY_COMPARE_WITH_TIMEOUT(signedOff.size(), 1, 120000);
        QTRY_VERIFY_WITH_TIMEOUT(!panel.busy() && checked.size() > 0, 120000);
        QCOMPARE(panel.model()->rowCount(), 1);
        QCOMPARE(only(panel).path, out);
        QCOMPARE(signoffState(only(panel)), SignoffState::Verified);
        QCOMPARE(only(panel).verification->checks.size(), size_t(4));   // record, contract, run, results
        // What kcx sign would have written: the same evaluation of the same files.
        const SignoffRecord written = readSignoff(out.toStdString());
        QVERIFY(signatureValid(written));
        QCOMPARE(written.verdict, statusName(session.latest().evaluation->verdict));
        QCOMPARE(written.resultsSha256, resultsSha256(*session.latest().evaluation));

        // The contract's threshold edited on disk: contract and results changed.
        std::string edited = contractText_;
        const size_t maxAt = edited.find("max: ");
        QVERIFY(maxAt != std::string::npos);
        edited.insert(maxAt + 5, 1, '1');
        spit(contractPath_, edited);
        panel.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
        QCOMPARE(signoffState(only(panel)), SignoffState::Stale);
        QCOMPARE(panel.model()->index(0, SignoffModel::StatusColumn).data().toString(),
                 QString("stale: contract, results changed"));
        spit(contractPath_, contractText_);

        // The run file changed.
        const std::string run = slurp(runPath_);
        spit(runPath_, run + "\n");
        panel.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
        QCOMPARE(panel.model()->index(0, SignoffModel::StatusColumn).data().toString(), QString("stale: run changed"));
        spit(runPath_, run);

        // The record's decision flipped: invalid, whatever the files say.
        std::string record = slurp(out);
        const auto at = record.find("\"approve\"");
        QVERIFY(at != std::string::npos);
        std::string tampered = record;
        tampered.replace(at, 9, "\"reject\"");
        spit(out, tampered);
        panel.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
        QCOMPARE(signoffState(only(panel)), SignoffState::Invalid);
        spit(out, record);

        // Garbage beside the contract is listed as unreadable, naming the file; the good
        // record verifies again.
        const QString junk = path("gate.junk.signoff.json");
        spit(junk, "{\"kcx_signoff\": 1, \"reviewer\": ");
        panel.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!panel.busy(), 60000);
        QCOMPARE(panel.model()->rowCount(), 2);
        const int junkRow = panel.model()->rowOf(junk);
        QVERIFY(junkRow >= 0);
        QCOMPARE(signoffState(panel.model()->entries()[size_t(junkRow)]), SignoffState::Unreadable);
        QVERIFY(panel.model()->entries()[size_t(junkRow)].error.contains("gate.junk.signoff.json"));
        QCOMPARE(signoffState(panel.model()->entries()[size_t(panel.model()->rowOf(out))]), SignoffState::Verified);
        // KCX_SIGNOFF_SCREENSHOT=FILE.png saves the panel as it is now, for people to look at.
        if (const QString shot = qEnvironmentVariable("KCX_SIGNOFF_SCREENSHOT"); !shot.isEmpty()) {
            panel.resize(900, 360);
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            QVERIFY(panel.grab().save(shot));
        }
        QFile::remove(junk);
    }
};

QTEST_MAIN(TestSignoffUi)
#include "test_signoff_ui.moc"
