// Many scatter points drawn as one cached image, inside a QChart's plot area.
//
// Qt Charts' QScatterSeries makes one QGraphicsItem per point: at 20,000 points a resize
// took over a second and every repaint of the window 70 ms. This item keeps the points as
// numbers, draws them once into an image the size of the plot area (a pre-drawn marker
// copied to each place), and paints that image: a repaint is a blit. The image is redrawn
// only when the points, the axes or the plot area change.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QImage>
#include <QPointF>

#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace kcx::ui {

class PointCloudItem : public QGraphicsItem {
public:
    struct Layer {
        std::vector<QPointF> points;   // in axis units
        QColor colour;
    };
    struct Axes {
        double xLo = 0, xHi = 1, yLo = 0, yHi = 1;
        bool log = false;   // both axes base-10 logarithmic
    };

    // Becomes a child of chart, between the grid and the series; follows its plot area.
    explicit PointCloudItem(QChart* chart);

    void setLayers(std::vector<Layer> layers, const Axes& axes, double markerSize);
    void clear();

    // Where a point in axis units lands, in chart coordinates (NaN when it has no place).
    QPointF position(QPointF value) const;
    size_t pointCount() const;
    // The image as painted now (drawn first if needed), for tests: plot area size.
    QImage image();

    QRectF boundingRect() const override { return area_; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;

private:
    void setArea(const QRectF& area);
    void render(qreal dpr);

    std::vector<Layer> layers_;
    Axes axes_;
    double marker_ = 5;
    QRectF area_;
    QImage cache_;
    bool dirty_ = true;
};

}  // namespace kcx::ui
