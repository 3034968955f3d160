// The sign-off records panel: the records kept beside the contract (NAME.signoff.json,
// NAME.*.signoff.json) and any opened by hand, each verified in the background against the
// contract and run files and the results of evaluating them now; signing off through
// SignoffDialog. A record whose contract or run changed since signing shows as stale, with
// what changed.
#pragma once

#include <QStringList>
#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>

#include "core/signoff/signoff_files.h"

class QFileSystemWatcher;
class QLabel;
class QTimer;
class QPushButton;
class QTableView;

namespace kcx::ui {

class Session;
class SignoffModel;

class SignoffPanel : public QWidget {
    Q_OBJECT
public:
    explicit SignoffPanel(Session* session, QWidget* parent = nullptr);

    SignoffModel* model() const { return model_; }
    // Called before signing; returns false to stop (the window saves unsaved edits here).
    void setBeforeSigning(std::function<bool()> f) { beforeSigning_ = std::move(f); }

    // Why signing is not possible now (no contract file, no run file), or empty.
    QString cannotSignReason() const;
    // The part of it that saving the contract cannot fix: no contract or run, a run that is
    // not a file (the built-in demo), a run still loading.
    QString cannotSignRunReason() const;
    // Asks with SignoffDialog, then signs in the background.
    void signOff();
    // Signs without asking: the dialog's result, for tests and scripts.
    void signWith(const SignoffRequest& request, const QString& keyPath, const QString& outPath);
    // Adds a record that is not beside the contract.
    void openRecord(const QString& path);
    void openRecordDialog();
    // Re-reads the records and verifies them again.
    void refresh();
    // Lists the record's key under its reviewer in the trusted signers (SPEC 6.4: the file
    // of KCX_TRUSTED_KEYS or ~/.config/kcx/trusted_keys), after a dialog that shows the
    // whole key for the user to compare (none under KCX_NO_DIALOGS), then re-checks.
    // Returns an error, or empty (also when the user cancels).
    QString trustSigner(const QString& recordPath);
    bool busy() const { return jobs_ > 0; }

signals:
    void signedOff(const QString& path);
    void signingFailed(const QString& message);
    void checked();   // every record's status is up to date

private:
    void showSelected();
    void updateSummary();
    // Marks every record "edited since signed" while the window's contract has unsaved
    // edits, and clears the mark when it has none (a save, or undo back to the file).
    void markUnsavedEdits();
    // Sign Off is enabled only where it can apply; its tooltip says why not.
    void updateSignButton();

    Session* session_;
    SignoffModel* model_;
    QTableView* table_;
    QLabel* summary_;
    QLabel* detail_;
    QPushButton* trust_;
    QPushButton* sign_;
    QStringList opened_;   // records opened by hand
    // The contract, the run, the records and the contract's folder (new records), watched:
    // any change on disk checks every record again, without waiting for Re-check.
    void watchFiles();
    QFileSystemWatcher* watcher_ = nullptr;
    QTimer* settle_ = nullptr;
    std::function<bool()> beforeSigning_;
    std::shared_ptr<std::atomic<quint64>> generation_;
    int jobs_ = 0;
};

}  // namespace kcx::ui
