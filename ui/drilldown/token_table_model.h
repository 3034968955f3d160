// One row per token of one sequence: position, text, log ratio (lp_train - lp_inf, SPEC
// 2.1), one per-token metric (its cells coloured like the sequence view's token strip),
// p_train, p_inf (exp of the log-probs) and the token id. The log ratio comes first among
// the numbers: it is what a reader scans for, and it must not need horizontal scrolling.
#pragma once

#include <QAbstractTableModel>

#include <memory>

#include "core/formats/run.h"
#include "core/metrics/metrics.h"
#include "ui/style/metric_colours.h"

namespace kcx::ui {

class TokenTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Position, Text, LogRatio, Metric, PTrain, PInf, TokenId, ColumnCount };
    enum Role {
        ValueRole = Qt::UserRole,   // the raw number of a numeric column (NaN when it has none)
        SortRole,                   // like ValueRole, with no-value cells sorted first
        FlatIndexRole,              // the token's flat index in the run (qulonglong)
    };

    explicit TokenTableModel(QObject* parent = nullptr);

    void setSequence(std::shared_ptr<const Run> run, size_t seq);
    // A per-token metric (others are shown as empty) and the colours of its cells.
    void setMetric(std::shared_ptr<const MetricValues> values, const MetricColours& colours);
    void clear();

    const Run* run() const { return run_.get(); }
    size_t sequence() const { return seq_; }
    size_t flatIndex(int row) const { return begin_ + size_t(row); }
    double value(int row, int column) const;   // the number behind a numeric cell

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    bool hasMetric() const;
    QVariant display(int row, int column) const;

    std::shared_ptr<const Run> run_;
    std::shared_ptr<const MetricValues> metric_;
    MetricColours colours_;
    size_t seq_ = 0, begin_ = 0, count_ = 0;
};

}  // namespace kcx::ui
