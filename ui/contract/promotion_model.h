// Which results drive a promotion stage's action: for every non-pass result, the action
// its escalation rule (kcx::escalate, first matching rule wins) takes at that stage.
// Results whose action there is `pass` (a rule that waves them through) are not listed.
#pragma once

#include <QAbstractTableModel>

#include <memory>
#include <string>
#include <vector>

#include "core/evaluate/evaluator.h"

namespace kcx::ui {

struct StageDriver {
    size_t result = 0;      // index into Evaluation::results
    Action action = Action::Pass;
    bool strongest = false; // its action is the stage's action
};

// Strongest action first, then in the order of the results.
std::vector<StageDriver> stageDrivers(const Contract& contract, const Evaluation& evaluation,
                                      const std::string& stage);
// "task=math, precision=fp8", or empty for a result without slice.
QString resultSliceText(const Result& result);

class StageResultsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ClauseColumn, SliceColumn, StatusColumn, ActionColumn, ColumnCount };
    enum Role { ClauseRole = Qt::UserRole, ResultIndexRole };

    explicit StageResultsModel(QObject* parent = nullptr);

    void setStage(std::shared_ptr<const Contract> contract, std::shared_ptr<const Evaluation> evaluation,
                  const std::string& stage);
    const std::string& stage() const { return stage_; }
    const std::vector<StageDriver>& drivers() const { return drivers_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Contract> contract_;
    std::shared_ptr<const Evaluation> evaluation_;
    std::string stage_;
    std::vector<StageDriver> drivers_;
};

}  // namespace kcx::ui
