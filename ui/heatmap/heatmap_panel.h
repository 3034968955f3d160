// The heatmap with its controls: which metric, which rows (slices or sequences), which
// cell aggregate, and the colour scale. The threshold comes from the selected clause.
#pragma once

#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

    HeatmapView* view() const { return view_; }
    QString metric() const;

public slots:
    void setMetric(const QString& metric);   // a per-token metric
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

    Session* session_;
    HeatmapView* view_;
    QComboBox* metric_;
    QComboBox* rows_;
    QComboBox* aggregate_;
    QCheckBox* log_;
    QLabel* note_;
    std::shared_ptr<const MetricValues> values_;
};

}  // namespace kcx::ui
