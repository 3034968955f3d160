// The contract panel: the clauses' results grouped by family (status, observed against
// threshold, action) and, for the selected clause, its thresholds to edit.
#pragma once

#include <QWidget>

class QLabel;
class QTreeView;
class QUndoStack;
class QComboBox;

namespace kcx {
struct Result;
}

namespace kcx::ui {

class Session;
class ResultsModel;
class ThresholdEditor;
struct EvaluationSnapshot;

class ContractPanel : public QWidget {
    Q_OBJECT
public:
    ContractPanel(Session* session, QUndoStack* undo, QWidget* parent = nullptr);

    ResultsModel* model() const { return model_; }
    QTreeView* view() const { return view_; }
    QString selectedClause() const;
    // The result on the selected row (a clause's row in one slice), or null.
    const Result* selectedResult() const;

public slots:
    void selectClause(const QString& clauseId);

signals:
    void clauseSelected(const QString& clauseId);

private:
    void showEvaluation(const EvaluationSnapshot& snapshot);
    void showContract();

    Session* session_;
    ResultsModel* model_;
    QTreeView* view_;
    ThresholdEditor* editor_;
    QLabel* header_;
    QComboBox* stage_;
};

}  // namespace kcx::ui
