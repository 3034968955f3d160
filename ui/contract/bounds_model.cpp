#include "ui/contract/bounds_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include "ui/style/value_text.h"
#include "ui/style/plain_text.h"

namespace kcx::ui {

namespace {
QString text(const std::string& s) { return QString::fromStdString(s); }
QVariant number(const std::optional<double>& v) { return v ? QVariant(*v) : QVariant(); }
}  // namespace

BoundsModel::BoundsModel(QObject* parent) : QAbstractTableModel(parent) {}

void BoundsModel::setSteps(std::vector<BoundStep> steps) {
    beginResetModel();
    steps_ = std::move(steps);
    endResetModel();
}

QString BoundsModel::flagText(const BoundStep& s) {
    if (s.vacuous)
        return tr("vacuous");
    if (s.step == "ppo_clip" && s.bound)
        return s.exceedsLimit ? tr("exceeds clip") : tr("within clip");
    if (!s.bound)
        return tr("no bound");
    return {};
}

QString BoundsModel::boundText(const BoundStep& s) {
    if (!s.bound)
        return formatOptional(s.bound);
    if (s.lower)
        return QStringLiteral("[%1, %2]").arg(formatValue(*s.lower, 4), formatValue(*s.bound, 4));
    if (s.limit)
        return tr("%1 (c = %2)").arg(formatValue(*s.bound, 4), formatValue(*s.limit, 4));
    return formatValue(*s.bound, 4);
}

bool BoundsModel::observedAboveBound(const BoundStep& s) {
    // ppo_clip compares e^rho - 1 with c; its observed value is a share of tokens.
    return s.step != "ppo_clip" && s.observed && s.bound && *s.observed > *s.bound;
}

int BoundsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(steps_.size()); }

int BoundsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant BoundsModel::display(const BoundStep& s, int column) const {
    switch (column) {
    case Step: return boundStepName(s.step);
    case Input: return formatOptional(s.input);
    case InputFrom: return text(s.inputName);
    case Assumption: return text(s.assumption);
    case Bound: return boundText(s);
    case Observed: return formatOptional(s.observed);
    case ObservedAs: return text(s.observedName);
    case Flag: return flagText(s);
    }
    return {};
}

QVariant BoundsModel::toolTip(const BoundStep& s, int column) const {
    switch (column) {
    case Step:
    case Flag: return QStringLiteral("<p><b>%1</b></p><p>%2</p>").arg(text(s.title).toHtmlEscaped(),
                                                                     boundStepHelp(s.step).toHtmlEscaped());
    case Bound: return text(s.title);
    case Observed:
        if (observedAboveBound(s))
            return tr("The observed value lies above the bound: the step's assumption does not hold for this run "
                      "(or the observed value is a proxy; see the step's explanation).");
        return text(s.observedName);
    case InputFrom:
    case Assumption:
    case ObservedAs: return display(s, column);
    }
    return {};
}

QVariant BoundsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const BoundStep& s = steps_[size_t(index.row())];
    const int col = index.column();
    switch (role) {
    case Qt::DisplayRole: return display(s, col);
    case Qt::ToolTipRole: {
        // Step and Flag are markup made here (escaped inside); the rest is text.
        const QVariant tip = toolTip(s, col);
        return (col == Step || col == Flag) ? tip : QVariant(plainToolTip(tip.toString()));
    }
    case VacuousRole: return s.vacuous;
    case ValueRole:
        if (col == Input) return number(s.input);
        if (col == Bound) return number(s.bound);
        if (col == Observed) return number(s.observed);
        return {};
    case Qt::ForegroundRole:
        if (s.vacuous && col == Bound)
            return QBrush(QColor(0x90, 0x90, 0x90));
        if (col == Observed && observedAboveBound(s))
            return QBrush(QColor(0xc6, 0x28, 0x28));
        return {};
    case Qt::BackgroundRole:
        if (col == Flag && s.vacuous)
            return QBrush(QColor(0xff, 0xe0, 0x82));
        if (col == Flag && s.exceedsLimit)
            return QBrush(QColor(0xff, 0xcd, 0xd2));
        return {};
    case Qt::FontRole:
        if (col == Flag || col == Step) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (col == Input || col == Bound || col == Observed)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default: return {};
    }
}

QVariant BoundsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Step: return tr("step");
    case Input: return tr("input");
    case InputFrom: return tr("input from");
    case Assumption: return tr("assumption");
    case Bound: return tr("bound");
    case Observed: return tr("observed");
    case ObservedAs: return tr("observed as");
    case Flag: return tr("flag");
    }
    return {};
}

}  // namespace kcx::ui
