// The contract's results, grouped by family: a two-level tree (family → result), one
// result per clause, or per slice for a per_slice clause.
#pragma once

#include <QAbstractItemModel>

#include <memory>
#include <vector>

#include "core/evaluate/evaluator.h"

namespace kcx::ui {

class ResultsModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { ClauseCol, SliceCol, StatusCol, ObservedCol, BoundCol, ThresholdCol, ActionCol, NCol, SubjectCol, kColumns };
    enum Role { ClauseIdRole = Qt::UserRole + 1, StatusRole, FamilyRole };

    explicit ResultsModel(QObject* parent = nullptr);

    // Replaces the results; rows that stay (same clause and slice) keep their identity, so
    // a view's selection and scroll position survive a re-evaluation.
    void setEvaluation(std::shared_ptr<const Evaluation> evaluation);
    std::shared_ptr<const Evaluation> evaluation() const { return clausesOnly_ ? nullptr : evaluation_; }
    // Before a run is checked: one row per clause, "not checked" (so that the contract can
    // be read and its thresholds edited without a run). evaluation() is null meanwhile.
    void setClausesOnly(const Contract& contract);
    bool clausesOnly() const { return clausesOnly_; }
    const Result* resultAt(const QModelIndex& index) const;
    QModelIndex indexOfClause(const QString& clause) const;   // its first result

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static QString formatNumber(double v);
    static QString thresholdText(const Result& r);
    static QString boundText(const Result& r);   // Wilson upper bound or bootstrap interval
    // A numerical quantile's interval (Result::ci): "[0.011, 0.024]", "[0.24, ∞)"; else empty.
    static QString quantileIntervalText(const Result& r);
    // For the Observed cell's tooltip: what the interval is, why a side is missing, and how
    // many values lie beyond the thresholds ("3 of 48 values above max 0.2"); else empty.
    static QString quantileDetails(const Result& r);
    static QString sliceText(const Result& r);

private:
    QVariant groupData(int family, int column, int role) const;
    QVariant resultData(const Result& r, int column, int role) const;
    QString resultToolTip(const Result& r, int column) const;
    QVariant resultDisplay(const Result& r, int column) const;

    std::shared_ptr<const Evaluation> evaluation_;
    bool clausesOnly_ = false;
    std::vector<std::vector<int>> groups_;   // per family: indices into results
};

}  // namespace kcx::ui
