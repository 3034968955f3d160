// The window's page for a summary (SPEC 10, docs/summaries.md), in place of the heatmap and
// the drill-down that need the raw tokens: the heatmap of slice values (or steps) × position
// buckets read from the summary's cells, the selected cell's metric over steps with its
// interval and the selected clause's limit, the worst tokens the summary kept for that cell
// (with where the raw data are), and the summary's inputs. Everything follows the selected
// clause and its live thresholds; the grids are computed in the background.
#pragma once

#include <QWidget>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/summary/summary_views.h"

class QComboBox;
class QLabel;
class QTabWidget;
class QTableWidget;

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
QT_END_NAMESPACE

namespace kcx {
struct Clause;
}

namespace kcx::ui {

class Session;
class SummaryGridView;

class SummaryPanel : public QWidget {
    Q_OBJECT
public:
    explicit SummaryPanel(Session* session, QWidget* parent = nullptr);

    // The clause whose metric, statistic, slice key and limit the page shows; with a
    // result's slice, its row is selected (per_slice: task and task=code: the row "code").
    void setClause(const Clause* clause, const std::map<std::string, std::string>& slice = {});
    // Choices, also for tests: a metric name, a row key ("" none, "step"), a statistic, a step.
    void setMetric(const QString& metric);
    void setRowKey(const QString& key);
    void setStatistic(const CellStatSpec& stat);
    void setStep(std::optional<int64_t> step);
    void selectCell(int row, int column);

    QString metric() const;
    using QWidget::metric;   // (QPaintDevice's, which the line above would hide)
    QString rowKey() const;
    const SummaryGrid* grid() const;
    std::pair<int, int> selectedCell() const;
    // The series over steps and the worst entries of the selected cell, as shown.
    const std::vector<StepPoint>& steps() const { return steps_; }
    const std::vector<WorstEntry>& worst() const { return worst_; }
    QString worstNote() const;
    bool isDrawn() const;              // the grid of the current choices is shown
    QTabWidget* tabs() const { return tabs_; }

signals:
    void drawn();

private:
    void summaryLoaded();
    void refreshGrid();
    void showGrid(std::shared_ptr<const SummaryGrid> grid, quint64 generation);
    void showCell();
    void updateLimit();
    void fillInputs();
    CellStatSpec statistic() const;

    Session* session_;
    QComboBox* metricBox_;
    QComboBox* statBox_;
    QComboBox* rowsBox_;
    QComboBox* stepBox_;
    QLabel* caption_;
    SummaryGridView* view_;
    QTabWidget* tabs_;
    QChartView* chartView_;
    QChart* chart_;
    QTableWidget* worstTable_;
    QLabel* worstLabel_;
    QTableWidget* inputs_;
    std::shared_ptr<const RunSummary> summary_;
    std::shared_ptr<const SummaryGrid> grid_;
    quint64 generation_ = 0, drawnGeneration_ = 0;
    std::vector<StepPoint> steps_;
    std::vector<WorstEntry> worst_;
    std::optional<double> limitMax_, limitMin_;
    std::string clause_;
    std::string wantRow_;
    const SummaryGrid* shownGrid_ = nullptr;   // what showCell() last read the series of
    std::pair<int, int> shownCell_{-1, -1};   // the row to select once the grid of the clause arrives
    bool filling_ = false;
};

}  // namespace kcx::ui
