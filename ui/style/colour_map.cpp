#include "ui/style/colour_map.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace kcx::ui {

namespace {

using Poly = std::array<std::array<double, 3>, 7>;

// Degree-6 polynomial fits of matplotlib's viridis and inferno (CC0 fits published with
// the Shadertoy "colormap functions"); within about 1% of the tabulated colours.
constexpr Poly kViridis = {{{0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
                            {0.1050930431085774, 1.404613529898575, 1.384590162594685},
                            {-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
                            {-4.634230498983486, -5.799100973351585, -19.33244095627987},
                            {6.228269936347081, 14.17993336680509, 56.69055260068105},
                            {4.776384997670288, -13.74514537774601, -65.35303263337234},
                            {-5.435455855934631, 4.645852612178535, 26.3124352495832}}};
constexpr Poly kInferno = {{{0.0002189403691192265, 0.001651004631001012, -0.01948089843709184},
                            {0.1065134194856116, 0.5639564367884091, 3.932712388889277},
                            {11.60249308247187, -3.972853965665698, -15.9423941062914},
                            {-41.70399613139459, 17.43639888205313, 44.35414519872813},
                            {77.162935699427, -33.40235894210092, -81.80730925738993},
                            {-71.31942824499214, 32.62606426397723, 73.20951985803202},
                            {25.13112622477341, -12.24266895238567, -23.07032500287172}}};

int channel(double x) { return std::clamp(int(std::lround(x * 255.0)), 0, 255); }

QRgb polyColour(const Poly& p, double t) {
    double c[3];
    for (int k = 0; k < 3; ++k) {
        double acc = p[6][k];
        for (int d = 5; d >= 0; --d)
            acc = acc * t + p[d][k];
        c[k] = acc;
    }
    return qRgb(channel(c[0]), channel(c[1]), channel(c[2]));
}

}  // namespace

QList<QRgb> colourTable(ColourMap map) {
    QList<QRgb> t(256, qRgb(255, 255, 255));
    for (int i = 0; i < kLevels; ++i) {
        const double f = double(i) / double(kLevels - 1);
        switch (map) {
        case ColourMap::Viridis: t[i] = polyColour(kViridis, f); break;
        case ColourMap::Inferno: t[i] = polyColour(kInferno, f); break;
        case ColourMap::Greys: {
            const int g = channel(0.92 - 0.86 * f);   // light grey (low) to near black (high)
            t[i] = qRgb(g, g, g);
            break;
        }
        }
    }
    t[kEmptyIndex] = map == ColourMap::Greys ? qRgb(255, 255, 255) : qRgb(232, 232, 232);
    t[kMarkerIndex] = map == ColourMap::Inferno ? qRgb(0, 200, 255) : qRgb(230, 20, 60);
    return t;
}

QString colourMapName(ColourMap map) {
    switch (map) {
    case ColourMap::Viridis: return QStringLiteral("viridis");
    case ColourMap::Inferno: return QStringLiteral("inferno");
    case ColourMap::Greys: return QStringLiteral("greys");
    }
    return {};
}

LevelMapper::LevelMapper(double lo, double hi, bool log) : lo_(lo), hi_(hi), log_(log) {
    if (log_) {
        if (!(hi_ > 0))
            hi_ = 1;
        if (!(lo_ > 0) || lo_ >= hi_)
            lo_ = hi_ * 1e-6;
    }
    if (!(hi_ > lo_))
        hi_ = lo_ + (lo_ == 0 ? 1 : std::fabs(lo_) * 1e-9 + 1e-300);
    const double a = log_ ? std::log(lo_) : lo_, b = log_ ? std::log(hi_) : hi_;
    a_ = a;
    scale_ = double(kLevels) / (b - a);
}

uint8_t LevelMapper::level(double v) const {
    if (log_)
        v = v > 0 ? std::log(v) : -INFINITY;
    const double l = (v - a_) * scale_;
    if (!(l > 0))
        return 0;
    return uint8_t(std::min(l, double(kLevels - 1)));
}

double LevelMapper::valueAt(double fraction) const {
    const double f = a_ + fraction * double(kLevels) / scale_;
    return log_ ? std::exp(f) : f;
}

}  // namespace kcx::ui
