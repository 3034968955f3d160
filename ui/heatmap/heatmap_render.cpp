#include "ui/heatmap/heatmap_render.h"

#include <algorithm>
#include <vector>

namespace kcx::ui {

std::pair<double, double> colourRange(const HeatmapGrid& grid, const ColourScale& scale) {
    if (!scale.autoRange)
        return {scale.lo, scale.hi};
    if (grid.request.aggregate == HeatmapAggregate::ShareAbove)
        return {0.0, grid.hi > 0 ? grid.hi : 1.0};
    if (!(grid.lo <= grid.hi))
        return {0.0, 1.0};
    if (scale.log && !(grid.lo > 0)) {
        // The smallest positive value starts a log scale.
        double lo = INFINITY;
        for (double v : grid.value)
            if (v > 0)
                lo = std::min(lo, v);
        return {std::isfinite(lo) ? lo : grid.hi * 1e-6, grid.hi};
    }
    return {grid.lo, grid.hi};
}

QImage renderHeatmap(const HeatmapGrid& grid, QSize size, const LevelMapper& levels, ColourMap map) {
    const size_t W = size_t(std::max(0, size.width())), H = size_t(std::max(0, size.height()));
    QImage img(int(W), int(H), QImage::Format_Indexed8);
    img.setColorTable(colourTable(map));
    if (W == 0 || H == 0)
        return img;
    if (grid.rows == 0 || grid.cols == 0) {
        img.fill(uint(kEmptyIndex));
        return img;
    }
    // Level of every cell, and for marked cells whether they are big enough to outline.
    std::vector<uint8_t> level(grid.rows * grid.cols), marked(grid.rows * grid.cols), few(grid.rows * grid.cols);
    for (size_t k = 0; k < level.size(); ++k) {
        level[k] = grid.n[k] ? levels.level(grid.value[k]) : uint8_t(kEmptyIndex);
        marked[k] = grid.n[k] && grid.marked(k / grid.cols, k % grid.cols);
        few[k] = grid.few(k / grid.cols, k % grid.cols);
    }
    std::vector<size_t> colOf(W), xlo(W), xhi(W);
    for (size_t x = 0; x < W; ++x) {
        const size_t c = std::min(cellOfPixel(x, W, grid.cols), grid.cols - 1);
        colOf[x] = c;
        xlo[x] = pixelOfCell(c, W, grid.cols);
        xhi[x] = pixelOfCell(c + 1, W, grid.cols);
    }
    for (size_t y = 0; y < H; ++y) {
        const size_t r = std::min(cellOfPixel(y, H, grid.rows), grid.rows - 1);
        const size_t ylo = pixelOfCell(r, H, grid.rows), yhi = pixelOfCell(r + 1, H, grid.rows);
        const bool rowEdge = y == ylo || y + 1 == yhi;
        uchar* line = img.scanLine(int(y));
        const uint8_t* lv = level.data() + r * grid.cols;
        const uint8_t* mk = marked.data() + r * grid.cols;
        const uint8_t* fw = few.data() + r * grid.cols;
        for (size_t x = 0; x < W; ++x) {
            const size_t c = colOf[x];
            uint8_t v = lv[c];
            // Few values: every other pixel of a checkerboard in the empty colour, so the
            // cell reads as faded without hiding its colour (marks still draw on top).
            if (fw[c] && (x + y) % 2 == 0)
                v = uint8_t(kEmptyIndex);
            if (mk[c]) {
                const bool big = xhi[x] - xlo[x] >= 6 && yhi - ylo >= 6;
                const bool edge = rowEdge || x == xlo[x] || x + 1 == xhi[x];
                if (big ? edge : (x + y) % 4 == 0)
                    v = uint8_t(kMarkerIndex);
            }
            line[x] = v;
        }
    }
    return img;
}

}  // namespace kcx::ui
