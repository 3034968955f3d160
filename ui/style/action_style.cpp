#include "ui/style/action_style.h"

namespace kcx::ui {

QColor textColourOn(const QColor& background) {
    // Relative luminance with the sRGB weights, on the gamma-encoded values (good enough).
    const double y = 0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF();
    return y > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

QString actionLabel(Action action) { return QString::fromLatin1(actionName(action)); }
QString statusLabel(Status status) { return QString::fromLatin1(statusName(status)); }

}  // namespace kcx::ui
