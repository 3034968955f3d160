// The main window: a thin frame around the panels. It owns the Session and the undo
// stack, places the panels, and wires selection between them; menus and file handling
// live in main_window_actions.cpp.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QStringList>

#include <utility>
#include <vector>

class QFileSystemWatcher;
class QLabel;
class QSplitter;
class QStackedWidget;
class QMenu;
class QProgressBar;
class QToolButton;
class QUndoStack;
class QTabWidget;
class QTimer;

namespace kcx::ui {

class Session;
class ContractPanel;
class HeatmapPanel;
class SignoffPanel;
class DiscoverPanel;
class SummaryPanel;
class StepsPanel;
class ComparePanel;
class CorrectionsPanel;
struct EvaluationSnapshot;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    Session* session() const { return session_; }
    QUndoStack* undoStack() const { return undo_; }
    ContractPanel* contractPanel() const { return contract_; }
    HeatmapPanel* heatmapPanel() const { return heatmap_; }
    SignoffPanel* signoffPanel() const { return signoff_; }
    // The page shown in place of the heatmap and the details while a summary is open.
    SummaryPanel* summaryPanel() const { return summaryPanel_; }
    StepsPanel* stepsPanel() const { return stepsPanel_; }
    ComparePanel* comparePanel() const { return comparePanel_; }
    CorrectionsPanel* correctionsPanel() const { return correctionsPanel_; }
    // File ▸ Compare with…: run B against the open run, shown in the Compare tab.
    void compareWith(const QString& path);

    // The built-in demo: the demo run and the demo contract (text given by the app).
    void setDemoContract(const std::string& yaml) { demoContract_ = yaml; }
    void openDemo();
    void openRun(const QString& path);
    bool openContract(const QString& path);
    // True once the run is loaded, the newest evaluation has arrived and the heatmap has
    // drawn it (what `kcx open --screenshot` waits for).
    bool settled() const;
    // The verdicts and the heatmap (or a summary's views) drawn: settled() but for the
    // diagnosis and the corrections, which wait for it (CorrectionsPanel::setHoldBack).
    bool resultsDrawn() const;
    QString settleState() const;   // what settled() still waits for, for people
    // The run's file changed on disk after it was loaded (size or modification time): the
    // window keeps showing what it loaded and says so; File > Reload Run reads it again.
    bool runChangedOnDisk() const { return runChanged_; }
    void reloadRun();
    // Brings the detail tab with this title forward ("Promotion", "Where is it hiding?";
    // without the & of its shortcut, any case); false when there is none.
    bool showDetailTab(const QString& title);
    QStringList detailTabs() const;
    // Help ▸ Keyboard Shortcuts: (keys, what they do), menu commands first.
    std::vector<std::pair<QString, QString>> shortcuts() const;
    void showShortcuts();

signals:
    void settledChanged();
    void runConverted(const QString& path);   // a safetensors copy of the run was written

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void buildPanels();
    void buildMenus();             // main_window_actions.cpp
    void buildStatusBar();
    void updateTitle();
    void updateStatus();
    void placeSplit();
    void showEvaluation(const EvaluationSnapshot& snapshot);
    void selectClause(const QString& clause);
    void openSequence(size_t sequence, size_t position);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    bool maybeSave();              // asks when there are unsaved threshold edits
    bool saveBeforeSigning();      // a record binds the saved file: edits are saved first
    // main_window_recovery.cpp: unsaved edits kept in a recovery file, offered back.
    void setUpRecovery();
    void offerRecovery();
    // main_window_convert.cpp: after a slow load, offer a native safetensors copy.
    void offerConvert();
    void sayWhatWasLeftOut();
    void convertRun();
    // main_window_discover.cpp: "Where is it hiding?", suggested thresholds, the report.
    void buildDiscover();
    // main_window_runwatch.cpp: notice when the loaded run's file changes on disk.
    void watchRun();
    void runFileChanged();
    bool saveContract(bool askPath);
    void contractFileChanged(const QString& path);
    void saveScreenshot();
    void showError(const QString& title, const QString& message);

    Session* session_;
    QUndoStack* undo_;
    ContractPanel* contract_ = nullptr;
    HeatmapPanel* heatmap_ = nullptr;
    QSplitter* mainSplit_ = nullptr;
    QStackedWidget* rightStack_ = nullptr;   // the run's heatmap and details, or the summary page
    QWidget* runPage_ = nullptr;
    SummaryPanel* summaryPanel_ = nullptr;
    StepsPanel* stepsPanel_ = nullptr;
    ComparePanel* comparePanel_ = nullptr;
    CorrectionsPanel* correctionsPanel_ = nullptr;
    bool splitMoved_ = false;   // the user placed the divider: resizing keeps their choice
    QTabWidget* details_ = nullptr;
    QWidget* charts_ = nullptr;
    QWidget* sequence_ = nullptr;
    QWidget* bounds_ = nullptr;
    QWidget* promotion_ = nullptr;
    SignoffPanel* signoff_ = nullptr;
    DiscoverPanel* discover_ = nullptr;
    QTimer* recoveryTimer_ = nullptr;
    QElapsedTimer loadClock_;
    QToolButton* convert_ = nullptr;
    QWidget* banner_ = nullptr;
    QLabel* runInfo_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QToolButton* cancel_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QStringList recent_;   // newest first; read once, written in the background
    QFileSystemWatcher* watcher_ = nullptr;
    QFileSystemWatcher* runWatcher_ = nullptr;
    QLabel* runChangedLabel_ = nullptr;
    qint64 runSize_ = -1, runMtime_ = -1;   // of the loaded run's file, when it was loaded
    bool runChanged_ = false;
    std::string demoContract_;
    bool evaluatedOnce_ = false;
    bool ignoreNextChange_ = false;
};

}  // namespace kcx::ui
