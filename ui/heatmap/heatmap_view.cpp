// HeatmapView: state, setters and the background jobs.
#include "ui/heatmap/heatmap_view.h"

#include <QFontMetrics>
#include <QFuture>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

#include "ui/heatmap/heatmap_render.h"
#include "ui/session/background.h"

namespace kcx::ui {

struct HeatmapView::Rendered {
    uint64_t gen = 0;
    bool cancelled = false;
    QString error;
    std::shared_ptr<const HeatmapIndex> index;
    std::shared_ptr<const HeatmapGrid> grid;
    QImage image;
    double lo = 0, hi = 1;
    bool log = false;
};

namespace {

struct IndexResult {
    uint64_t gen = 0;
    bool cancelled = false;
    QString error;
    std::shared_ptr<const HeatmapIndex> index;
};

// Whether a grid for `a` has the values of a grid for `b`: the threshold only matters to
// "share above" and the quantile to "quantile"; marks and the few-values line only decide
// how cells are drawn.
bool sameValues(const HeatmapRequest& a, const HeatmapRequest& b) {
    return a.row0 == b.row0 && a.row1 == b.row1 && a.rowBins == b.rowBins && a.pos0 == b.pos0 &&
           a.pos1 == b.pos1 && a.columns == b.columns && a.aggregate == b.aggregate && a.scope == b.scope &&
           (a.threshold == b.threshold || a.aggregate != HeatmapAggregate::ShareAbove) &&
           (a.quantile == b.quantile || a.aggregate != HeatmapAggregate::Quantile);
}

// A range of `width` (at least 1, at most total) starting near `start`, inside [0, total).
std::pair<size_t, size_t> fitRange(int64_t start, int64_t width, size_t total) {
    const int64_t t = int64_t(total);
    width = std::clamp<int64_t>(width, std::min<int64_t>(1, t), t);
    start = std::clamp<int64_t>(start, 0, t - width);
    return {size_t(start), size_t(start + width)};
}

}  // namespace

HeatmapView::HeatmapView(QWidget* parent)
    : QWidget(parent),
      indexGen_(std::make_shared<std::atomic<uint64_t>>(0)),
      renderGen_(std::make_shared<std::atomic<uint64_t>>(0)) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

HeatmapView::~HeatmapView() {
    // Running jobs see a newer generation, stop at their next chunk and are dropped.
    ++*indexGen_;
    ++*renderGen_;
}

void HeatmapView::setData(std::shared_ptr<const Run> run, std::shared_ptr<const MetricValues> values,
                          const QString& metric) {
    run_ = std::move(run);
    values_ = std::move(values);
    metric_ = metric;
    rebuildIndex();
}

void HeatmapView::setRowMode(const HeatmapRowSpec& spec, std::optional<std::pair<size_t, size_t>> positions) {
    spec_ = spec;
    pendingPositions_ = positions;
    rebuildIndex();
}

void HeatmapView::setStatistic(const CellStatistic& statistic) {
    if (statistic == stat_)
        return;
    stat_ = statistic;
    requestRender(true);
    update();   // the title
}

void HeatmapView::setAggregate(HeatmapAggregate aggregate) {
    CellStatistic s;
    s.aggregate = aggregate;
    s.threshold = stat_.threshold;
    s.name = QString::fromLatin1(aggregateName(aggregate));
    setStatistic(s);
}

void HeatmapView::setThreshold(double threshold) {
    CellStatistic s = stat_;
    s.threshold = threshold;
    setStatistic(s);
}

void HeatmapView::setColourScale(const ColourScale& scale) {
    if (scale == scale_)
        return;
    const bool onlyMap = ColourScale{scale_.map, scale.log, scale.autoRange, scale.lo, scale.hi} == scale_;
    scale_ = scale;
    if (onlyMap && !image_.isNull()) {
        // The levels stay; only the colour table changes.
        image_.setColorTable(colourTable(scale_.map));
        pixmap_ = QPixmap::fromImage(image_);
        update();
        return;
    }
    requestRender(true);
}

void HeatmapView::setView(size_t row0, size_t row1, size_t pos0, size_t pos1) {
    if (!index_)
        return;
    std::tie(row0, row1) = fitRange(int64_t(row0), int64_t(row1) - int64_t(row0), index_->rowCount());
    std::tie(pos0, pos1) = fitRange(int64_t(pos0), int64_t(pos1) - int64_t(pos0), index_->maxLength());
    if (row0 == row0_ && row1 == row1_ && pos0 == pos0_ && pos1 == pos1_)
        return;
    row0_ = row0;
    row1_ = row1;
    pos0_ = pos0;
    pos1_ = pos1;
    update();   // the cached image, moved; the new one follows
    requestRender(false);
}

void HeatmapView::resetView() {
    if (!index_)
        return;
    row0_ = 0;
    row1_ = index_->rowCount();
    pos0_ = 0;
    pos1_ = index_->maxLength();
    update();
    requestRender(false);
}

void HeatmapView::zoom(double factor, bool rows, double anchor) {
    if (!index_)
        return;
    const size_t a = rows ? row0_ : pos0_, b = rows ? row1_ : pos1_;
    const double w = double(b - a), nw = std::max(1.0, std::round(w / factor));
    const double start = double(a) + std::clamp(anchor, 0.0, 1.0) * (w - nw);
    const auto [na, nb] = fitRange(std::llround(start), int64_t(nw), rows ? index_->rowCount() : index_->maxLength());
    if (rows)
        setView(na, nb, pos0_, pos1_);
    else
        setView(row0_, row1_, na, nb);
}

void HeatmapView::pan(double dx, double dy) {
    if (!index_)
        return;
    const auto step = [](size_t a, size_t b, double f) {
        const double d = f * double(b - a);
        return int64_t(a) + (d > 0 ? std::max<int64_t>(1, std::llround(d)) : d < 0 ? std::min<int64_t>(-1, std::llround(d)) : 0);
    };
    const auto [r0, r1] = fitRange(step(row0_, row1_, dy), int64_t(row1_ - row0_), index_->rowCount());
    const auto [p0, p1] = fitRange(step(pos0_, pos1_, dx), int64_t(pos1_ - pos0_), index_->maxLength());
    setView(r0, r1, p0, p1);
}

void HeatmapView::rebuildIndex() {
    ++*indexGen_;   // the job in flight, if any, is stale (startIndexJob takes the new number)
    ++*renderGen_;   // a render of the old index is of no use any more
    if (!run_ || !values_) {
        index_.reset();
        grid_.reset();
        image_ = QImage();
        pixmap_ = QPixmap();
        indexRunning_ = false;
        update();
        return;
    }
    indexRunning_ = true;
    update();
    // The job starts once control is back in the event loop, so that the changes one user
    // action makes (a clause selected: its metric, then its slice key) build one index, not
    // one started and another that cancels it (both ran side by side for 50 ms).
    if (indexQueued_)
        return;
    indexQueued_ = true;
    QMetaObject::invokeMethod(this, &HeatmapView::startIndexJob, Qt::QueuedConnection);
}

void HeatmapView::startIndexJob() {
    indexQueued_ = false;
    if (!run_ || !values_ || !indexRunning_)
        return;
    const uint64_t gen = indexGen_->load();
    QtConcurrent::run(workPool(), [run = run_, values = values_, spec = spec_, derived = derived_, latest = indexGen_, gen] {
        lowerThreadPriority();
        const ForegroundWork foreground;
        IndexResult r;
        r.gen = gen;
        try {
            r.index = HeatmapIndex::build(run, values, spec, [&](double) { return latest->load() == gen; }, 0,
                                          derived);
        } catch (const Cancelled&) {
            r.cancelled = true;
        } catch (const std::exception& e) {
            r.error = QString::fromStdString(e.what());
        }
        return r;
    }).then(this, [this](IndexResult r) {
        if (r.gen != indexGen_->load())
            return;   // a newer index is on its way
        indexRunning_ = false;
        index_ = r.index;
        grid_.reset();
        image_ = QImage();
        pixmap_ = QPixmap();
        if (!r.error.isEmpty())
            emit failed(r.error);
        if (index_) {
            const QFontMetrics fm(font());
            int w = 0;
            for (size_t i = 0; i < index_->rowCount() && w < 180; ++i)
                w = std::max(w, fm.horizontalAdvance(QString::fromStdString(index_->row(i).label)));
            labelWidth_ = std::clamp(w, 24, 180) + 10;
        }
        resetView();
        if (index_ && pendingPositions_) {
            // A finding's position range: all its rows, zoomed to where it is.
            const auto [from, to] = *pendingPositions_;
            pendingPositions_.reset();
            if (from < index_->maxLength())
                setView(0, index_->rowCount(), from, std::min(to, index_->maxLength()));
        }
        update();
    });
}

QString HeatmapView::stateText() const {
    const QRect plot = plotRect();
    return QStringLiteral("index=%1 values=%2 image=%3 plot=%4x%5 visible=%6 pending=%7")
        .arg(bool(index_)).arg(bool(values_)).arg(!image_.isNull()).arg(plot.width()).arg(plot.height())
        .arg(isVisible()).arg(renderPending_);
}

void HeatmapView::requestRender(bool invalidatesRunning) {
    if (invalidatesRunning)
        ++*renderGen_;
    if (renderRunning_) {
        renderPending_ = true;
        return;
    }
    startRender();
}

void HeatmapView::startRender() {
    renderPending_ = false;
    const QRect plot = plotRect();
    if (!index_ || indexRunning_ || plot.width() <= 0 || plot.height() <= 0)
        return;   // (a new index starts its own render)
    HeatmapRequest req{row0_, row1_, size_t(plot.height()), pos0_, pos1_, size_t(plot.width()),
                       stat_.aggregate, stat_.threshold};
    req.quantile = stat_.quantile;
    req.mark = stat_.mark;
    req.markLevel = stat_.markLevel;
    req.scope = stat_.scope;
    // Few values only matter where a cell pools a slice's tokens: a sequence row's cell of
    // one position is that token's value, not an estimate.
    req.fewBelow = index_->sliceRows() ? stat_.fewBelow : 0;
    // A tail quantile of a slice needs many values per cell (1,000 for a p99.9): wider
    // position bins than pixels, so the map is not a field of hatching.
    req.widenForFew = req.aggregate == HeatmapAggregate::Quantile;
    // Only the colours or the marks changed: recolour the cached grid.
    auto reuse = grid_ && sameValues(grid_->request, req) ? grid_ : nullptr;
    const uint64_t gen = ++*renderGen_;
    renderRunning_ = true;
    QtConcurrent::run(workPool(), [index = index_, req, reuse, size = plot.size(), scale = scale_, latest = renderGen_, gen] {
        lowerThreadPriority();
        const ForegroundWork foreground;
        Rendered r;
        r.gen = gen;
        r.index = index;
        try {
            if (reuse && reuse->request.threshold == req.threshold && reuse->request.mark == req.mark &&
                reuse->request.markLevel == req.markLevel && reuse->request.fewBelow == req.fewBelow) {
                r.grid = reuse;
            } else if (reuse) {   // same values, other marks: a copy with the new request
                auto g = std::make_shared<HeatmapGrid>(*reuse);
                g->request = req;
                g->rowBins = reuse->rowBins;
                g->colBins = reuse->colBins;
                r.grid = std::move(g);
            } else {
                r.grid = std::make_shared<const HeatmapGrid>(
                    computeGrid(*index, req, [&](double) { return latest->load() == gen; }));
            }
            const auto [lo, hi] = colourRange(*r.grid, scale);
            const LevelMapper levels(lo, hi, scale.log);
            r.image = renderHeatmap(*r.grid, size, levels, scale.map);
            r.lo = levels.lo();
            r.hi = levels.hi();
            r.log = scale.log;
        } catch (const Cancelled&) {
            r.cancelled = true;
        } catch (const std::exception& e) {
            r.error = QString::fromStdString(e.what());
        }
        return r;
    }).then(this, [this](Rendered r) { finishRender(std::move(r)); });
}

void HeatmapView::finishRender(Rendered r) {
    renderRunning_ = false;
    if (!r.cancelled && r.gen == renderGen_->load() && r.index == index_) {
        if (!r.error.isEmpty()) {
            emit failed(r.error);
        } else {
            grid_ = std::move(r.grid);
            image_ = std::move(r.image);
            pixmap_ = QPixmap::fromImage(image_);
            shownLo_ = r.lo;
            shownHi_ = r.hi;
            shownLog_ = r.log;
            update();
            if (!renderPending_)
                emit rendered();
        }
    } else if (r.index == index_) {
        renderPending_ = true;   // dropped: render the current state
    }
    if (renderPending_)
        startRender();
}

void HeatmapView::resizeEvent(QResizeEvent*) {
    requestRender(false);
}

}  // namespace kcx::ui
