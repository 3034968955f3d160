// One clause's results per slice as bars coloured by status, with confidence whiskers
// and the threshold(s) as horizontal lines.
//
// An exceedance test draws the observed share above the level with a whisker up to its
// Wilson upper bound (the number that is compared with `max`); a mean test draws the
// observed mean with its bootstrap interval; other clauses draw the observed aggregate.
// Hovering a bar shows the result's message.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

#include "core/evaluate/evaluator.h"

QT_BEGIN_NAMESPACE
class QBarSet;
class QChart;
class QChartView;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace kcx::ui {

struct SliceBar {
    QString label;                      // "math" (the key is the axis title), or "all"
    double value = 0;                   // observed (0 when there is none)
    bool observed = false;
    std::optional<double> lo, hi;       // the whisker
    std::optional<double> confidence;   // behind the whisker
    Status status = Status::Pass;
    uint64_t n = 0;
    QString message;
};

class SliceBarsChart : public QWidget {
    Q_OBJECT
public:
    explicit SliceBarsChart(QWidget* parent = nullptr);

    // The results of one clause (results of other clauses are ignored).
    void setResults(const std::vector<Result>& results, const QString& clause);
    void clear();

    const std::vector<SliceBar>& bars() const { return bars_; }
    std::vector<std::pair<QString, double>> thresholds() const { return thresholds_; }
    QString valueTitle() const { return valueTitle_; }
    QString sliceTitle() const { return sliceTitle_; }
    QChartView* chartView() const { return view_; }
    QChart* chart() const { return chart_; }

    // The bars of a clause's results, in result order (no Qt Charts involved). When every
    // result has the same single slice key, labels are its values and *key names it;
    // otherwise labels read "key=value, ...".
    static std::vector<SliceBar> barsOf(const std::vector<Result>& results, const QString& clause,
                                        QString* key = nullptr);

private:
    // What the chart's objects depend on; when a new result keeps it (a threshold edit
    // does), the chart is updated in place instead of rebuilt.
    struct Shape {
        QString clause, sliceTitle, valueTitle;
        QStringList categories;
        std::vector<bool> whiskers;
        QStringList thresholds;
        bool operator==(const Shape&) const = default;
    };
    Shape shape() const;
    void rebuild();   // new objects, then refresh()
    void refresh();   // values, colours, lines and range into the existing objects

    QChart* chart_;
    QChartView* view_;
    QString clause_;
    std::vector<SliceBar> bars_;
    std::vector<std::pair<QString, double>> thresholds_;   // "max"/"min" -> value
    QString valueTitle_, sliceTitle_;
    std::optional<Shape> built_;
    QStackedBarSeries* series_ = nullptr;
    std::vector<QBarSet*> sets_;   // one per Status, in enum order
    std::vector<QLineSeries*> whiskers_, lines_;
    QValueAxis* valueAxis_ = nullptr;
};

}  // namespace kcx::ui
