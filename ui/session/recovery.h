// Unsaved threshold edits survive a crash. While a contract has edits that are not saved,
// the window keeps them in a small recovery file (written in the background, replaced
// atomically); saving, discarding or closing normally removes it. When the same contract
// is opened again and a recovery file is there, the window offers the edits back — if the
// contract file is still the one they were made on.
#pragma once

#include <QString>

#include <optional>
#include <string>
#include <vector>

#include "ui/session/session.h"

namespace kcx::ui {

struct RecoveryState {
    QString contract;        // the contract's path ("" for one that has no file)
    std::string baseSha256;  // of the contract text the edits were made on
    QString time;            // UTC, when written
    std::vector<Session::ThresholdValue> edits;
};

// Where recovery files live: $KCX_RECOVERY_DIR, else the application's local data
// directory + "/recovery".
QString recoveryDir();
// The recovery file for a contract (by its absolute path; the demo contract has its own).
QString recoveryFile(const QString& contractPath);

// Writes (in the background, in call order) or removes the recovery file for the
// session's contract: removed when there are no unsaved edits.
void updateRecovery(const Session& session);
// Blocks until every recovery write so far is done (closing, tests).
void waitForRecovery();
// Reads the recovery file for `contractPath`; nothing when there is none or it cannot be
// read (a damaged file is removed, with a warning on stderr).
std::optional<RecoveryState> readRecovery(const QString& contractPath);
void removeRecovery(const QString& contractPath);

}  // namespace kcx::ui
