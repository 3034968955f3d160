// The glue between the main window and the detail panels: creation and wiring in one
// place, so that the window's frame does not depend on each panel's API.
#pragma once

#include <QString>

#include <cstddef>
#include <optional>

#include "core/evaluate/evaluator.h"

class QUndoStack;
class QWidget;

namespace kcx::ui {

class Session;
class MainWindow;

QWidget* makeVerdictBanner(Session* session, QWidget* parent);
QWidget* makeChartsPanel(Session* session, QUndoStack* undo, QWidget* parent);
// The charts toolbar without its labels (a narrow window).
void panelsSetCompact(QWidget* charts, bool compact);
QWidget* makeSequencePanel(Session* session, QWidget* parent);
QWidget* makeBoundsPanel(Session* session, QWidget* parent);
QWidget* makePromotionPanel(Session* session, QWidget* parent);

// Wires the panels' signals to the window (clause activation, token selection).
void connectPanels(MainWindow* window, QWidget* charts, QWidget* sequence, QWidget* bounds, QWidget* promotion);
// Follows the selected clause in the panels that show one.
// With `slice`, the selected result's slice of the clause (charts show its tokens).
void panelsSelectClause(QWidget* charts, QWidget* promotion, const QString& clause,
                        const std::optional<SliceLabels>& slice = std::nullopt);
// Shows one sequence of the session's run in the drill-down, the metric as colour.
void showSequence(QWidget* sequencePanel, Session* session, const QString& metric, size_t sequence, size_t position);

}  // namespace kcx::ui
