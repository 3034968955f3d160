// The bound chain panel (issue 4 item 6): the SPEC 5 chain of the latest evaluation as a
// table (BoundsModel), with the selected step's statement and explanation below. It
// follows Session::evaluated, so it changes as thresholds are edited.
#pragma once

#include <QWidget>

#include <memory>

#include "core/evaluate/evaluator.h"

class QLabel;
class QTableView;

namespace kcx::ui {

class BoundsModel;
class Session;
struct EvaluationSnapshot;

class BoundsPanel : public QWidget {
    Q_OBJECT
public:
    explicit BoundsPanel(QWidget* parent = nullptr);

    // Follows the session's evaluations (and shows its latest one at once).
    void setSession(Session* session);
    void setEvaluation(std::shared_ptr<const Evaluation> evaluation);

    BoundsModel* model() const { return model_; }
    QTableView* table() const { return table_; }

private:
    void showDetails(int row);

    BoundsModel* model_;
    QTableView* table_;
    QLabel* details_;
    std::shared_ptr<const Evaluation> evaluation_;
};

}  // namespace kcx::ui
