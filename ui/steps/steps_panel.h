// The "Over steps" tab (issue 20, docs/steps.md): the selected clause's metric per training
// step — per slice when the clause has per_slice — with its 95 % interval over sequences,
// the clause's limit and the onset of a rise (core/steps, as `kcx steps`), and under it the
// contract replayed step by step per stage (as `kcx replay`), redrawn as thresholds move.
// Computed in the background while the tab is shown; clicking a step lists what drove it
// and opens its worst token in the Sequence tab.
#pragma once

#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/evaluate/evaluator.h"

class QChart;
class QChartView;
class QLabel;
class QPushButton;

namespace kcx {
struct StepsResult;
struct Replay;
struct Run;
}  // namespace kcx

namespace kcx::ui {

class Session;
class StepTimeline;
class StepSliceGrid;
struct EvaluationSnapshot;

class StepsPanel : public QWidget {
    Q_OBJECT
public:
    explicit StepsPanel(Session* session, QWidget* parent = nullptr);
    ~StepsPanel() override;
    void setClause(const QString& clause, const std::optional<SliceLabels>& slice);
    // Nothing is being computed for what is selected (tests, screenshots).
    bool isDrawn() const { return drawn_; }
    // Acts as a click on a step.
    void selectStep(int64_t step);
    // Acts as a click on a cell of the steps × slices grid: the step, and that series' worst
    // token there for the Sequence tab.
    void selectCell(int64_t step, size_t series);
    // What is shown (tests).
    std::shared_ptr<const StepsResult> steps() const { return steps_; }
    std::shared_ptr<const Replay> replay() const { return replay_; }
    QChart* chart() const { return chart_; }
    QPushButton* openWorstButton() const { return openWorst_; }

signals:
    void sequenceActivated(size_t sequence, size_t position);

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct Job;
    void refresh();
    void showResult(std::shared_ptr<const StepsResult> steps, std::shared_ptr<const Replay> replay,
                    const QString& error, quint64 generation);
    void draw();

    Session* session_;
    QLabel* caption_;
    QChart* chart_;
    QChartView* chartView_;
    StepTimeline* timeline_;
    StepSliceGrid* grid_;
    QLabel* drivers_;
    QString clause_;
    std::optional<SliceLabels> slice_;
    std::shared_ptr<const Contract> contract_;   // the thresholds of the last evaluation
    std::shared_ptr<const Run> run_;
    std::shared_ptr<const StepsResult> steps_;
    std::shared_ptr<const Replay> replay_;
    std::string stepsKey_;                       // what steps_ was computed for
    quint64 generation_ = 0;
    bool dirty_ = true, drawn_ = false;
    std::optional<int64_t> selectedStep_;
    QPushButton* openWorst_;
    std::optional<std::pair<size_t, size_t>> worstToken_;   // sequence, position
};

}  // namespace kcx::ui
