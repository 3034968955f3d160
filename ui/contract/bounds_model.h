// The bound chain of SPEC 5 as a table: one row per BoundStep (core/evaluate/bounds.h) with its
// input and where it came from, its assumption, the bound, the observed value beside
// it, and a flag column that reads "vacuous" exactly for vacuous steps ("exceeds clip" /
// "within clip" for the PPO step, "no bound" when the run cannot supply the input).
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "core/evaluate/bounds.h"

namespace kcx::ui {

// Short name, and a paragraph explaining a step (docs/bounds.md), by BoundStep::step.
QString boundStepName(const std::string& step);
QString boundStepHelp(const std::string& step);

class BoundsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Step, Input, InputFrom, Assumption, Bound, Observed, ObservedAs, Flag, ColumnCount };
    enum Role {
        ValueRole = Qt::UserRole,   // Input/Bound/Observed as double (invalid when absent)
        VacuousRole,                // bool, every column
    };

    explicit BoundsModel(QObject* parent = nullptr);

    void setSteps(std::vector<BoundStep> steps);
    const std::vector<BoundStep>& steps() const { return steps_; }
    static QString flagText(const BoundStep& s);
    static QString boundText(const BoundStep& s);
    // True when the observed value lies above the bound (the assumption fails for this run).
    static bool observedAboveBound(const BoundStep& s);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const BoundStep& s, int column) const;
    QVariant toolTip(const BoundStep& s, int column) const;
    std::vector<BoundStep> steps_;
};

}  // namespace kcx::ui
