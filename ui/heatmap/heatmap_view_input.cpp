// HeatmapView: zoom, pan, hover and click.
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "ui/heatmap/heatmap_render.h"
#include "ui/heatmap/heatmap_view.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

std::optional<std::pair<size_t, size_t>> HeatmapView::cellAt(QPoint pt) const {
    if (!grid_ || image_.isNull() || grid_->rows == 0 || grid_->cols == 0)
        return std::nullopt;
    const QRectF t = imageTarget();
    if (!plotRect().contains(pt) || !t.contains(QPointF(pt) + QPointF(0.5, 0.5)))
        return std::nullopt;
    // The image pixel under the point, then the cell of that pixel (as rendered).
    const double fx = (pt.x() + 0.5 - t.left()) / t.width(), fy = (pt.y() + 0.5 - t.top()) / t.height();
    const size_t ix = std::min(size_t(image_.width() - 1), size_t(std::max(0.0, fx * image_.width())));
    const size_t iy = std::min(size_t(image_.height() - 1), size_t(std::max(0.0, fy * image_.height())));
    return std::pair{std::min(cellOfPixel(iy, size_t(image_.height()), grid_->rows), grid_->rows - 1),
                     std::min(cellOfPixel(ix, size_t(image_.width()), grid_->cols), grid_->cols - 1)};
}

QString HeatmapView::toolTipAt(QPoint pt) const {
    const auto cell = cellAt(pt);
    if (!cell)
        return {};
    const HeatmapCell c = cellDetails(*index_, *grid_, cell->first, cell->second);
    QString s = QString::fromStdString(c.rowLabel);
    if (!c.slice.empty())
        s += QStringLiteral("\n") + QString::fromStdString(c.slice);
    s += c.pos1 - c.pos0 == 1 ? tr("\nposition %1").arg(c.pos0) : tr("\npositions %1–%2").arg(c.pos0).arg(c.pos1 - 1);
    if (c.n == 0)
        return s + tr("\nno values");
    const QString name = stat_.name.isEmpty() ? QString::fromLatin1(aggregateName(grid_->request.aggregate)) : stat_.name;
    s += tr("\n%1 %2: %3 (n = %L4)").arg(metric_, name).arg(c.value, 0, 'g', 4).arg(c.n);
    if (!stat_.scopeText.isEmpty())
        s += tr("\nonly the tokens of %1's scope: %2").arg(stat_.clause, stat_.scopeText);
    if (c.few)
        s += tr("\nrests on few values: %L1, fewer than the %L2 a %3 needs to mean much (hatched)")
                 .arg(c.n).arg(grid_->request.fewBelow).arg(name);
    if (grid_->marked(cell->first, cell->second))
        s += tr("\nbreaks %1: %2 %3").arg(stat_.clause, name, stat_.markText);
    s += tr("\nmax %1").arg(c.max, 0, 'g', 4);
    if (grid_->request.aggregate == HeatmapAggregate::ShareAbove)
        s += tr("; %L1 of %L2 above %3").arg(c.above).arg(c.n).arg(grid_->request.threshold);
    return s + tr("\nclick to open the sequence");
}

bool HeatmapView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const QString text = toolTipAt(he->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
            e->ignore();
        } else {
            QToolTip::showText(he->globalPos(), plainToolTip(text), this);   // row labels come from files
        }
        return true;
    }
    return QWidget::event(e);
}

void HeatmapView::wheelEvent(QWheelEvent* e) {
    const QRect plot = plotRect();
    const double steps = e->angleDelta().y() / 120.0;
    if (steps == 0 || plot.isEmpty())
        return;
    const bool rows = e->modifiers() & Qt::ControlModifier;
    const QPointF pt = e->position();
    const double anchor = rows ? (pt.y() - plot.top()) / plot.height() : (pt.x() - plot.left()) / plot.width();
    zoom(std::pow(1.25, steps), rows, anchor);
    e->accept();
}

void HeatmapView::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(e);
    pressPos_ = e->position().toPoint();
    dragging_ = false;
    pressRow0_ = row0_;
    pressRow1_ = row1_;
    pressPos0_ = pos0_;
    pressPos1_ = pos1_;
}

void HeatmapView::mouseMoveEvent(QMouseEvent* e) {
    if (!(e->buttons() & Qt::LeftButton) || !index_)
        return;
    const QPoint d = e->position().toPoint() - pressPos_;
    if (!dragging_ && d.manhattanLength() < 4)
        return;
    dragging_ = true;
    const QRect plot = plotRect();
    if (plot.isEmpty())
        return;
    // Relative to where the drag began, so that rounding never accumulates.
    const int64_t dp = std::llround(d.x() * double(pressPos1_ - pressPos0_) / plot.width());
    const int64_t dr = std::llround(d.y() * double(pressRow1_ - pressRow0_) / plot.height());
    const auto shift = [](size_t a, int64_t by) { return size_t(std::max<int64_t>(0, int64_t(a) - by)); };
    const size_t r0 = shift(pressRow0_, dr), p0 = shift(pressPos0_, dp);
    setView(r0, r0 + (pressRow1_ - pressRow0_), p0, p0 + (pressPos1_ - pressPos0_));
}

void HeatmapView::mouseReleaseEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton)
        return QWidget::mouseReleaseEvent(e);
    if (dragging_) {
        dragging_ = false;
        return;
    }
    const auto cell = cellAt(e->position().toPoint());
    if (!cell)
        return;
    if (const auto target = cellTarget(*index_, *grid_, cell->first, cell->second)) {
        emit sequenceActivated(target->sequence);
        emit tokenActivated(target->sequence, target->position);
    }
}

void HeatmapView::keyPressEvent(QKeyEvent* e) {
    const bool rows = e->modifiers() & Qt::ControlModifier;
    switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoom(1.5, rows, 0.5); break;
    case Qt::Key_Minus: zoom(1 / 1.5, rows, 0.5); break;
    case Qt::Key_Left: pan(-0.1, 0); break;
    case Qt::Key_Right: pan(0.1, 0); break;
    case Qt::Key_Up: pan(0, -0.1); break;
    case Qt::Key_Down: pan(0, 0.1); break;
    case Qt::Key_Home:
    case Qt::Key_0: resetView(); break;
    default: return QWidget::keyPressEvent(e);
    }
    e->accept();
}

}  // namespace kcx::ui
