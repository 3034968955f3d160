#include "ui/corrections/weight_histogram.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kcx::ui {

WeightHistogram::WeightHistogram(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setToolTip(tr("Token log-weights r = lp_train − lp_inf (count, log scale). Drag a bound line to move it."));
}

void WeightHistogram::setCounts(std::vector<double> counts, double lo, double hi) {
    counts_ = std::move(counts);
    lo_ = lo;
    hi_ = hi > lo ? hi : lo + 1;
    update();
}

void WeightHistogram::setBounds(const std::vector<double>& weights) {
    bounds_ = weights;
    update();
}

QRectF WeightHistogram::plot() const { return QRectF(40, 8, std::max(10, width() - 60), std::max(10, height() - 30)); }

double WeightHistogram::xOf(double weight) const {
    const QRectF p = plot();
    const double r = std::log(std::max(weight, 1e-300));
    return p.left() + (std::clamp(r, lo_, hi_) - lo_) / (hi_ - lo_) * p.width();
}

double WeightHistogram::weightAt(double x) const {
    const QRectF p = plot();
    const double r = lo_ + (std::clamp(x, p.left(), p.right()) - p.left()) / p.width() * (hi_ - lo_);
    return std::exp(r);
}

void WeightHistogram::paintEvent(QPaintEvent*) {
    QPainter g(this);
    g.setRenderHint(QPainter::Antialiasing);
    const QRectF p = plot();
    g.fillRect(rect(), palette().base());
    g.setPen(palette().mid().color());
    g.drawRect(p);
    double top = 0;
    for (double c : counts_)
        top = std::max(top, std::log1p(c));
    if (!counts_.empty() && top > 0) {
        const double bw = p.width() / double(counts_.size());
        const QColor fill = palette().highlight().color();
        for (size_t i = 0; i < counts_.size(); ++i) {
            const double h = std::log1p(counts_[i]) / top * p.height();
            g.fillRect(QRectF(p.left() + double(i) * bw, p.bottom() - h, std::max(1.0, bw - 0.5), h), fill);
        }
    }
    // The axis: r at the ends and at 0 (w = 1).
    g.setPen(palette().text().color());
    const QFontMetrics fm(font());
    auto label = [&](double r) {
        const double x = p.left() + (r - lo_) / (hi_ - lo_) * p.width();
        const QString t = QString::number(r, 'g', 3);
        g.drawText(QPointF(x - fm.horizontalAdvance(t) / 2.0, p.bottom() + fm.ascent() + 3), t);
        g.drawLine(QPointF(x, p.bottom()), QPointF(x, p.bottom() + 3));
    };
    label(lo_);
    label(hi_);
    if (lo_ < 0 && hi_ > 0)
        label(0);
    g.save();
    g.translate(12, p.center().y());
    g.rotate(-90);
    const QString ylab = tr("log count");
    g.drawText(QPointF(-fm.horizontalAdvance(ylab) / 2.0, 0), ylab);
    g.restore();
    const QString xlab = tr("r = log w");
    g.drawText(QPointF(p.left() + p.width() * 0.25 - fm.horizontalAdvance(xlab) / 2.0, p.bottom() + fm.ascent() + 3), xlab);
    // The bounds.
    QPen pen(QColor(0xc6, 0x28, 0x28), 2);
    for (size_t i = 0; i < bounds_.size(); ++i) {
        pen.setStyle(int(i) == dragging_ ? Qt::SolidLine : Qt::DashLine);
        g.setPen(pen);
        const double x = xOf(bounds_[i]);
        g.drawLine(QPointF(x, p.top()), QPointF(x, p.bottom()));
        g.drawText(QPointF(x + 3, p.top() + fm.ascent() + 2 + double(i) * fm.height()), QString::number(bounds_[i], 'g', 4));
    }
}

void WeightHistogram::mousePressEvent(QMouseEvent* e) {
    dragging_ = -1;
    double best = 8;
    for (size_t i = 0; i < bounds_.size(); ++i) {
        const double d = std::fabs(xOf(bounds_[i]) - e->position().x());
        if (d <= best) {
            best = d;
            dragging_ = int(i);
        }
    }
    update();
}

void WeightHistogram::mouseMoveEvent(QMouseEvent* e) {
    if (dragging_ < 0) {
        bool near = false;
        for (double b : bounds_)
            near = near || std::fabs(xOf(b) - e->position().x()) <= 8;
        setCursor(near ? Qt::SizeHorCursor : Qt::ArrowCursor);
        return;
    }
    emit boundsDragged(dragging_, weightAt(e->position().x()));
}

void WeightHistogram::mouseReleaseEvent(QMouseEvent*) {
    if (dragging_ >= 0) {
        dragging_ = -1;
        update();
        emit dragFinished();
    }
}

}  // namespace kcx::ui
