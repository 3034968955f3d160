// The legend of a token colouring: the metric's name, the colour bar from its low to its
// high end, and the marks for missing and non-finite values with their counts.
#pragma once

#include <QWidget>

#include "ui/style/metric_colours.h"

namespace kcx::ui {

class MetricLegend : public QWidget {
    Q_OBJECT
public:
    explicit MetricLegend(QWidget* parent = nullptr);

    // An empty name: no metric chosen.
    void setLegend(const QString& name, const MetricColours& colours, int missing, int nonFinite);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString name_;
    MetricColours colours_;
    int missing_ = 0, nonFinite_ = 0;
};

}  // namespace kcx::ui
