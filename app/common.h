// Shared by the subcommands: opening a run with progress and clear errors.
#pragma once

#include <QString>

#include <memory>
#include <optional>

#include "core/formats/run.h"

namespace kcx::app {

// Loads a run; on failure prints the error (naming file and place) and returns null.
std::shared_ptr<const Run> openRun(const QString& path, bool quiet);

// A progress callback that draws a bar on stderr when it is a terminal (else does nothing).
Progress terminalProgress(const char* label, bool quiet);

// Writes bytes to a file, or to stdout for "-". Returns false (after printing why) on failure.
bool writeOutput(const QString& path, const std::string& bytes);

}  // namespace kcx::app
