// Colour maps for indexed 8-bit images: kLevels colours for values, then one colour for
// empty cells and one for threshold markers.
#pragma once

#include <QList>
#include <QString>
#include <QtGui/qrgb.h>

#include <cstdint>

namespace kcx::ui {

enum class ColourMap { Viridis, Inferno, Greys };

inline constexpr int kLevels = 252;        // indices 0 .. kLevels-1: low .. high value
inline constexpr int kEmptyIndex = 252;    // a cell without values
inline constexpr int kMarkerIndex = 253;   // outline/hatch of a cell above the threshold

// How values become colours. With autoRange the range is that of the cells in view
// ([0, largest] for "share above"); otherwise [lo, hi]. Values outside are clamped.
// A log scale maps values <= 0 to the lowest colour.
struct ColourScale {
    ColourMap map = ColourMap::Viridis;
    bool log = false;
    bool autoRange = true;
    double lo = 0, hi = 1;
    bool operator==(const ColourScale&) const = default;
};

QList<QRgb> colourTable(ColourMap map);   // 256 entries
QString colourMapName(ColourMap map);

// Maps a value to a level in [0, kLevels) over [lo, hi], linear or log.
class LevelMapper {
public:
    LevelMapper(double lo, double hi, bool log);
    uint8_t level(double v) const;
    double valueAt(double fraction) const;   // inverse: fraction 0 = lo, 1 = hi
    double lo() const { return lo_; }
    double hi() const { return hi_; }
    bool log() const { return log_; }

private:
    double lo_, hi_;
    bool log_;
    double a_ = 0, scale_ = 0;   // level = (f(v) - a) * scale
};

}  // namespace kcx::ui
