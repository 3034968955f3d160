// Turning a heatmap grid into an indexed 8-bit image. Safe to call off the GUI thread.
#pragma once

#include <QImage>
#include <QSize>

#include <optional>
#include <utility>

#include "core/heatmap/heatmap.h"
#include "ui/style/colour_map.h"

namespace kcx::ui {

// The value range the colours span for this grid and scale (see ColourScale).
std::pair<double, double> colourRange(const HeatmapGrid& grid, const ColourScale& scale);

// Grid cell c covers image columns [ceil(c*W/cols), ceil((c+1)*W/cols)); image column x
// shows cell x*cols/W (rows alike). So a grid reduced to the image size maps 1:1.
inline size_t cellOfPixel(size_t x, size_t pixels, size_t cells) { return pixels ? x * cells / pixels : 0; }
inline size_t pixelOfCell(size_t c, size_t pixels, size_t cells) {
    return cells ? (c * pixels + cells - 1) / cells : 0;
}

// Renders `size` pixels: each pixel takes its cell's level (kEmptyIndex when empty).
// Cells breaking the threshold (HeatmapGrid::marked) get a kMarkerIndex outline when at least
// 6 x 6 pixels, else a diagonal hatch (every 4th diagonal). Cells resting on few values
// (HeatmapGrid::few) are faded: half their pixels, a checkerboard, take the empty colour.
QImage renderHeatmap(const HeatmapGrid& grid, QSize size, const LevelMapper& levels, ColourMap map);

}  // namespace kcx::ui
