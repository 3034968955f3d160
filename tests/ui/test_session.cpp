// The window's engine room: background evaluation with generations, undo of threshold
// edits (one gesture = one step), saving that changes only the edited numbers, reloading
// a contract changed on disk, and the results model.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest/QTest>

#include "core/contract/contract.h"
#include "core/contract/contract_edit.h"
#include "core/evaluate/evaluator.h"
#include "core/formats/run.h"
#include "ui/contract/results_model.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"

using namespace kcx;
using namespace kcx::ui;

namespace {

// A run of 4 sequences x 10 tokens whose |log ratio| is known: sequence s, position t has
// lp_train = -1 and lp_inf = -1 - d with d = 0.01 * (s + 1) * (t + 1) / 10.
std::shared_ptr<const Run> smallRun() {
    Run run;
    std::vector<int64_t> offsets{0};
    std::vector<int32_t> tokens;
    std::vector<double> lt, li;
    for (int s = 0; s < 4; ++s) {
        run.ids.push_back(std::string("s").append(std::to_string(s)));
        for (int t = 0; t < 10; ++t) {
            tokens.push_back(t);
            lt.push_back(-1);
            li.push_back(-1 - 0.01 * (s + 1) * (t + 1) / 10.0);
        }
        offsets.push_back(int64_t(tokens.size()));
    }
    run.offsets = Array<int64_t>(std::move(offsets));
    run.tokens = Array<int32_t>(std::move(tokens));
    run.lpTrain = Column(Array<double>(std::move(lt)));
    run.lpInf = Column(Array<double>(std::move(li)));
    run.slices.keys = {"task"};
    run.slices.values = {{"a", "b"}};
    run.slices.codes = {0, 0, 1, 1};
    return std::make_shared<const Run>(std::move(run));
}

// Two clauses; the comments and odd spacing must survive a save.
const char* kContract = R"(kcx_contract: 1
name: session-test   # a comment that must survive
numerical:
  - id: N1
    metric: abs_log_ratio
    aggregate: max
    max:   0.05        # spaced on purpose
  - id: N2
    metric: abs_log_ratio
    aggregate: mean
    max: 0.1
    per_slice: task
)";

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // Installs the small run through the public API: write it as JSONL, open it.
    QString writeRun() {
        const QString path = dir_.path() + "/run.jsonl";
        QFile f(path);
        f.open(QIODevice::WriteOnly);
        auto run = smallRun();
        for (size_t s = 0; s < run->sequenceCount(); ++s) {
            QString line = QString("{\"id\": \"s%1\", \"slices\": {\"task\": \"%2\"}, \"tokens\": [").arg(s).arg(s < 2 ? "a" : "b");
            QStringList tok, a, b;
            for (size_t i = run->seqBegin(s); i < run->seqEnd(s); ++i) {
                tok << QString::number(run->tokens[i]);
                a << QString::number(run->lpTrain[i], 'g', 17);
                b << QString::number(run->lpInf[i], 'g', 17);
            }
            line += tok.join(",") + "], \"logp_train\": [" + a.join(",") + "], \"logp_inf\": [" + b.join(",") + "]}\n";
            f.write(line.toUtf8());
        }
        return path;
    }

    // Opens run and contract in a fresh session and waits for the first evaluation.
    std::unique_ptr<Session> openSession(const QString& contractPath) {
        auto s = std::make_unique<Session>();
        QSignalSpy done(s.get(), &Session::evaluated);
        s->openRun(writeRun());
        if (!contractPath.isEmpty())
            s->openContract(contractPath);
        else
            s->setContractText(kContract, "inline");
        [&] { QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty() && !s->evaluating(), 20000); }();
        return s;
    }

    QString writeContract(const QString& name, const QByteArray& text) {
        const QString path = dir_.path() + "/" + name;
        QFile f(path);
        f.open(QIODevice::WriteOnly | QIODevice::Truncate);
        f.write(text);
        return path;
    }

private slots:
    // File > Import Log-probs: two one-sided dumps become a run in the background, and
    // sides that saw different tokens fail the load naming record, position and tokens.
    void importsTwoSides() {
        QTemporaryDir dir;
        const auto spit = [&](const char* name, const char* text) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text);
        };
        spit("inf.jsonl", "{\"id\": \"a\", \"tokens\": [1, 2], \"logp_inf\": [-1.0, -2.0]}\n");
        spit("train.jsonl", "{\"id\": \"a\", \"tokens\": [1, 2], \"logp_train\": [-1.5, -2.0]}\n");
        spit("other.jsonl", "{\"id\": \"a\", \"tokens\": [1, 3], \"logp_train\": [-1.5, -2.0]}\n");
        Session session;
        QSignalSpy loaded(&session, &Session::runLoaded);
        QSignalSpy failed(&session, &Session::loadFailed);
        session.importRun(dir.filePath("inf.jsonl"), dir.filePath("train.jsonl"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
        QCOMPARE(session.run()->tokenCount(), size_t(2));
        QCOMPARE(session.run()->lpTrain[0], -1.5);
        QCOMPARE(session.run()->lpInf[0], -1.0);
        session.importRun(dir.filePath("inf.jsonl"), dir.filePath("other.jsonl"));
        QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 1, 20000);
        const QString m = failed.at(0).at(0).toString();
        QVERIFY2(m.contains("record a, position 1") && m.contains("inf 'id 2', train 'id 3'"), qPrintable(m));
    }

    void formatsNumbersThatReadBack() {
        QCOMPARE(formatThreshold(0.2), std::string("0.2"));
        QCOMPARE(formatThreshold(3), std::string("3"));
        QCOMPARE(formatThreshold(1e-6), std::string("1.0e-06"));   // YAML 1.1 float, not a string
        QCOMPARE(formatThreshold(2.5e-7), std::string("2.5e-07"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, formatThreshold(std::nan("")));
    }

    void editsOnlyTheNumber() {
        const Contract c = parseContract(kContract, "c.yaml");
        const Clause* n1 = c.find("N1");
        QVERIFY(n1 && n1->max && n1->max->span.known());
        const std::string out = applyThresholdEdits(kContract, {{n1->max->span, 0.075}});
        std::string expected = kContract;
        expected.replace(expected.find("0.05 "), 4, "0.075");
        QCOMPARE(out, expected);
        QCOMPARE(parseContract(out, "c.yaml").find("N1")->max->value, 0.075);
    }

    // The window and `kcx check` must agree: the session's result equals a one-shot core
    // evaluation, and the numbers are the ones computed by hand from the run's formula.
    void evaluatesLikeTheCore() {
        auto s = openSession({});
        const Evaluation& ev = *s->latest().evaluation;
        const Evaluation core = evaluateContract(*s->contract(), s->run());
        QCOMPARE(ev.results.size(), core.results.size());
        QCOMPARE(ev.results.size(), size_t(3));   // N1, N2 task=a, N2 task=b
        // N1: max |d| = 0.01 * 4 * 10 / 10 = 0.04 <= 0.05: pass.
        QCOMPARE(ev.results[0].status, Status::Pass);
        QVERIFY(qAbs(*ev.results[0].observed - 0.04) < 1e-12);
        // N2 task=b (s = 2, 3): mean d = 0.01 * 3.5 * 5.5 / 10 = 0.01925.
        QVERIFY(qAbs(*ev.results[2].observed - 0.01925) < 1e-12);
        for (size_t i = 0; i < ev.results.size(); ++i)
            QCOMPARE(ev.results[i].status, core.results[i].status);
    }

    // A drag sends many thresholds; every stale evaluation is dropped, the last one shows
    // the last threshold, and the whole drag is one undo step.
    void dragIsOneUndoStepAndNewestWins() {
        auto s = openSession({});
        QUndoStack undo;
        QSignalSpy shown(s.get(), &Session::evaluated);
        const quint64 g = ThresholdCommand::newGesture();
        double prev = 0.05;
        for (int i = 1; i <= 50; ++i) {
            const double v = 0.05 - i * 0.0005;   // ends at 0.025 < 0.04: N1 fails
            undo.push(new ThresholdCommand(s.get(), "N1", "max", prev, v, g));
            prev = v;
        }
        QCOMPARE(undo.count(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!s->evaluating(), 120000);   // returns when done; slow under ASan on a loaded machine
        QVERIFY(!shown.isEmpty());
        QVERIFY(shown.size() < 50);   // stale generations were skipped
        const auto& last = s->latest();
        QCOMPARE(last.contract->find("N1")->max->value, 0.025);
        QCOMPARE(last.evaluation->results[0].status, Status::Fail);
        QCOMPARE(last.evaluation->verdict, Status::Fail);
        undo.undo();
        QCOMPARE(*s->threshold("N1", "max"), 0.05);
        QTRY_VERIFY_WITH_TIMEOUT(!s->evaluating(), 120000);   // returns when done; slow under ASan on a loaded machine
        QCOMPARE(s->latest().evaluation->results[0].status, Status::Pass);
        // A second gesture is a second step.
        undo.redo();
        undo.push(new ThresholdCommand(s.get(), "N2", "max", 0.1, 0.01, ThresholdCommand::newGesture()));
        QCOMPARE(undo.count(), 2);
    }

    void saveKeepsFormatting() {
        const QString path = writeContract("keep.yaml", kContract);
        auto s = openSession(path);
        s->setThreshold("N2", "max", 0.0125);
        s->setThreshold("N1", "max", 0.045);
        QCOMPARE(s->saveContract(), QString());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::string expected = kContract;
        expected.replace(expected.find("max: 0.1"), 8, "max: 0.0125");
        expected.replace(expected.find("0.05 "), 4, "0.045");
        QCOMPARE(f.readAll().toStdString(), expected);
        // Saved twice: the spans were re-read, the second save writes the same bytes.
        s->setThreshold("N1", "max", 0.046);
        QCOMPARE(s->saveContract(), QString());
        f.close();   // the save replaced the file: read the new one
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().toStdString().find("max:   0.046        # spaced on purpose") != std::string::npos);
    }

    void badContractKeepsThePreviousOne() {
        auto s = openSession({});
        QSignalSpy failed(s.get(), &Session::contractFailed);
        const QString bad = writeContract("bad.yaml", "kcx_contract: 1\nname: x\nnumerical:\n  - id: N1\n    metric: abs_log_ratio\n    maximum: 3\n");
        QVERIFY(!s->openContract(bad));
        QCOMPARE(failed.size(), 1);
        const QString msg = failed[0][0].toString();
        QVERIFY2(msg.contains("bad.yaml:6:5") && msg.contains("did you mean"), qPrintable(msg));
        QCOMPARE(QString::fromStdString(s->contract()->name), QString("session-test"));
    }

    void badRunReportsFileAndPlace() {
        Session s;
        QSignalSpy failed(&s, &Session::loadFailed);
        const QString path = writeContract("broken.jsonl", "{\"id\": \"a\", \"tokens\": [1, 2 \n");
        s.openRun(path);
        QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 1, 20000);
        QVERIFY2(failed[0][0].toString().contains("broken.jsonl:1:"), qPrintable(failed[0][0].toString()));
        QVERIFY(!s.run());
    }

    void resultsModelIsAWellBehavedTree() {
        auto s = openSession({});
        ResultsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEvaluation(s->latest().evaluation);
        QCOMPARE(model.rowCount(), 4);                              // the four families
        QCOMPARE(model.rowCount(model.index(0, 0)), 3);             // numerical: N1, N2 x 2
        const QModelIndex n2b = model.index(2, ResultsModel::SliceCol, model.index(0, 0));
        QCOMPARE(model.data(n2b).toString(), QString("task=b"));
        QCOMPARE(model.indexOfClause("N2").row(), 1);
        // A re-evaluation with the same shape keeps the rows (selection survives).
        s->setThreshold("N1", "max", 0.01);
        QTRY_VERIFY_WITH_TIMEOUT(!s->evaluating(), 20000);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setEvaluation(s->latest().evaluation);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(model.data(model.index(0, ResultsModel::StatusCol, model.index(0, 0))).toString(), QString("fail"));
    }
};

QTEST_MAIN(TestSession)
#include "test_session.moc"
