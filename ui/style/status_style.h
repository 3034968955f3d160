// One look for statuses and actions everywhere in the window.
#pragma once

#include <QColor>
#include <QIcon>

#include "core/contract/contract.h"

namespace kcx::ui {

QColor statusColour(Status s);          // pass green, fail red, inconclusive amber, error grey
QIcon statusIcon(Status s);             // a filled disc in the status colour, with a glyph
int statusRank(Status s);               // pass < inconclusive < error < fail
QColor actionColour(Action a);          // from calm (pass) to alarming (rollback)

}  // namespace kcx::ui
