#include "ui/drilldown/metric_legend.h"

#include <QLinearGradient>
#include <QPainter>

#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {
constexpr int kBarWidth = 160;
constexpr int kSwatch = 14;
}  // namespace

MetricLegend::MetricLegend(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void MetricLegend::setLegend(const QString& name, const MetricColours& colours, int missing, int nonFinite) {
    name_ = name;
    colours_ = colours;
    missing_ = missing;
    nonFinite_ = nonFinite;
    setToolTip(name.isEmpty() ? QString()
                              : tr("Tokens are coloured by %1 over this sequence's range; hatched grey: not "
                                   "logged (missing); crossed red: NaN or infinite.")
                                    .arg(name));
    update();
}

QSize MetricLegend::sizeHint() const { return {kBarWidth + 520, fontMetrics().height() + 8}; }

void MetricLegend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QFontMetrics fm = fontMetrics();
    const int h = fm.height();
    const int y = (height() - h) / 2;
    int x = 0;
    auto text = [&](const QString& t) {
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(x, y, fm.horizontalAdvance(t) + 2, h), Qt::AlignVCenter, t);
        x += fm.horizontalAdvance(t) + 8;
    };
    if (name_.isEmpty()) {
        text(tr("No per-token metric chosen"));
        return;
    }
    text(name_ + QLatin1Char(':'));
    if (colours_.valid()) {
        text(formatValue(colours_.lo(), 3));
        QLinearGradient g(x, 0, x + kBarWidth, 0);
        for (int i = 0; i <= 8; ++i)
            g.setColorAt(i / 8.0, colours_.atFraction(i / 8.0));
        const QRect bar(x, y + 2, kBarWidth, h - 4);
        p.fillRect(bar, g);
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(bar.adjusted(0, 0, -1, -1));
        x += kBarWidth + 6;
        text(formatValue(colours_.hi(), 3));
    } else {
        text(tr("no finite values in this sequence"));
    }
    auto swatch = [&](const QBrush& b, const QString& label) {
        const QRect r(x, y + (h - kSwatch) / 2, kSwatch, kSwatch);
        p.fillRect(r, b);
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(r.adjusted(0, 0, -1, -1));
        x += kSwatch + 4;
        text(label);
    };
    x += 8;
    swatch(MetricColours::missingBrush(), tr("missing (%1)").arg(missing_));
    swatch(MetricColours::nonFiniteBrush(), tr("non-finite (%1)").arg(nonFinite_));
}

}  // namespace kcx::ui
