// The sign-off records of the open contract, each with its verification status: a table
// model for the records panel. A record is "verified" when its signature holds and the
// contract, run and results still match; "stale" when the signature holds but something it
// binds changed since signing (the status says what); "invalid" when the record itself was
// changed; "unreadable" when it cannot be parsed.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <optional>
#include <vector>

#include "core/signoff/signoff.h"
#include "core/signoff/signoff_verify.h"

namespace kcx::ui {

struct SignoffEntry {
    QString path;
    std::optional<SignoffRecord> record;          // empty: unreadable (see error)
    std::optional<SignoffVerification> verification;  // empty: not checked yet
    QString error;                                // why it is unreadable or could not be checked
    QStringList unchecked;                        // what could not be compared ("run: the demo run has no file")
    // The window's contract has unsaved edits: the files may still match the record, but
    // what the reviewer sees is not what was signed, so the record is not shown verified.
    bool editedSinceSigned = false;
};

// Untrusted: the signature holds but its key is not listed for the record's reviewer in the
// trusted signers (SPEC 6.4): never shown as verified, whatever the files say.
enum class SignoffState { Checking, Verified, Stale, Untrusted, Invalid, Unreadable };

SignoffState signoffState(const SignoffEntry& e);
// Short, for the table: "verified", "stale: contract, results changed", "stale: edited
// since signed", "untrusted signer", "invalid: record changed", "unreadable", "not
// checked"; signoffDetailText says why.
QString signoffStatusText(const SignoffEntry& e);
// Every check on its own line, then what was not checked.
QString signoffDetailText(const SignoffEntry& e);

class SignoffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StatusColumn, ReviewerColumn, DecisionColumn, StageColumn, VerdictColumn, TimeColumn, FileColumn, ColumnCount };
    enum Role { PathRole = Qt::UserRole, StateRole };

    explicit SignoffModel(QObject* parent = nullptr);

    // Replaces the list (rows keep their order: the order given).
    void setEntries(std::vector<SignoffEntry> entries);
    // Updates the entry with that path; false when there is none.
    bool updateEntry(const SignoffEntry& entry);
    const std::vector<SignoffEntry>& entries() const { return entries_; }
    int rowOf(const QString& path) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<SignoffEntry> entries_;
};

}  // namespace kcx::ui
