// The drill-down into one sequence (docs/drilldown.md): a header line (id, slices, length,
// rewards) with the next/previous worst token buttons, the legend of the colouring, a strip
// of the tokens coloured by a per-token metric, the selected token in its running text
// beside the sequence's runtime record, a table with one row per token (TokenTableModel,
// sortable) and both kernels' top-k lists at the selected token (TopKCompareModel).
//
// Selecting a token anywhere (strip, table, API, N / Shift+N) selects it everywhere,
// scrolls the strip and the table to it, and emits tokenSelected with its flat index in the
// run. The three splitters' sizes are kept in QSettings ("drilldown/…"): saved when the
// user moves one (and when the view goes away), restored when a view is created.
#pragma once

#include <QWidget>

#include <memory>

#include "core/formats/run.h"
#include "core/metrics/metrics.h"
#include "ui/drilldown/worst_tokens.h"

class QAction;
class QLabel;
class QScrollArea;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;
class QTimer;
class QToolButton;

namespace kcx::ui {

class MetricLegend;
class RuntimeTable;
class TokenContext;
class TokenStrip;
class TokenTableModel;
class TokenVocab;
class TopKCompareModel;

// The header line of a sequence, as plain text.
QString sequenceSummary(const Run& run, size_t seq);

class SequenceView : public QWidget {
    Q_OBJECT
public:
    // How many token rows the view asks room for when it is opened at a token.
    static constexpr int kComfortableTokenRows = 12;

    explicit SequenceView(QWidget* parent = nullptr);
    ~SequenceView() override;

    void setSequence(std::shared_ptr<const Run> run, size_t seq);
    // The same, now if the view is on screen, else when it is first shown: laying out a
    // sequence of 2,000 tokens takes the GUI thread 7-8 ms, too long to spend on a hidden
    // tab while a run loads (issue 17). Until then run() and sequence() are the last shown.
    void setSequenceWhenShown(std::shared_ptr<const Run> run, size_t seq);
    // A per-token metric of the same run (null: no colouring).
    void setMetric(std::shared_ptr<const MetricValues> metric);
    // Selects the token at `position` within the sequence (out of range: no selection) and
    // scrolls the strip and the table to it, now or as soon as the view is shown.
    void selectToken(size_t position);
    // The next / previous token by |log ratio| (WorstTokens); the worst when none is selected.
    void selectNextWorst();
    void selectPreviousWorst();
    // Asks the nearest vertical splitter above this view (the window's heatmap/details
    // split) for enough height to show kComfortableTokenRows token rows and every top-k row,
    // once the view is visible. Up to 70% of the splitter; never again after the user has
    // moved that splitter.
    void requestRoom();

    std::shared_ptr<const Run> run() const { return run_; }
    size_t sequence() const { return seq_; }
    // The selected position within the sequence, or -1.
    int selectedPosition() const { return selected_; }
    const WorstTokens& worstTokens() const { return worst_; }

    // For tests and the window's automation.
    TokenStrip* strip() const { return strip_; }
    QScrollArea* stripArea() const { return stripArea_; }
    TokenTableModel* tokenModel() const { return tokens_; }
    TopKCompareModel* topKModel() const { return topk_; }
    QTableView* tokenTable() const { return tokenTable_; }
    QTableView* topKTable() const { return topkTable_; }
    TokenContext* context() const { return context_; }
    RuntimeTable* runtimeTable() const { return runtime_; }
    QAction* nextWorstAction() const { return nextAct_; }
    QAction* previousWorstAction() const { return prevAct_; }
    QSplitter* outerSplitter() const { return outer_; }   // the context row over the tables
    QSplitter* contextSplitter() const { return contextSplit_; }   // context | runtime
    QSplitter* tableSplitter() const { return tableSplit_; }   // token table | top-k
    QString headerText() const;
    QString rankText() const;

signals:
    void tokenSelected(size_t flatIndex);

protected:
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void buildLayout();             // sequence_view_layout.cpp
    void restoreLayout();
    void saveLayout();
    void layoutMoved(QSplitter* splitter);
    void applyAutoSizes();          // splitters the user has not sized: fitted to the contents
    void takeRoom();
    void windowSplitMoved();
    int topKRowsNeeded() const;
    void sizeTopKText();
    void revealSelection();
    void refreshColours();
    void setSelection(int position, bool fromTable);
    void updateNavigation();
    void loadVocab();

    std::shared_ptr<const Run> run_;
    std::shared_ptr<const Run> pendingRun_;   // setSequenceWhenShown() before the first show
    size_t pendingSeq_ = 0;
    std::shared_ptr<const MetricValues> metric_;
    std::shared_ptr<const TokenVocab> vocab_;
    size_t seq_ = 0;
    int selected_ = -1;
    WorstTokens worst_;
    int maxTopKRows_ = 0;           // the most top-k rows any token of the sequence has
    bool revealPending_ = false;    // the selection was set by the API: scroll to it when shown
    bool wantRoom_ = false;
    bool userSizedWindow_ = false;  // the user moved the splitter requestRoom() grows
    bool layoutDirty_ = false;      // the user moved one of the view's splitters: save it
    bool autoOuter_ = true, autoContext_ = true, autoTables_ = true;   // no size from the user yet
    QSplitter* roomSplit_ = nullptr;

    QLabel* header_;
    QLabel* rank_;
    QToolButton* prevButton_;
    QToolButton* nextButton_;
    QAction* prevAct_;
    QAction* nextAct_;
    MetricLegend* legend_;
    TokenStrip* strip_;
    QScrollArea* stripArea_;
    TokenContext* context_;
    RuntimeTable* runtime_;
    TokenTableModel* tokens_;
    QSortFilterProxyModel* sorted_;
    QTableView* tokenTable_;
    QWidget* topkColumn_;
    QLabel* topkTitle_;
    TopKCompareModel* topk_;
    QTableView* topkTable_;
    QSplitter* outer_ = nullptr;
    QSplitter* contextSplit_ = nullptr;
    QSplitter* tableSplit_ = nullptr;
    QTimer* saveTimer_;
};

}  // namespace kcx::ui
