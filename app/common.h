// Shared by the subcommands: opening a run with progress and clear errors.
#pragma once

#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <future>
#include <string>
#include <vector>

#include "core/base/safe_write.h"

#include "core/evaluate/evaluator_summary.h"
#include "core/formats/run.h"

namespace kcx::app {

// Loads a run; on failure prints the error (naming file and place) and returns null.
std::shared_ptr<const Run> openRun(const QString& path, bool quiet);
// A run (openRun) or a summary (SPEC 10), chosen by content; prints why and returns nothing
// when it cannot be read.
EvaluationData openRunOrSummary(const QString& path, bool quiet);
// Runs read as one (openRuns) or summaries merged (readSummaries), chosen by content: all of
// one kind, or a usage error naming `option`. Prints why and returns nothing when they
// cannot be read.
EvaluationData openRunsOrSummaries(const QStringList& paths, bool quiet, const QString& option = "--run");
// Several runs as one (`--run A --run B`, core loadRuns); one path is openRun. Unless quiet,
// says on stderr what the reading left out (trainer step folders still being written).
std::shared_ptr<const Run> openRuns(const QStringList& paths, bool quiet);
// --ppo-clip C (positive) and --threads N (>= 0) read into the two values; false after
// printing the usage error (the caller returns 2).
bool readClipAndThreads(const QCommandLineParser& p, const QCommandLineOption& clip,
                        const QCommandLineOption& threads, double& ppoClip, int& threadCount);
// The paths as std::strings, for core calls.
std::vector<std::string> stdPaths(const QStringList& paths);
// The paths as the project's input list for refuseOutputOverInput.
std::vector<NamedInput> runInputs(const QStringList& paths);
// Refuses (exit 2, after saying why) a second --run where a command binds one file's hash.
bool moreThanOneRun(const QStringList& paths, const char* command);
// glibc keeps freed arrays for reuse from now on (openRun calls it once the run is read).
void keepFreedMemory();

// What a command read is not freed when it ends: the kernel takes the whole address space back
// at once, where freeing a 1,000-step summary block by block took 0.15-0.3 s of a 1.3 s
// `kcx metrics` (compilers do the same: clang's -disable-free). The objects stay reachable
// from a list that is never destroyed, so LeakSanitizer reports no leak.
void keepUntilExit(std::shared_ptr<const void> p);
template <class T>
T& keptUntilExit(T&& value) {
    auto p = std::make_shared<std::decay_t<T>>(std::forward<T>(value));
    T& r = *p;
    keepUntilExit(p);
    return r;
}

// A progress callback that draws a bar on stderr when it is a terminal (else does nothing).
Progress terminalProgress(const char* label, bool quiet);

// Writes bytes to a file, or to stdout for "-". Returns false (after printing why) on failure.
// Files are written atomically (core/base/safe_write.h): a unique temporary beside the
// target, renamed over it once complete.
bool writeOutput(const QString& path, const std::string& bytes);

// The SHA-256 of a file, computed on its own thread while the command does its work
// (`--json` holds the run's hash: it used to be computed after the metrics, adding its whole
// time to the command's; issue 17). get() rethrows what sha256File threw.
std::future<std::string> hashInBackground(const std::string& path);
// Several runs read as one: the hash of "PATH\0SHA256\n" per path in the order given (one
// path: its own hash).
std::future<std::string> hashInBackground(const QStringList& paths);

// True (after printing "kcx: refusing to write OUT: it is the input ROLE PATH") when `out`
// is the same file as one of `inputs` (device and inode); the caller exits with 2.
bool refuseOutputOverInput(const QString& out, const std::vector<NamedInput>& inputs);

// A file written atomically as a std::ostream, streamed (never held whole in memory).
// commit() returns false after printing why; without it the target is left untouched.
class AtomicOutputStream : private std::streambuf, public std::ostream {
public:
    explicit AtomicOutputStream(const std::string& path);   // throws InputError
    bool commit();

private:
    int overflow(int c) override;
    int sync() override;
    bool drain();
    AtomicWriter writer_;
    std::vector<char> buf_;
    bool failed_ = false;
    std::string error_;
};

}  // namespace kcx::app
