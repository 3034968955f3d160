#include "ui/drilldown/token_strip.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

#include "ui/style/plain_text.h"
#include "ui/style/action_style.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {
constexpr int kPad = 4;           // text padding inside a cell
constexpr int kMinCell = 14;
constexpr int kMaxCell = 180;     // longer texts are elided
constexpr int kGap = 1;
}  // namespace

TokenStrip::TokenStrip(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    x_ = {0};
}

void TokenStrip::setTokens(QStringList texts, std::vector<double> values, const MetricColours& colours,
                           bool coloured) {
    texts_ = std::move(texts);
    values_ = std::move(values);
    values_.resize(size_t(texts_.size()), missingDouble());
    colours_ = colours;
    coloured_ = coloured;
    selected_ = -1;
    layoutCells();
    update();
}

void TokenStrip::layoutCells() {
    const QFontMetrics fm(font());
    x_.assign(1, 0);
    x_.reserve(size_t(texts_.size()) + 1);
    for (const QString& t : texts_) {
        // +2: horizontalAdvance rounds, and elidedText must not cut a text that fits.
        const int w = std::clamp(fm.horizontalAdvance(t) + 2 * kPad + 2, kMinCell, kMaxCell);
        x_.push_back(x_.back() + w + kGap);
    }
    resize(sizeHint());
    updateGeometry();
}

int TokenStrip::cellHeight() const { return fontMetrics().height() + 2 * kPad; }

QSize TokenStrip::sizeHint() const {
    const int labels = QFontMetrics(font()).height();
    return {std::max(x_.back(), 40), cellHeight() + labels + 8};
}

QRect TokenStrip::tokenRect(int position) const {
    if (position < 0 || position >= count())
        return {};
    return QRect(x_[size_t(position)], 1, x_[size_t(position) + 1] - x_[size_t(position)] - kGap, cellHeight());
}

int TokenStrip::positionAt(QPoint p) const {
    if (p.y() < 0 || p.y() > cellHeight() || count() == 0)
        return -1;
    const auto it = std::upper_bound(x_.begin(), x_.end(), p.x());
    const int i = int(it - x_.begin()) - 1;
    return (i >= 0 && i < count()) ? i : -1;
}

void TokenStrip::setSelected(int position) {
    selected_ = (position >= 0 && position < count()) ? position : -1;
    update();
}

void TokenStrip::paintEvent(QPaintEvent* event) {
    QPainter p(this);
    const QRect clip = event->rect();
    const int first = std::max(0, positionAt(QPoint(clip.left(), 1)));
    const QFontMetrics fm(font());
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.8);
    for (int i = first; i < count(); ++i) {
        const QRect r = tokenRect(i);
        if (r.left() > clip.right())
            break;
        const double v = values_[size_t(i)];
        const QColor bg = coloured_ ? colours_.colour(v) : palette().color(QPalette::AlternateBase);
        p.fillRect(r, coloured_ ? colours_.brush(v) : QBrush(bg));
        p.setPen(coloured_ ? textColourOn(bg) : palette().color(QPalette::Text));
        p.drawText(r.adjusted(kPad, 0, -kPad, 0), Qt::AlignCenter,
                   fm.elidedText(texts_[i], Qt::ElideRight, r.width() - 2 * kPad));
        if (i == selected_) {   // a dark frame with a light inner line reads on every colour
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(Qt::black, 2));
            p.drawRect(r.adjusted(1, 1, -1, -1));
            p.setPen(QPen(Qt::white, 1));
            p.drawRect(r.adjusted(2, 2, -3, -3));
            p.fillRect(QRect(r.left(), r.bottom() + 2, r.width(), 3), palette().color(QPalette::Highlight));
        }
        if (i % 10 == 0) {
            p.setFont(small);
            p.setPen(palette().color(QPalette::PlaceholderText));
            p.drawText(QPoint(r.left() + 1, r.bottom() + 4 + fm.height()), QString::number(i));
            p.setFont(font());
        }
    }
}

void TokenStrip::mousePressEvent(QMouseEvent* event) {
    const int i = positionAt(event->position().toPoint());
    if (event->button() == Qt::LeftButton && i >= 0) {
        setSelected(i);
        emit tokenClicked(i);
    }
    QWidget::mousePressEvent(event);
}

void TokenStrip::keyPressEvent(QKeyEvent* event) {
    const int step = event->key() == Qt::Key_Left ? -1 : event->key() == Qt::Key_Right ? 1 : 0;
    if (step == 0 || count() == 0)
        return QWidget::keyPressEvent(event);
    const int next = std::clamp(selected_ < 0 ? 0 : selected_ + step, 0, count() - 1);
    setSelected(next);
    emit tokenClicked(next);
}

void TokenStrip::changeEvent(QEvent* event) {
    if (event->type() == QEvent::FontChange)
        layoutCells();
    QWidget::changeEvent(event);
}

bool TokenStrip::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int i = positionAt(help->pos());
        if (i < 0) {
            QToolTip::hideText();
            return true;
        }
        QString tip = tr("t = %1: %2").arg(i).arg(texts_[i]);
        if (coloured_)
            tip += tr("\nvalue: %1").arg(formatValue(values_[size_t(i)]));
        QToolTip::showText(help->globalPos(), plainToolTip(tip), this);
        return true;
    }
    return QWidget::event(event);
}

}  // namespace kcx::ui
