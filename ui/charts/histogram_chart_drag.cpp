// HistogramChart: dragging a threshold line with the mouse.
#include <QMouseEvent>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

#include <algorithm>
#include <cmath>

#include "ui/charts/histogram_chart.h"
#include "ui/session/threshold_command.h"

namespace kcx::ui {

namespace {
constexpr int kGrabPixels = 8;   // how close to a line a press must be
}

double HistogramChart::valueAt(QPoint viewportPos) const {
    if (!area_)
        return std::nan("");
    const QPointF inChart = chart_->mapFromScene(view_->mapToScene(viewportPos));
    return chart_->mapToValue(inChart, area_).x();
}

QPoint HistogramChart::positionOf(double value) const {
    if (!area_)
        return {};
    const double yMid = logCount_ ? std::sqrt(yLo_ * yHi_) : 0.5 * (yLo_ + yHi_);
    const QPointF inChart = chart_->mapToPosition(QPointF(value, yMid), area_);
    return view_->mapFromScene(chart_->mapToScene(inChart));
}

int HistogramChart::lineNear(QPoint p) const {
    if (!area_ || !chart_->plotArea().contains(chart_->mapFromScene(view_->mapToScene(p))))
        return -1;
    int best = -1;
    int bestDistance = kGrabPixels + 1;
    for (size_t i = 0; i < lines_.size(); ++i) {
        if (!lines_[i].editable || !lineSeries_[i])
            continue;
        const int d = std::abs(positionOf(std::clamp(lines_[i].value, xLo_, xHi_)).x() - p.x());
        if (d < bestDistance) {
            best = int(i);
            bestDistance = d;
        }
    }
    return best;
}

void HistogramChart::dragTo(QPoint p) {
    double v = valueAt(p);
    if (!std::isfinite(v))
        return;
    v = std::clamp(v, xLo_, xHi_);
    if (v == lastDragValue_)
        return;
    lastDragValue_ = v;
    lines_[size_t(dragIndex_)].value = v;
    placeLine(size_t(dragIndex_));
    emit thresholdDragged(v, gesture_);
}

bool HistogramChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched != view_->viewport())
        return QWidget::eventFilter(watched, event);
    switch (event->type()) {
    case QEvent::MouseButtonPress: {
        auto* e = static_cast<QMouseEvent*>(event);
        if (e->button() != Qt::LeftButton)
            break;
        const int i = lineNear(e->position().toPoint());
        if (i < 0)
            break;
        dragIndex_ = i;
        dragWhich_ = QString::fromStdString(lines_[size_t(i)].which);
        gesture_ = ThresholdCommand::newGesture();
        lastDragValue_ = lines_[size_t(i)].value;
        return true;
    }
    case QEvent::MouseMove: {
        auto* e = static_cast<QMouseEvent*>(event);
        const QPoint p = e->position().toPoint();
        if (dragging()) {
            dragTo(p);
            return true;
        }
        view_->viewport()->setCursor(lineNear(p) >= 0 ? Qt::SizeHorCursor : Qt::ArrowCursor);
        break;
    }
    case QEvent::MouseButtonRelease: {
        auto* e = static_cast<QMouseEvent*>(event);
        if (!dragging() || e->button() != Qt::LeftButton)
            break;
        dragTo(e->position().toPoint());
        dragIndex_ = -1;
        emit thresholdDragFinished();
        return true;
    }
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace kcx::ui
