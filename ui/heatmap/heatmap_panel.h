// The heatmap with its controls: which metric, which rows (slices or sequences), which
// cell aggregate, and the colour scale. The threshold comes from the selected clause.
#pragma once

#include <QWidget>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ui/heatmap/clause_lens.h"

class QComboBox;
class QCheckBox;
class QLabel;

namespace kcx {
struct MetricValues;
}

namespace kcx::ui {

class Session;
class HeatmapView;

class HeatmapPanel : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapPanel(Session* session, QWidget* parent = nullptr);
    ~HeatmapPanel() override;

    HeatmapView* view() const { return view_; }
    QString metric() const;
    using QWidget::metric;   // (QPaintDevice's, which the line above would hide)
    // A narrow window: the toolbar drops its "Metric:", "Rows:" and "Cell:" labels, so
    // that the results table beside it keeps its numbers in view.
    void setCompact(bool compact);

public slots:
    void setMetric(const QString& metric);   // a per-token metric
    // The selected clause's lens (clause_lens.h); nullopt: no clause. A new clause brings
    // its metric, its statistic and rows by its slice key; the same clause again (after
    // every evaluation) only updates its limit and scope, and leaves the user's choices.
    void setClause(const std::optional<ClauseLens>& lens);
    // The share-above level (tests; a clause's lens sets it otherwise).
    void setThreshold(double value);

    // Rows = the sequences of one labeled slice; false when the run has no such slice.
    bool showSequencesOf(const QString& key, const QString& value);
    // Rows = a finding (where every condition holds) and the rest of the run, zoomed to
    // `positions` when given. The choice stays in the Rows list as "finding: …".
    void showFinding(const std::vector<std::pair<std::string, std::string>>& conditions,
                     std::optional<std::pair<size_t, size_t>> positions = {});

signals:
    void sequenceActivated(size_t sequence, size_t position);
    void metricChanged(const QString& metric);

private:
    void fillRowChoices();
    void applyRowMode();
    void applyAggregate();
    void fillAggregateChoices();

    Session* session_;
    HeatmapView* view_;
    QComboBox* metric_;
    QComboBox* rows_;
    QComboBox* aggregate_;
    QCheckBox* log_;
    QLabel* note_;
    std::vector<QLabel*> labels_;
    std::shared_ptr<const MetricValues> values_;
    std::unique_ptr<ClauseLens> lens_;
    double shareLevel_ = NAN;   // "share above" without a clause: the last level given
};

}  // namespace kcx::ui
