// The divergence heatmap: rows (slice values or sequences) by token position.
//
// Two kinds of background job, each with a generation number so that only the newest
// result is used: building the HeatmapIndex (on setData/setRowMode) and rendering (rebinning
// the grid and colouring an indexed 8-bit image; on zoom, pan, resize, aggregate,
// threshold or colour range). One render job runs at a time; requests made meanwhile are
// merged into the next one. While a job runs the last image is drawn where its ranges
// fall in the current view, so pan and zoom repaint at once. A colour map change only
// swaps the image's colour table.
//
// Mouse: wheel zooms positions about the cursor (Ctrl+wheel: rows), drag pans, a click
// activates the cell's sequence, hovering shows the cell. Keys: +/- zoom positions
// (with Ctrl: rows), arrows pan, Home shows everything.
#pragma once

#include <QImage>
#include <QPixmap>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

#include "core/heatmap/heatmap.h"
#include "ui/style/colour_map.h"

class QPainter;

namespace kcx::ui {

// What a cell shows and which cells are marked: a plain statistic chosen by the user, or a
// selected clause's own statistic over its own scope with its limit (HeatmapPanel).
struct CellStatistic {
    HeatmapAggregate aggregate = HeatmapAggregate::Mean;
    double quantile = 0.5;           // Quantile
    double threshold = 0;            // ShareAbove's level
    HeatmapMark mark = HeatmapMark::None;
    double markLevel = 0;            // the clause's limit, in the units of the cell value
    uint32_t fewBelow = 0;           // cells with fewer values are hatched as resting on little data
    std::shared_ptr<const std::vector<uint8_t>> scope{};   // tokens that count (nullptr: all)
    QString name;                    // e.g. "p99.9" or "share above 0.5" (title, tooltips)
    QString clause;                  // the clause whose statistic this is, or empty
    QString markText;                // e.g. "max 0.3" (title, legend)
    QString scopeText;               // e.g. "precision=fp8, positions 0–63"
    bool operator==(const CellStatistic&) const = default;
};

class HeatmapView : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget* parent = nullptr);
    ~HeatmapView() override;

    // A per-token metric of the run; `metric` names it in the title and legend.
    void setData(std::shared_ptr<const Run> run, std::shared_ptr<const MetricValues> values,
                 const QString& metric);
    // Rows; with `positions`, the first view of the new rows shows only [from, to).
    void setRowMode(const HeatmapRowSpec& spec, std::optional<std::pair<size_t, size_t>> positions = {});
    // How derived slice keys (derived.*) get their codes; without it they cannot be rows.
    void setDerivedLookup(DerivedLookup lookup) { derived_ = std::move(lookup); }
    void setStatistic(const CellStatistic& statistic);
    // A plain statistic: no clause, no marks, every token (keeps the share-above level).
    void setAggregate(HeatmapAggregate aggregate);
    // The level of "share above".
    void setThreshold(double threshold);
    void setColourScale(const ColourScale& scale);
    // The view: index rows [row0, row1) and positions [pos0, pos1), clamped to the data.
    void setView(size_t row0, size_t row1, size_t pos0, size_t pos1);
    void resetView();

    HeatmapRowSpec rowMode() const { return spec_; }
    const CellStatistic& statistic() const { return stat_; }
    HeatmapAggregate aggregate() const { return stat_.aggregate; }
    double threshold() const { return stat_.threshold; }
    ColourScale colourScale() const { return scale_; }
    // What is shown (for tests and status bars); null until the first result.
    std::shared_ptr<const HeatmapIndex> index() const { return index_; }
    std::shared_ptr<const HeatmapGrid> grid() const { return grid_; }
    const QImage& image() const { return image_; }
    std::pair<double, double> colourRangeShown() const { return {shownLo_, shownHi_}; }
    QRect plotRect() const;
    bool isBusy() const { return indexRunning_ || renderRunning_; }
    // An image of the current index and view is on screen, and nothing is on its way.
    bool isDrawn() const { return index_ && !isBusy() && !renderPending_ && !image_.isNull(); }
    const std::shared_ptr<const Run>& run() const { return run_; }
    QString stateText() const;   // for diagnostics: what the view has and waits for
    // The grid cell under a widget point, in the image on screen.
    std::optional<std::pair<size_t, size_t>> cellAt(QPoint p) const;
    QString toolTipAt(QPoint p) const;

    QSize sizeHint() const override { return {800, 480}; }
    QSize minimumSizeHint() const override { return {240, 160}; }

signals:
    void sequenceActivated(size_t sequence);
    void tokenActivated(size_t sequence, size_t position);   // with the cell's peak position
    void rendered();                                          // a new image is on screen
    void failed(const QString& message);                      // e.g. not a per-token metric

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    bool event(QEvent*) override;

private:
    struct Rendered;
    void rebuildIndex();
    void requestRender(bool invalidatesRunning);
    void startRender();
    void finishRender(Rendered r);
    void zoom(double factor, bool rows, double anchor);   // anchor: fraction of the view
    void pan(double dx, double dy);                        // in fractions of the view
    QRectF imageTarget() const;   // where the shown image's ranges fall in the current view
    void paintRowLabels(QPainter& p, const QRect& plot) const;
    void paintPositionAxis(QPainter& p, const QRect& plot) const;
    void paintLegend(QPainter& p, const QRect& plot) const;

    std::shared_ptr<const Run> run_;
    std::shared_ptr<const MetricValues> values_;
    QString metric_;
    HeatmapRowSpec spec_;
    DerivedLookup derived_;
    std::optional<std::pair<size_t, size_t>> pendingPositions_;
    CellStatistic stat_;
    ColourScale scale_;
    size_t row0_ = 0, row1_ = 0, pos0_ = 0, pos1_ = 0;   // the view

    std::shared_ptr<const HeatmapIndex> index_;
    std::shared_ptr<const HeatmapGrid> grid_;   // the grid of image_
    QImage image_;
    QPixmap pixmap_;
    double shownLo_ = 0, shownHi_ = 1;
    bool shownLog_ = false;
    int labelWidth_ = 60;   // widest row label (capped), measured when the index arrives

    // Generations: a job whose number is no longer the newest is cancelled and dropped.
    std::shared_ptr<std::atomic<uint64_t>> indexGen_, renderGen_;
    bool indexRunning_ = false, renderRunning_ = false, renderPending_ = false;
    bool indexQueued_ = false;   // startIndexJob() is on its way
    void startIndexJob();

    QPoint pressPos_;
    bool dragging_ = false;
    size_t pressRow0_ = 0, pressRow1_ = 0, pressPos0_ = 0, pressPos1_ = 0;
};

}  // namespace kcx::ui
