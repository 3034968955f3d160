// The promotion view (issue 4 item 7): the contract's stages (offline_ci -> shadow ->
// canary -> full by default) as a row of boxes, each with the action that stage would take
// now (Evaluation::stageActions, coloured by strength), the current stage highlighted,
// and a table of the results that drive it (StageResultsModel). Clicking a result emits
// clauseActivated with its clause id.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

#include "core/evaluate/evaluator.h"

class QHBoxLayout;
class QLabel;
class QTableView;

namespace kcx::ui {

class Session;
class StageResultsModel;

class PromotionView : public QWidget {
    Q_OBJECT
public:
    explicit PromotionView(QWidget* parent = nullptr);
    ~PromotionView() override;

    // Follows the session's evaluations (and shows its latest one at once).
    void setSession(Session* session);
    // `contract` is the one the evaluation used (its escalation rules and stages).
    void setEvaluation(std::shared_ptr<const Contract> contract, std::shared_ptr<const Evaluation> evaluation);

    int stageCount() const { return int(boxes_.size()); }
    QString stageName(int i) const;
    StageResultsModel* stageModel(int i) const;
    QTableView* stageTable(int i) const;
    QString stageActionText(int i) const;
    bool isCurrentStage(int i) const;

signals:
    void clauseActivated(const QString& clauseId);

private:
    struct Box;
    void rebuildBoxes(const std::vector<std::string>& stages);
    void updateBox(Box& box, bool current);

    std::shared_ptr<const Contract> contract_;
    std::shared_ptr<const Evaluation> evaluation_;
    std::vector<std::unique_ptr<Box>> boxes_;
    QHBoxLayout* row_;
    QLabel* caption_;
};

}  // namespace kcx::ui
