// Spin boxes and sliders for the thresholds of one clause. Every change goes through the
// undo stack as a ThresholdCommand; one slider drag, or one stretch of typing in a spin
// box, is one undo step.
#pragma once

#include <QWidget>

#include <string>
#include <vector>

class QUndoStack;
class QFormLayout;
class QLabel;

namespace kcx::ui {

class Session;

class ThresholdEditor : public QWidget {
    Q_OBJECT
public:
    ThresholdEditor(Session* session, QUndoStack* undo, QWidget* parent = nullptr);
    ~ThresholdEditor() override;

    void setClause(const QString& clauseId);   // empty: nothing to edit
    QString clause() const { return clause_; }

private:
    struct Row;
    void rebuild();
    void refreshValues();
    void push(Row& row, double value);

    Session* session_;
    QUndoStack* undo_;
    QString clause_;
    QFormLayout* form_;
    QLabel* title_;
    std::vector<Row*> rows_;
};

}  // namespace kcx::ui
