#include "ui/contract/promotion_model.h"

#include <QBrush>
#include <QFont>
#include <QStringList>

#include <algorithm>

#include "ui/style/action_style.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

std::vector<StageDriver> stageDrivers(const Contract& contract, const Evaluation& evaluation,
                                      const std::string& stage) {
    std::vector<StageDriver> out;
    Action strongest = Action::Pass;
    for (size_t i = 0; i < evaluation.results.size(); ++i) {
        const Result& r = evaluation.results[i];
        if (r.status == Status::Pass)
            continue;
        const Action a = escalate(contract, r, stage);
        if (a == Action::Pass)
            continue;
        out.push_back({i, a, false});
        strongest = std::max(strongest, a);
    }
    for (StageDriver& d : out)
        d.strongest = d.action == strongest;
    std::stable_sort(out.begin(), out.end(), [](const StageDriver& a, const StageDriver& b) { return a.action > b.action; });
    return out;
}

QString resultSliceText(const Result& result) {
    QStringList parts;
    if (result.slice)
        for (const auto& [k, v] : *result.slice)
            parts << QString::fromStdString(k) + QLatin1Char('=') + QString::fromStdString(v);
    return parts.join(QLatin1String(", "));
}

StageResultsModel::StageResultsModel(QObject* parent) : QAbstractTableModel(parent) {}

void StageResultsModel::setStage(std::shared_ptr<const Contract> contract, std::shared_ptr<const Evaluation> evaluation,
                                 const std::string& stage) {
    beginResetModel();
    contract_ = std::move(contract);
    evaluation_ = std::move(evaluation);
    stage_ = stage;
    drivers_.clear();
    if (contract_ && evaluation_)
        drivers_ = stageDrivers(*contract_, *evaluation_, stage_);
    endResetModel();
}

int StageResultsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(drivers_.size()); }

int StageResultsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StageResultsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const StageDriver& d = drivers_[size_t(index.row())];
    const Result& r = evaluation_->results[d.result];
    const int col = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (col) {
        case ClauseColumn: return QString::fromStdString(r.clause);
        case SliceColumn: return resultSliceText(r);
        case StatusColumn: return statusLabel(r.status);
        case ActionColumn: return actionLabel(d.action);
        }
        return {};
    case ClauseRole: return QString::fromStdString(r.clause);
    case ResultIndexRole: return qulonglong(d.result);
    case Qt::BackgroundRole:
        if (col == StatusColumn) return QBrush(statusColour(r.status));
        if (col == ActionColumn) return QBrush(actionColour(d.action));
        return {};
    case Qt::ForegroundRole:
        if (col == StatusColumn) return QBrush(textColourOn(statusColour(r.status)));
        if (col == ActionColumn) return QBrush(textColourOn(actionColour(d.action)));
        return {};
    case Qt::FontRole:
        if (d.strongest) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::ToolTipRole: {
        QString tip = QString::fromStdString(r.message);
        if (col == SliceColumn && r.slice)
            tip = resultSliceText(r) + QLatin1Char('\n') + tip;
        if (d.strongest)
            tip += tr("\nDrives this stage's action.");
        return plainToolTip(tip + tr("\nClick to show the clause."));
    }
    default: return {};
    }
}

QVariant StageResultsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case ClauseColumn: return tr("clause");
    case SliceColumn: return tr("slice");
    case StatusColumn: return tr("status");
    case ActionColumn: return tr("action");
    }
    return {};
}

}  // namespace kcx::ui
