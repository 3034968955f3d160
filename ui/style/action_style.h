// Text and contrast helpers for status and action colours (the colours themselves are
// status_style.h's: one look everywhere in the window).
#pragma once

#include <QColor>
#include <QString>

#include "core/contract/contract.h"
#include "ui/style/status_style.h"

namespace kcx::ui {

// Black or white, whichever reads better on `background`.
QColor textColourOn(const QColor& background);
QString actionLabel(Action action);
QString statusLabel(Status status);

}  // namespace kcx::ui
