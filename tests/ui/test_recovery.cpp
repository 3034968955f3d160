// Nothing lost (issue 7 item 4): unsaved threshold edits survive a crash in a recovery file
// and come back as one undo step; a recovery file made on another version of the contract
// is not applied; saving removes it; a run file rewritten while it loads is refused; and a
// save killed at any moment leaves either the old contract or the new one, never a mix
// (the test kills a child process mid-save, again and again).
#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest/QTest>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "tests/support/qt_files.h"
#include "ui/session/recovery.h"
#include "ui/session/session.h"
#include "ui/session/threshold_command.h"
#include "ui/window/main_window.h"
#include "tests/support/wait_scale.h"

using namespace kcx::ui;

namespace {
using kcx::test::demoContract;
using kcx::test::readAll;
using kcx::test::writeAll;

// A contract of a few megabytes (a long comment at the end), so that a save takes long
// enough for a kill to land inside it.
QByteArray bigContract() {
    QByteArray text = demoContract();
    text += "\n# Review notes follow.\n";
    const QByteArray line = "# padding padding padding padding padding padding padding padding padding padding\n";
    for (int i = 0; i < 50000; ++i)
        text += line;
    text += "# END OF CONTRACT\n";
    return text;
}

// The child: saves the contract over and over, N1's max alternating between two values.
// Before the loop it writes both possible texts beside the contract and says "ready".
int saveChild(const QString& path) {
    Session s;
    if (!s.setContractText(readAll(path).toStdString(), path, path))
        return 3;
    const double original = *s.threshold("N1", "max");
    const double values[2] = {original * 2, original * 3};
    for (int i = 0; i < 2; ++i) {
        s.setThreshold("N1", "max", values[i]);
        const std::string t = s.editedContractText();
        writeAll(path + (i ? ".B" : ".A"), QByteArray::fromStdString(t));
    }
    std::printf("ready\n");
    std::fflush(stdout);
    for (unsigned n = 0;; ++n) {
        s.setThreshold("N1", "max", values[n % 2]);
        if (!s.saveContract().isEmpty())
            return 4;
    }
}
}  // namespace

class TestRecovery : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString contractPath() const { return dir_.filePath("gate.yaml"); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("KCX_NO_DIALOGS", "1");
        qputenv("KCX_RECOVERY_DIR", dir_.filePath("recovery").toUtf8());
    }

    void init() {
        writeAll(contractPath(), demoContract());
        QDir(dir_.filePath("recovery")).removeRecursively();
    }

    void editsSurviveACrash() {
        double before = 0, edited = 0;
        {
            MainWindow w;
            QVERIFY(w.openContract(contractPath()));
            before = *w.session()->threshold("N1", "max");
            edited = before + 0.125;
            w.undoStack()->push(new ThresholdCommand(w.session(), "N1", "max", before, edited, ThresholdCommand::newGesture()));
            QTRY_VERIFY(QFile::exists(recoveryFile(contractPath())));
            waitForRecovery();
            const auto state = readRecovery(contractPath());
            QVERIFY(state);
            QCOMPARE(state->edits.size(), size_t(1));
            QCOMPARE(state->edits[0].clause, std::string("N1"));
            QCOMPARE(state->edits[0].value, edited);
            // The window goes away without closing: what a crash leaves behind.
        }
        QVERIFY(QFile::exists(recoveryFile(contractPath())));
        qputenv("KCX_RECOVER", "restore");
        MainWindow w;
        QVERIFY(w.openContract(contractPath()));
        qunsetenv("KCX_RECOVER");
        QCOMPARE(*w.session()->threshold("N1", "max"), edited);
        QCOMPARE(w.undoStack()->count(), 1);   // one step back to the file as saved
        QVERIFY(!w.undoStack()->isClean());
        QCOMPARE(readAll(contractPath()), demoContract());   // nothing was written to the contract
        w.undoStack()->undo();
        QCOMPARE(*w.session()->threshold("N1", "max"), before);
        // Back to clean: the recovery file goes.
        QTRY_VERIFY(!QFile::exists(recoveryFile(contractPath())));
    }

    void savingRemovesTheRecoveryFile() {
        MainWindow w;
        QVERIFY(w.openContract(contractPath()));
        const double before = *w.session()->threshold("N1", "max");
        w.undoStack()->push(new ThresholdCommand(w.session(), "N1", "max", before, before * 2, ThresholdCommand::newGesture()));
        QTRY_VERIFY(QFile::exists(recoveryFile(contractPath())));
        QCOMPARE(w.session()->saveContract(), QString());
        w.undoStack()->setClean();
        QTRY_VERIFY(!QFile::exists(recoveryFile(contractPath())));
    }

    void editsOnAnotherVersionAreNotApplied() {
        {
            MainWindow w;
            QVERIFY(w.openContract(contractPath()));
            const double before = *w.session()->threshold("N1", "max");
            w.undoStack()->push(new ThresholdCommand(w.session(), "N1", "max", before, before * 2, ThresholdCommand::newGesture()));
            QTRY_VERIFY(QFile::exists(recoveryFile(contractPath())));
            waitForRecovery();
        }
        writeAll(contractPath(), demoContract() + "# edited elsewhere\n");
        qputenv("KCX_RECOVER", "restore");
        MainWindow w;
        QVERIFY(w.openContract(contractPath()));
        qunsetenv("KCX_RECOVER");
        QCOMPARE(w.undoStack()->count(), 0);
        QVERIFY(w.session()->thresholdEdits().empty());
        waitForRecovery();
        QVERIFY(!QFile::exists(recoveryFile(contractPath())));
    }

    void damagedRecoveryFileIsIgnored() {
        QDir().mkpath(dir_.filePath("recovery"));
        writeAll(recoveryFile(contractPath()), "{\"kcx_recovery\": 1, \"edits\": [");
        qputenv("KCX_RECOVER", "restore");
        MainWindow w;
        QVERIFY(w.openContract(contractPath()));
        qunsetenv("KCX_RECOVER");
        QCOMPARE(w.undoStack()->count(), 0);
        QVERIFY(!QFile::exists(recoveryFile(contractPath())));
    }

    // Issue 16: a recovery file nested 10^6 deep (which crashed nlohmann's recursive copy)
    // and a FIFO in its place (which would block the read forever) are refused and removed;
    // the contract opens without edits.
    void hostileRecoveryFilesAreRemoved() {
        QDir().mkpath(dir_.filePath("recovery"));
        const QString file = recoveryFile(contractPath());
        writeAll(file, "{\"contract\": " + QByteArray(1000000, '[') + QByteArray(1000000, ']') + "}");
        qputenv("KCX_RECOVER", "restore");
        {
            MainWindow w;
            QVERIFY(w.openContract(contractPath()));
            QCOMPARE(w.undoStack()->count(), 0);
        }
        QVERIFY(!QFile::exists(file));
        QCOMPARE(mkfifo(QFile::encodeName(file).constData(), 0600), 0);
        {
            MainWindow w;
            QVERIFY(w.openContract(contractPath()));   // returns: nothing waits on the FIFO
            QCOMPARE(w.undoStack()->count(), 0);
        }
        qunsetenv("KCX_RECOVER");
        QVERIFY(!QFileInfo::exists(file));
    }

    // Kill a saving process at random moments: the contract is always one whole version.
    void killDuringSaveLosesNothing() {
        const QString path = dir_.filePath("big.yaml");
        writeAll(path, bigContract());
        int rewritten = 0;
        for (int round = 0; round < 12; ++round) {
            const QByteArray original = readAll(path);   // what the last round left
            QProcess child;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("KCX_TEST_SAVE_DELAY_MS", "40");   // a save takes about 160 ms, most of it writing
            child.setProcessEnvironment(env);
            child.start(QCoreApplication::applicationFilePath(), {"--save-child", path});
            QVERIFY(child.waitForStarted());
            QVERIFY2(child.waitForReadyRead(60000), "the child did not get ready");
            QCOMPARE(child.readLine().trimmed(), QByteArray("ready"));
            QTest::qSleep(int(QRandomGenerator::global()->bounded(20, 400)));
            child.kill();   // SIGKILL: no cleanup, no flush
            QVERIFY(child.waitForFinished(10000));
            QCOMPARE(child.exitStatus(), QProcess::CrashExit);
            const QByteArray now = readAll(path);
            const QByteArray a = readAll(path + ".A"), b = readAll(path + ".B");
            QVERIFY(!a.isEmpty() && !b.isEmpty() && a != b);
            QVERIFY2(now == original || now == a || now == b,
                     qPrintable(QString("round %1: the contract is %2 bytes, not one whole version").arg(round).arg(now.size())));
            if (now != original)
                ++rewritten;
        }
        // Nothing else is left beside it but, rarely, a whole version under Qt's temporary
        // name. Qt writes through an unnamed O_TMPFILE on Linux; to replace the contract it
        // links that file as "big.yaml.XXXXXX" and renames it over (qtemporaryfile.cpp,
        // materializeUnnamedFile), so a kill between the two leaves that name holding the
        // complete new version (it happened once in CI, 2026-12-07). Anything else, or a part
        // of a version under that name, fails.
        QStringList left = QDir(dir_.path()).entryList({"big.yaml*"}, QDir::Files);
        const QByteArray a = readAll(path + ".A"), b = readAll(path + ".B");
        int strays = 0;
        for (const QString& name : QStringList(left)) {
            if (name.size() != int(strlen("big.yaml.XXXXXX")) || !name.startsWith("big.yaml.") || name.endsWith(".A") ||
                name.endsWith(".B"))
                continue;
            const QByteArray content = readAll(dir_.filePath(name));
            QVERIFY2(content == a || content == b, qPrintable(name + " is not one whole version"));
            left.removeAll(name);
            QFile::remove(dir_.filePath(name));
            ++strays;
        }
        QCOMPARE(left, QStringList({"big.yaml", "big.yaml.A", "big.yaml.B"}));
        if (strays)
            qInfo("%d whole version(s) left under Qt's temporary name by a kill between link and rename", strays);
        QVERIFY2(rewritten > 0, "no child ever finished a save: the kills prove nothing");
        qInfo("the contract was rewritten before the kill in %d of 12 rounds", rewritten);
    }

    // A run file that changes while it loads is refused, not read half old, half new.
    void runChangedWhileLoadingIsRefused() {
        const QString run = dir_.filePath("run.jsonl");
        QByteArray text;
        for (int i = 0; i < 200000; ++i)
            text += QByteArray("{\"id\": \"s") + QByteArray::number(i) +
                    "\", \"tokens\": [1, 2, 3], \"logp_train\": [-1, -2, -3], \"logp_inf\": [-1.5, -2, -3]}\n";
        writeAll(run, text);
        Session s;
        QSignalSpy failed(&s, &Session::loadFailed);
        QSignalSpy loaded(&s, &Session::runLoaded);
        // Append once the loader reports progress: it has started reading.
        bool appended = false;
        connect(&s, &Session::loadProgress, this, [&](double f) {
            if (f <= 0 || f >= 1 || appended)
                return;
            appended = true;
            std::ofstream out(run.toStdString(), std::ios::app);
            out << "{\"id\": \"late\", \"tokens\": [1], \"logp_train\": [-1], \"logp_inf\": [-1]}\n";
        });
        s.openRun(run);
        QTRY_VERIFY_WITH_TIMEOUT(failed.size() + loaded.size() == 1, kcx::test::waitMs(60000));
        if (failed.size() == 1)
            QVERIFY2(failed.at(0).at(0).toString().contains("changed while it was being read"),
                     qPrintable(failed.at(0).at(0).toString()));
        else
            QSKIP("the loader finished before it reported progress");
    }

    // A run rewritten after it loaded: the window keeps what it loaded, says so in the
    // status bar at once, and Reload Run reads the new file (and the warning goes).
    void runChangedAfterLoadingIsNoticed() {
        const QString run = dir_.filePath("watched.jsonl");
        const auto lines = [](int n) {
            QByteArray text;
            for (int i = 0; i < n; ++i)
                text += QByteArray("{\"id\": \"s") + QByteArray::number(i) +
                        "\", \"tokens\": [1, 2], \"logp_train\": [-1, -2], \"logp_inf\": [-1.5, -2]}\n";
            return text;
        };
        writeAll(run, lines(3));
        MainWindow w;
        w.show();
        w.openRun(run);
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->run() && !w.session()->loading(), kcx::test::waitMs(30000));
        QCOMPARE(w.session()->run()->sequenceCount(), size_t(3));
        QVERIFY(!w.runChangedOnDisk());
        QTest::qWait(50);
        writeAll(run, lines(5));
        QTRY_VERIFY_WITH_TIMEOUT(w.runChangedOnDisk(), 10000);
        QCOMPARE(w.session()->run()->sequenceCount(), size_t(3));   // not read behind the user's back
        bool shown = false;
        for (QLabel* l : w.findChildren<QLabel*>())
            shown = shown || (l->isVisible() && l->text().contains("changed on disk"));
        QVERIFY(shown);
        if (const QString shot = qEnvironmentVariable("KCX_WINDOW_SCREENSHOT"); !shot.isEmpty())
            QVERIFY(w.grab().save(shot));
        w.reloadRun();
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->run() && w.session()->run()->sequenceCount() == 5 && !w.session()->loading(),
                                 30000);
        QVERIFY(!w.runChangedOnDisk());
        for (QLabel* l : w.findChildren<QLabel*>())
            QVERIFY(!(l->isVisible() && l->text().contains("changed on disk")));
        // Removed: said too.
        QFile::remove(run);
        QTRY_VERIFY_WITH_TIMEOUT(w.runChangedOnDisk(), 10000);
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && QByteArray(argv[1]) == "--save-child") {
        QCoreApplication app(argc, argv);
        return saveChild(QString::fromLocal8Bit(argv[2]));
    }
    QApplication app(argc, argv);
    TestRecovery t;
    return QTest::qExec(&t, argc, argv);
}

#include "test_recovery.moc"
