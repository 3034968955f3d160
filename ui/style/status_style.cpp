#include "ui/style/status_style.h"

#include <array>

#include <QPainter>
#include <QPixmap>

namespace kcx::ui {

QColor statusColour(Status s) {
    switch (s) {
    case Status::Pass: return QColor(0x2e, 0x9e, 0x4f);
    case Status::Fail: return QColor(0xd6, 0x3b, 0x30);
    case Status::Inconclusive: return QColor(0xe0, 0x9b, 0x1a);
    case Status::Error: return QColor(0x80, 0x80, 0x88);
    }
    return Qt::gray;
}

int statusRank(Status s) {
    switch (s) {
    case Status::Pass: return 0;
    case Status::Inconclusive: return 1;
    case Status::Error: return 2;
    case Status::Fail: return 3;
    }
    return 0;
}

namespace {

QIcon drawStatusIcon(Status s) {
    // Colour and shape both carry the status (readable without colour vision).
    QIcon icon;
    for (int size : {16, 32}) {
        QPixmap pm(size, size);
        pm.fill(Qt::transparent);
        QPainter p(&pm);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(Qt::NoPen);
        p.setBrush(statusColour(s));
        const qreal m = size * 0.06;
        p.drawEllipse(QRectF(m, m, size - 2 * m, size - 2 * m));
        QPen pen(Qt::white, size * 0.13, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
        p.setPen(pen);
        const qreal a = size * 0.3, b = size * 0.7, c = size * 0.5;
        switch (s) {
        case Status::Pass: p.drawPolyline(QPolygonF({QPointF(a, c), QPointF(size * 0.45, b - size * 0.05), QPointF(b, a)})); break;
        case Status::Fail: p.drawLine(QPointF(a, a), QPointF(b, b)); p.drawLine(QPointF(a, b), QPointF(b, a)); break;
        case Status::Inconclusive: p.drawLine(QPointF(a, c), QPointF(b, c)); break;
        case Status::Error: p.drawPoint(QPointF(c, c)); break;
        }
        p.end();
        icon.addPixmap(pm);
    }
    return icon;
}

}  // namespace

QIcon statusIcon(Status s) {
    // Drawn once per status (the results table asks for them on every repaint).
    static const std::array<QIcon, 4> icons{drawStatusIcon(Status::Pass), drawStatusIcon(Status::Fail),
                                            drawStatusIcon(Status::Inconclusive), drawStatusIcon(Status::Error)};
    return icons[size_t(s)];
}

QColor actionColour(Action a) {
    switch (a) {
    case Action::Pass: return QColor(0x2e, 0x9e, 0x4f);
    case Action::Warn: return QColor(0x9a, 0xb0, 0x3a);
    case Action::Hold: return QColor(0xe0, 0x9b, 0x1a);
    case Action::ShadowOnly: return QColor(0xe0, 0x7b, 0x1a);
    case Action::RouteToReference: return QColor(0xd9, 0x5f, 0x2a);
    case Action::BlockPromotion: return QColor(0xd6, 0x3b, 0x30);
    case Action::Rollback: return QColor(0x9c, 0x1f, 0x4a);
    }
    return Qt::gray;
}

}  // namespace kcx::ui
