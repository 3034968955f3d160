// The drill-down into one sequence (issue 4 item 5): a header line (id, slices, length,
// rewards, runtime record), a strip of the tokens coloured by a per-token metric with its
// legend, a table with one row per token (TokenTableModel, sortable), and both kernels'
// top-k lists at the selected token side by side (TopKCompareModel).
//
// Selecting a token in the strip or the table selects it everywhere and emits
// tokenSelected with its flat index in the run.
#pragma once

#include <QWidget>

#include <memory>

#include "core/formats/run.h"
#include "core/metrics/metrics.h"

class QLabel;
class QScrollArea;
class QSortFilterProxyModel;
class QTableView;

namespace kcx::ui {

class MetricLegend;
class TokenStrip;
class TokenTableModel;
class TokenVocab;
class TopKCompareModel;

// The header line of a sequence, as rich text.
QString sequenceSummary(const Run& run, size_t seq);

class SequenceView : public QWidget {
    Q_OBJECT
public:
    explicit SequenceView(QWidget* parent = nullptr);
    ~SequenceView() override;

    void setSequence(std::shared_ptr<const Run> run, size_t seq);
    // A per-token metric of the same run (null: no colouring).
    void setMetric(std::shared_ptr<const MetricValues> metric);
    // Selects the token at `position` within the sequence (out of range: no selection).
    void selectToken(size_t position);

    std::shared_ptr<const Run> run() const { return run_; }
    size_t sequence() const { return seq_; }
    // The selected position within the sequence, or -1.
    int selectedPosition() const { return selected_; }

    // For tests and the window's automation.
    TokenStrip* strip() const { return strip_; }
    TokenTableModel* tokenModel() const { return tokens_; }
    TopKCompareModel* topKModel() const { return topk_; }
    QTableView* tokenTable() const { return tokenTable_; }
    QTableView* topKTable() const { return topkTable_; }
    QString headerText() const;

signals:
    void tokenSelected(size_t flatIndex);

private:
    void refreshColours();
    void setSelection(int position, bool fromTable);
    void loadVocab();

    std::shared_ptr<const Run> run_;
    std::shared_ptr<const MetricValues> metric_;
    std::shared_ptr<const TokenVocab> vocab_;
    size_t seq_ = 0;
    int selected_ = -1;

    QLabel* header_;
    MetricLegend* legend_;
    TokenStrip* strip_;
    QScrollArea* stripArea_;
    TokenTableModel* tokens_;
    QSortFilterProxyModel* sorted_;
    QTableView* tokenTable_;
    QLabel* topkTitle_;
    TopKCompareModel* topk_;
    QTableView* topkTable_;
};

}  // namespace kcx::ui
