#include "ui/signoff/signoff_model.h"

#include <QFileInfo>

#include "ui/style/status_style.h"

namespace kcx::ui {

SignoffState signoffState(const SignoffEntry& e) {
    if (!e.record)   // not read yet (records are read in the background), or unreadable
        return e.error.isEmpty() ? SignoffState::Checking : SignoffState::Unreadable;
    if (!e.verification)
        return e.error.isEmpty() ? SignoffState::Checking : SignoffState::Unreadable;
    if (e.verification->verified())
        return e.editedSinceSigned ? SignoffState::Stale : SignoffState::Verified;
    for (const auto& c : e.verification->checks)
        if (!c.ok && c.what == "record")
            return SignoffState::Invalid;
    if (e.verification->untrustedSigner())
        return SignoffState::Untrusted;
    return SignoffState::Stale;
}

QString signoffStatusText(const SignoffEntry& e) {
    switch (signoffState(e)) {
    case SignoffState::Checking:
        return QObject::tr("checking…");
    case SignoffState::Verified:
        return e.unchecked.isEmpty() ? QObject::tr("verified") : QObject::tr("verified (partly)");
    case SignoffState::Stale:
        if (e.verification->verified())
            return QObject::tr("stale: edited since signed");
        return QObject::tr("stale: %1 changed").arg(QString::fromStdString(e.verification->differingText()));
    case SignoffState::Untrusted: {
        std::vector<std::string> other = e.verification->differing();
        std::erase(other, std::string("key"));
        QString also;
        for (const auto& d : other)
            also += (also.isEmpty() ? QString() : QStringLiteral(", ")) + QString::fromStdString(d);
        return also.isEmpty() ? QObject::tr("untrusted signer") : QObject::tr("untrusted signer; %1 changed").arg(also);
    }
    case SignoffState::Invalid:
        return QObject::tr("invalid: record changed");
    case SignoffState::Unreadable:
        return e.record ? QObject::tr("not checked") : QObject::tr("unreadable");   // the detail says why
    }
    return {};
}

QString signoffDetailText(const SignoffEntry& e) {
    QStringList lines;
    if (e.record) {
        lines << QString::fromStdString(describeSignoff(*e.record));
        if (!e.record->comment.empty())
            lines << QObject::tr("Comment: %1").arg(QString::fromStdString(e.record->comment));
        lines << QObject::tr("Key %1, kcx %2").arg(QString::fromStdString(e.record->keyFingerprint),
                                                  QString::fromStdString(e.record->kcxVersion));
    }
    if (e.verification)
        for (const auto& c : e.verification->checks)
            lines << QStringLiteral("%1 %2: %3").arg(c.ok ? QStringLiteral("✓") : QStringLiteral("✗"),
                                                    QString::fromStdString(c.what), QString::fromStdString(c.text));
    if (e.editedSinceSigned)
        lines << QObject::tr("✗ window: the contract has unsaved edits; the files match the record, "
                             "but what you see is not what was signed");
    for (const auto& u : e.unchecked)
        lines << QObject::tr("– not checked: %1").arg(u);
    if (!e.error.isEmpty())
        lines << e.error;
    return lines.join(QLatin1Char('\n'));
}

SignoffModel::SignoffModel(QObject* parent) : QAbstractTableModel(parent) {}

void SignoffModel::setEntries(std::vector<SignoffEntry> entries) {
    beginResetModel();
    entries_ = std::move(entries);
    endResetModel();
}

int SignoffModel::rowOf(const QString& path) const {
    for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].path == path)
            return int(i);
    return -1;
}

bool SignoffModel::updateEntry(const SignoffEntry& entry) {
    const int row = rowOf(entry.path);
    if (row < 0)
        return false;
    entries_[size_t(row)] = entry;
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    return true;
}

int SignoffModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(entries_.size()); }
int SignoffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SignoffModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SignoffEntry& e = entries_[size_t(index.row())];
    const SignoffState state = signoffState(e);
    if (role == PathRole)
        return e.path;
    if (role == StateRole)
        return int(state);
    if (role == Qt::ToolTipRole)   // text from a file, shown as text: escaped, never rendered as markup
        return QStringLiteral("<p style='white-space:pre-wrap'>%1</p>").arg(signoffDetailText(e).toHtmlEscaped());
    const auto field = [&](const std::string SignoffRecord::*m) -> QVariant {
        return e.record ? QVariant(QString::fromStdString((*e.record).*m)) : QVariant();
    };
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case StatusColumn: return signoffStatusText(e);
        case ReviewerColumn: return field(&SignoffRecord::reviewer);
        case DecisionColumn: return field(&SignoffRecord::decision);
        case StageColumn: return field(&SignoffRecord::stage);
        case VerdictColumn: return field(&SignoffRecord::verdict);
        case TimeColumn: return field(&SignoffRecord::time);
        case FileColumn: return QFileInfo(e.path).fileName();
        default: return {};
        }
    }
    if (role == Qt::DecorationRole && index.column() == StatusColumn) {
        switch (state) {
        case SignoffState::Verified: return statusIcon(Status::Pass);
        case SignoffState::Stale: return statusIcon(Status::Inconclusive);
        case SignoffState::Untrusted:
        case SignoffState::Invalid:
        case SignoffState::Unreadable: return statusIcon(Status::Fail);
        case SignoffState::Checking: return {};
        }
    }
    if (role == Qt::ForegroundRole && index.column() == DecisionColumn && e.record)
        return statusColour(e.record->decision == "approve" ? Status::Pass : Status::Fail);
    return {};
}

QVariant SignoffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case StatusColumn: return tr("Status");
    case ReviewerColumn: return tr("Reviewer");
    case DecisionColumn: return tr("Decision");
    case StageColumn: return tr("Stage");
    case VerdictColumn: return tr("Verdict");
    case TimeColumn: return tr("Signed (UTC)");
    case FileColumn: return tr("File");
    default: return {};
    }
}

}  // namespace kcx::ui
