#include "ui/charts/point_cloud_item.h"

#include <QPainter>
#include <QtCharts/QChart>

#include <cmath>
#include <limits>

namespace kcx::ui {

namespace {

// Qt Charts stacks its items by z: grid 2, axes 3, series 4. The cloud sits on the grid,
// under the series (the diagonal is drawn over the points).
constexpr qreal kZ = 3.5;

QImage markerImage(const QColor& colour, double size, qreal dpr) {
    const int px = std::max(1, int(std::ceil(size * dpr))) + 2;
    QImage m(px, px, QImage::Format_ARGB32_Premultiplied);
    m.fill(Qt::transparent);
    QPainter p(&m);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(colour);
    const double d = size * dpr;
    p.drawEllipse(QRectF((px - d) / 2.0, (px - d) / 2.0, d, d));
    return m;
}

}  // namespace

PointCloudItem::PointCloudItem(QChart* chart) : QGraphicsItem(chart) {
    setZValue(kZ);
    setFlag(QGraphicsItem::ItemClipsToShape);
    setAcceptedMouseButtons(Qt::NoButton);
    QObject::connect(chart, &QChart::plotAreaChanged, chart, [this](const QRectF& area) { setArea(area); });
    setArea(chart->plotArea());
}

void PointCloudItem::setLayers(std::vector<Layer> layers, const Axes& axes, double markerSize) {
    layers_ = std::move(layers);
    axes_ = axes;
    marker_ = markerSize;
    dirty_ = true;
    update();
}

void PointCloudItem::clear() { setLayers({}, axes_, marker_); }

size_t PointCloudItem::pointCount() const {
    size_t n = 0;
    for (const Layer& l : layers_)
        n += l.points.size();
    return n;
}

void PointCloudItem::setArea(const QRectF& area) {
    if (area == area_)
        return;
    prepareGeometryChange();
    area_ = area;
    dirty_ = true;
    update();
}

QPointF PointCloudItem::position(QPointF v) const {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    double x = v.x(), y = v.y(), x0 = axes_.xLo, x1 = axes_.xHi, y0 = axes_.yLo, y1 = axes_.yHi;
    if (axes_.log) {
        if (!(x > 0) || !(y > 0) || !(x0 > 0) || !(y0 > 0))
            return {nan, nan};
        x = std::log10(x), y = std::log10(y);
        x0 = std::log10(x0), x1 = std::log10(x1), y0 = std::log10(y0), y1 = std::log10(y1);
    }
    if (!(x1 > x0) || !(y1 > y0) || !std::isfinite(x) || !std::isfinite(y))
        return {nan, nan};
    return {area_.left() + (x - x0) / (x1 - x0) * area_.width(), area_.bottom() - (y - y0) / (y1 - y0) * area_.height()};
}

void PointCloudItem::render(qreal dpr) {
    dirty_ = false;
    const QSize size = (area_.size() * dpr).toSize();
    if (size.isEmpty()) {
        cache_ = QImage();
        return;
    }
    cache_ = QImage(size, QImage::Format_ARGB32_Premultiplied);
    cache_.setDevicePixelRatio(dpr);
    cache_.fill(Qt::transparent);
    QPainter p(&cache_);
    p.scale(1 / dpr, 1 / dpr);   // device pixels: every marker copy lands on whole pixels
    for (const Layer& layer : layers_) {
        const QImage m = markerImage(layer.colour, marker_, dpr);
        const double half = m.width() / 2.0;
        for (const QPointF& v : layer.points) {
            const QPointF at = position(v);
            if (!std::isfinite(at.x()))
                continue;
            const double px = (at.x() - area_.left()) * dpr, py = (at.y() - area_.top()) * dpr;
            p.drawImage(QPoint(int(std::lround(px - half)), int(std::lround(py - half))), m);
        }
    }
}

QImage PointCloudItem::image() {
    if (dirty_)
        render(1.0);
    return cache_;
}

void PointCloudItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const qreal dpr = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
    if (dirty_ || cache_.devicePixelRatio() != dpr)
        render(dpr);
    if (!cache_.isNull())
        painter->drawImage(area_.topLeft(), cache_);
}

}  // namespace kcx::ui
