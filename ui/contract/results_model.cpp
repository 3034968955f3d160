#include "ui/contract/results_model.h"

#include <QColor>
#include <QIcon>

#include <cmath>
#include <utility>

#include "core/metrics/quantile_ci.h"
#include "ui/style/metric_help.h"
#include "ui/style/plain_text.h"
#include "ui/style/status_style.h"

namespace kcx::ui {

namespace {
constexpr int kFamilies = 4;
constexpr quintptr kTop = 0;   // internalId of a family row; a result row has family + 1
}  // namespace

ResultsModel::ResultsModel(QObject* parent) : QAbstractItemModel(parent), groups_(kFamilies) {}

void ResultsModel::setEvaluation(std::shared_ptr<const Evaluation> evaluation) {
    std::vector<std::vector<int>> groups(kFamilies);
    if (evaluation)
        for (size_t i = 0; i < evaluation->results.size(); ++i)
            groups[size_t(evaluation->results[i].family)].push_back(int(i));
    // Same shape (the usual case after a threshold edit): change the data in place.
    const bool wasClausesOnly = std::exchange(clausesOnly_, false);
    bool sameShape = !wasClausesOnly && evaluation_ && evaluation && groups == groups_;
    if (sameShape)
        for (size_t i = 0; i < evaluation->results.size(); ++i)
            if (evaluation->results[i].clause != evaluation_->results[i].clause ||
                evaluation->results[i].slice != evaluation_->results[i].slice)
                sameShape = false;
    if (sameShape) {
        // Only the rows whose text changed are announced: the view repaints (and lays
        // out the text of) those rows alone, not the whole table on every edit.
        auto rowText = [this](const Result& r) {
            QStringList t;
            for (int c = 0; c < kColumns; ++c)
                t << resultData(r, c, Qt::DisplayRole).toString() << resultToolTip(r, c);
            t << QString::number(int(r.status));
            return t;
        };
        const auto old = std::move(evaluation_);
        evaluation_ = std::move(evaluation);
        for (int f = 0; f < kFamilies; ++f) {
            const auto& g = groups_[size_t(f)];
            bool any = false;
            for (size_t row = 0; row < g.size(); ++row) {
                const size_t i = size_t(g[row]);
                if (rowText(old->results[i]) == rowText(evaluation_->results[i]))
                    continue;
                any = true;
                emit dataChanged(index(int(row), 0, index(f, 0)), index(int(row), kColumns - 1, index(f, 0)));
            }
            if (any)   // the family row counts statuses
                emit dataChanged(index(f, 0), index(f, kColumns - 1));
        }
        return;
    }
    beginResetModel();
    evaluation_ = std::move(evaluation);
    groups_ = std::move(groups);
    endResetModel();
}

const Result* ResultsModel::resultAt(const QModelIndex& idx) const {
    if (!idx.isValid() || idx.internalId() == kTop || !evaluation_)
        return nullptr;
    const auto& g = groups_[size_t(idx.internalId() - 1)];
    return idx.row() < int(g.size()) ? &evaluation_->results[size_t(g[size_t(idx.row())])] : nullptr;
}

QModelIndex ResultsModel::indexOfClause(const QString& clause) const {
    if (!evaluation_)
        return {};
    for (int f = 0; f < kFamilies; ++f)
        for (size_t r = 0; r < groups_[size_t(f)].size(); ++r)
            if (QString::fromStdString(evaluation_->results[size_t(groups_[size_t(f)][r])].clause) == clause)
                return index(int(r), 0, index(f, 0));
    return {};
}

QModelIndex ResultsModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= kColumns)
        return {};
    if (!parent.isValid())
        return row < kFamilies ? createIndex(row, column, kTop) : QModelIndex();
    if (parent.internalId() != kTop || parent.column() != 0)
        return {};
    if (row >= int(groups_[size_t(parent.row())].size()))
        return {};
    return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex ResultsModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == kTop)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kTop);
}

int ResultsModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return kFamilies;
    if (parent.internalId() == kTop && parent.column() == 0)
        return int(groups_[size_t(parent.row())].size());
    return 0;
}

int ResultsModel::columnCount(const QModelIndex&) const { return kColumns; }

QVariant ResultsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* names[kColumns] = {"Clause", "Slice", "Status", "Observed", "Bound", "Threshold", "Action", "n", "Metric"};
    return tr(names[section]);
}

QVariant ResultsModel::data(const QModelIndex& idx, int role) const {
    if (!idx.isValid())
        return {};
    if (idx.internalId() == kTop)
        return groupData(idx.row(), idx.column(), role);
    const Result* r = resultAt(idx);
    return r ? resultData(*r, idx.column(), role) : QVariant();
}

QVariant ResultsModel::groupData(int family, int column, int role) const {
    const auto& g = groups_[size_t(family)];
    // A family's status is its worst result's.
    Status worst = Status::Pass;
    for (int i : g) {
        const Status s = evaluation_->results[size_t(i)].status;
        if (statusRank(s) > statusRank(worst))
            worst = s;
    }
    if (role == FamilyRole)
        return family;
    if (role == StatusRole)
        return g.empty() ? QVariant() : QVariant(int(worst));
    if (column == ClauseCol && role == Qt::DisplayRole)
        return tr("%1 (%2)").arg(QString(familyName(Family(family))), QString::number(g.size()));
    if (column == ClauseCol && role == Qt::DecorationRole && !g.empty())
        return statusIcon(worst);
    return {};
}

void ResultsModel::setClausesOnly(const Contract& contract) {
    auto placeholder = std::make_shared<Evaluation>();
    for (const Clause& c : contract.clauses) {
        Result r;
        r.clause = c.id;
        r.family = c.family;
        r.metric = !c.metric.empty() ? c.metric : c.field;
        r.aggregate = c.aggregate ? c.aggregate->text : std::string();
        r.max = c.max ? std::optional<double>(c.max->value) : std::nullopt;
        r.min = c.min ? std::optional<double>(c.min->value) : std::nullopt;
        r.message = "not checked: no run is loaded";
        placeholder->results.push_back(std::move(r));
    }
    std::vector<std::vector<int>> groups(kFamilies);
    for (size_t i = 0; i < placeholder->results.size(); ++i)
        groups[size_t(placeholder->results[i].family)].push_back(int(i));
    beginResetModel();
    evaluation_ = std::move(placeholder);
    groups_ = std::move(groups);
    clausesOnly_ = true;
    endResetModel();
}

QVariant ResultsModel::resultData(const Result& r, int column, int role) const {
    if (clausesOnly_ && (column == StatusCol || column == ActionCol)) {
        if (role == Qt::DisplayRole)
            return column == StatusCol ? tr("not checked") : QString();
        if (role == Qt::ForegroundRole)
            return QColor(Qt::gray);
        if (role != Qt::ToolTipRole && role != ClauseIdRole && role != FamilyRole)
            return {};
    }
    switch (role) {
    case ClauseIdRole:
        return QString::fromStdString(r.clause);
    case StatusRole:
        return int(r.status);
    case FamilyRole:
        return int(r.family);
    case Qt::ToolTipRole:
        return plainToolTip(resultToolTip(r, column));
    case Qt::DecorationRole:
        return column == StatusCol ? QVariant(statusIcon(r.status)) : QVariant();
    case Qt::ForegroundRole:
        return column == StatusCol ? QVariant(statusColour(r.status).darker(140)) : QVariant();
    case Qt::TextAlignmentRole:
        return (column == ObservedCol || column == BoundCol || column == ThresholdCol || column == NCol)
                   ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    return resultDisplay(r, column);
}

// Messages name clauses and slice values, which come from files: the tooltip shows them
// as text (plainToolTip), never as markup.
QString ResultsModel::resultToolTip(const Result& r, int column) const {
    {
        if (column == BoundCol && !boundText(r).isEmpty())
            return tr("%1 at confidence %2").arg(r.upper ? tr("One-sided Wilson upper bound of the exceedance share")
                                                        : tr("Percentile bootstrap interval of the mean"))
                .arg(r.confidence ? formatNumber(*r.confidence) : QStringLiteral("?"));
        if (column == ObservedCol && r.family == Family::Numerical && r.ci)
            return QString::fromStdString(r.message) + QLatin1Char('\n') + quantileDetails(r);
        if ((column == ClauseCol || column == SubjectCol) && !r.metric.empty()) {
            const QString meaning = metricMeaning(QString::fromStdString(r.metric));
            if (!meaning.isEmpty())
                return QString::fromStdString(r.message) + QStringLiteral("\n\n") + meaning;
        }
        return QString::fromStdString(r.message);
    }
}

QVariant ResultsModel::resultDisplay(const Result& r, int column) const {
    switch (column) {
    case ClauseCol:
        return QString::fromStdString(r.clause);
    case SliceCol:
        return sliceText(r);
    case SubjectCol:
        return r.aggregate.empty() ? QString::fromStdString(r.metric)
                                   : QStringLiteral("%1 %2").arg(QString::fromStdString(r.aggregate), QString::fromStdString(r.metric));
    case ObservedCol:
        return r.observed ? formatNumber(*r.observed) : QStringLiteral("–");
    case BoundCol:
        return boundText(r);
    case ThresholdCol:
        return thresholdText(r);
    case NCol:
        return QString::number(r.n);
    case StatusCol:
        return QString(statusName(r.status));
    case ActionCol:
        return QString(actionName(r.action));
    }
    return {};
}

QString ResultsModel::formatNumber(double v) { return QString::number(v, 'g', 4); }

QString ResultsModel::thresholdText(const Result& r) {
    QString t;
    if (r.min && r.max)
        t = QStringLiteral("[%1, %2]").arg(formatNumber(*r.min), formatNumber(*r.max));
    else if (r.max)
        t = QStringLiteral("≤ %1").arg(formatNumber(*r.max));
    else if (r.min)
        t = QStringLiteral("≥ %1").arg(formatNumber(*r.min));
    return t;
}

QString ResultsModel::boundText(const Result& r) {
    if (r.upper)
        return QStringLiteral("≤ %1").arg(formatNumber(*r.upper));
    if (r.ci && r.family == Family::Statistical)   // a numerical quantile's interval decides nothing
        return QStringLiteral("[%1, %2]").arg(formatNumber(r.ci->first), formatNumber(r.ci->second));
    return {};
}

QString ResultsModel::quantileIntervalText(const Result& r) {
    if (!r.ci || r.family != Family::Numerical)
        return {};
    const auto [lo, hi] = *r.ci;
    const QString left = std::isfinite(lo) ? QStringLiteral("[") + formatNumber(lo) : QStringLiteral("(−∞");
    const QString right = std::isfinite(hi) ? formatNumber(hi) + QStringLiteral("]") : QStringLiteral("∞)");
    return left + QStringLiteral(", ") + right;
}

QString ResultsModel::quantileDetails(const Result& r) {
    const QString interval = quantileIntervalText(r);
    if (interval.isEmpty())
        return {};
    const QString what = QString::fromStdString(r.aggregate);
    const QString conf = formatNumber(100 * r.confidence.value_or(kQuantileIntervalConfidence));
    QStringList lines;
    lines << tr("%1 % interval of the true %2: %3 (two order statistics, whatever the distribution; "
                "the status compares the observed value only)").arg(conf, what, interval);
    const auto agg = parseAggregate(r.aggregate);
    const double q = !agg ? 0.5 : agg->kind == Aggregate::Kind::Max ? 1 : agg->kind == Aggregate::Kind::Min ? 0 : agg->q;
    for (const bool upper : {false, true}) {
        if (std::isfinite(upper ? r.ci->second : r.ci->first))
            continue;
        const auto need = quantileIntervalMinCount(q, upper, r.confidence.value_or(kQuantileIntervalConfidence));
        const QString side = upper ? tr("upper") : tr("lower");
        if (need)
            lines << tr("No %1 bound: the %2 needs at least %3 values for one (here %4).")
                         .arg(side, what, QString::number(*need), QString::number(r.n));
        else
            lines << tr("No %1 bound: no number of values bounds the %2 from %3 without assumptions.")
                         .arg(side, what, upper ? tr("above") : tr("below"));
    }
    if (r.beyond) {
        QString where;
        if (r.min && r.max)
            where = tr("outside [%1, %2]").arg(formatNumber(*r.min), formatNumber(*r.max));
        else if (r.max)
            where = tr("above max %1").arg(formatNumber(*r.max));
        else if (r.min)
            where = tr("below min %1").arg(formatNumber(*r.min));
        if (!where.isEmpty())
            lines << tr("%1 of %2 values %3").arg(QString::number(*r.beyond), QString::number(r.n), where);
    }
    return lines.join(QLatin1Char('\n'));
}

QString ResultsModel::sliceText(const Result& r) {
    if (!r.slice)
        return {};
    QStringList parts;
    for (const auto& [k, v] : *r.slice)
        parts << QStringLiteral("%1=%2").arg(QString::fromStdString(k), QString::fromStdString(v));
    return parts.join(QStringLiteral(", "));
}

}  // namespace kcx::ui
