#include "ui/drilldown/token_table_model.h"

#include <QBrush>

#include <cmath>
#include <limits>

#include "ui/style/plain_text.h"
#include "ui/style/action_style.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {
double probability(double logp) { return isMissing(logp) ? missingDouble() : std::exp(logp); }
}  // namespace

TokenTableModel::TokenTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TokenTableModel::setSequence(std::shared_ptr<const Run> run, size_t seq) {
    beginResetModel();
    run_ = std::move(run);
    seq_ = seq;
    if (run_ && seq < run_->sequenceCount()) {
        begin_ = run_->seqBegin(seq);
        count_ = run_->seqLength(seq);
    } else {
        begin_ = count_ = 0;
    }
    endResetModel();
}

void TokenTableModel::setMetric(std::shared_ptr<const MetricValues> values, const MetricColours& colours) {
    metric_ = std::move(values);
    colours_ = colours;
    emit headerDataChanged(Qt::Horizontal, Metric, Metric);
    if (count_ > 0)
        emit dataChanged(index(0, Metric), index(int(count_) - 1, Metric));
}

void TokenTableModel::clear() { setSequence(nullptr, 0); }

bool TokenTableModel::hasMetric() const {
    return metric_ && metric_->level == MetricLevel::Token && run_ && metric_->values.size() == run_->tokenCount();
}

int TokenTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(count_); }

int TokenTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

double TokenTableModel::value(int row, int column) const {
    const size_t i = flatIndex(row);
    switch (column) {
    case Position: return double(row);
    case TokenId: return double(run_->tokens[i]);
    case PTrain: return probability(run_->lpTrain[i]);
    case PInf: return probability(run_->lpInf[i]);
    case LogRatio: {
        const double a = run_->lpTrain[i], b = run_->lpInf[i];
        if (isMissing(a) || isMissing(b))
            return missingDouble();
        return a - b;
    }
    case Metric: return hasMetric() ? metric_->values[i] : missingDouble();
    default: return std::numeric_limits<double>::quiet_NaN();
    }
}

QVariant TokenTableModel::display(int row, int column) const {
    const size_t i = flatIndex(row);
    switch (column) {
    case Position: return row;
    case TokenId: return run_->tokens[i];
    case Text: return run_->hasText() ? escapeTokenText(run_->tokenText(i)) : QString();
    case LogRatio: return formatValue(value(row, column), 4);
    case Metric: return hasMetric() ? formatValue(value(row, column), 4) : QString();
    default: return formatValue(value(row, column), 6);
    }
}

QVariant TokenTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row(), col = index.column();
    switch (role) {
    case Qt::DisplayRole: return display(row, col);
    case ValueRole: return col == Text ? QVariant() : QVariant(value(row, col));
    case SortRole: {
        if (col == Text)
            return display(row, col);
        const double v = value(row, col);
        return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
    }
    case FlatIndexRole: return qulonglong(flatIndex(row));
    case Qt::TextAlignmentRole:
        return col == Text ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::BackgroundRole:
        if (col == Metric && hasMetric())
            return colours_.brush(value(row, col));
        return {};
    case Qt::ForegroundRole:
        if (col == Metric && hasMetric())
            return QBrush(textColourOn(colours_.colour(value(row, col))));
        return {};
    case Qt::ToolTipRole:
        if (col == Text && run_->hasText())
            return plainToolTip(tr("Token %1 of %2, id %3: \"%4\" (%5 bytes)")
                                    .arg(row)
                                    .arg(count_)
                                    .arg(run_->tokens[flatIndex(row)])
                                    .arg(escapeTokenText(run_->tokenText(flatIndex(row))))
                                    .arg(run_->tokenText(flatIndex(row)).size()));
        return {};
    default: return {};
    }
}

QVariant TokenTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Position: return tr("t");
        case TokenId: return tr("id");
        case Text: return tr("text");
        case PTrain: return tr("p_train");
        case PInf: return tr("p_inf");
        case LogRatio: return tr("log ratio");
        case Metric: return metric_ ? QString::fromStdString(metric_->name) : tr("metric");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Position: return tr("Position within the response (0-based)");
        case TokenId: return tr("The sampled token's id");
        case PTrain: return tr("exp(logp_train): the training kernel's probability of the sampled token");
        case PInf: return tr("exp(logp_inf): the inference kernel's probability of the sampled token");
        case LogRatio: return tr("r = logp_train - logp_inf");
        case Metric:
            if (metric_ && metric_->level != MetricLevel::Token)
                return tr("%1 is not a per-token metric").arg(QString::fromStdString(metric_->name));
            return tr("The metric the token strip is coloured by");
        }
    }
    return {};
}

}  // namespace kcx::ui
