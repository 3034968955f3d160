#include "core/base/printable.h"
#include "app/common.h"
#include "app/commands.h"
#include "core/base/prefault.h"
#include "core/base/sha256.h"

#include <malloc.h>
#include <mutex>
#include <unistd.h>

#include <cstdio>

#include "core/base/errors.h"
#include "core/formats/loader.h"

namespace kcx::app {

Progress terminalProgress(const char* label, bool quiet) {
    if (quiet || !isatty(STDERR_FILENO))
        return {};
    auto last = std::make_shared<int>(-1);
    return [label, last](double f) {
        const int pct = int(f * 100);
        if (pct != *last) {
            *last = pct;
            std::fprintf(stderr, "\r%s %3d%%%s", label, pct, pct >= 100 ? "\n" : "");
        }
        return true;
    };
}

void keepFreedMemory() {
#ifdef M_MMAP_THRESHOLD
    // A command runs once and exits: from here on, arrays below 1 GiB come from the heap and
    // what is freed stays there for the next one, instead of glibc mapping every array over
    // 32 MB afresh and unmapping it on free (a new mapping is page faults and zeroed pages:
    // 0.15 s of kcx check's 0.45 s at 10M tokens). Only after the run is read: the JSON
    // Lines reader's temporaries are then already given back (kept, they raised the peak
    // above KCX_MAX_MEMORY's estimate). The window opens run after run and keeps glibc's
    // defaults.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    setPrefaultLargeArrays(true);   // (core/base/prefault.h; not in the window)
}

void keepUntilExit(std::shared_ptr<const void> p) {
    static auto* kept = new std::vector<std::shared_ptr<const void>>();   // never destroyed
    static std::mutex lock;
    std::lock_guard<std::mutex> hold(lock);
    kept->push_back(std::move(p));
}

namespace {

// What a reader left out and must say on every command, not only on `kcx convert`: step
// folders of a trainer tree still being written.
void sayWhatWasLeftOut(const Run& run) {
    const auto& h = run.header;
    if (!h.is_object() || !h.contains("import") || !h["import"].is_object())
        return;
    const auto skipped = h["import"].value("steps_skipped", nlohmann::json::array());
    if (skipped.is_array() && !skipped.empty()) {
        std::string list;
        for (const auto& s : skipped)
            list += (list.empty() ? "" : ", ") + s.get<std::string>();
        std::fprintf(stderr, "kcx: left out %zu step folder(s) without the STABLE marker (still being written): %s\n",
                     skipped.size(), kcx::printable(list).c_str());
    }
}

}  // namespace

std::shared_ptr<const Run> openRun(const QString& path, bool quiet) { return openRuns({path}, quiet); }

bool readClipAndThreads(const QCommandLineParser& p, const QCommandLineOption& clip,
                        const QCommandLineOption& threads, double& ppoClip, int& threadCount) {
    bool ok = false;
    ppoClip = p.value(clip).toDouble(&ok);
    if (!ok || !(ppoClip > 0)) {
        usageError("--ppo-clip needs a positive number");
        return false;
    }
    threadCount = p.value(threads).toInt(&ok);
    if (!ok || threadCount < 0) {
        usageError("--threads needs a whole number >= 0");
        return false;
    }
    return true;
}

EvaluationData openRunOrSummary(const QString& path, bool quiet) {
    if (!looksLikeSummary(path.toStdString()))
        return openRun(path, quiet);
    try {
        auto s = std::make_shared<const RunSummary>(readSummary(path.toStdString()));
        keepUntilExit(s);
        return s;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return {};
    }
}

EvaluationData openRunsOrSummaries(const QStringList& paths, bool quiet, const QString& option) {
    int summaries = 0;
    for (const QString& path : paths)
        summaries += looksLikeSummary(path.toStdString()) ? 1 : 0;
    if (summaries && summaries != paths.size()) {
        usageError(option + " takes runs or summaries, not both (kcx summarize turns a run into a summary)");
        return {};
    }
    if (!summaries)
        return openRuns(paths, quiet);
    try {
        auto s = std::make_shared<const RunSummary>(readSummaries(stdPaths(paths)));
        keepUntilExit(s);
        return s;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return {};
    }
}

std::shared_ptr<const Run> openRuns(const QStringList& paths, bool quiet) {
    std::vector<std::string> list;
    for (const QString& p : paths)
        list.push_back(p.toStdString());
    try {
        auto run = std::make_shared<Run>(loadRuns(list, terminalProgress("loading", quiet)));
        if (!quiet && isatty(STDERR_FILENO))
            std::fprintf(stderr, "\r\033[K");
        if (!quiet && paths.size() > 1)
            std::fprintf(stderr, "kcx: %d runs read as one: %zu sequences\n", int(paths.size()), run->sequenceCount());
        if (!quiet)
            sayWhatWasLeftOut(*run);
        keepFreedMemory();
        return run;
    } catch (const InputError& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s: %s\n", qPrintable(paths.join(" + ")), kcx::printable(e.what()).c_str());
    }
    return nullptr;
}

std::vector<std::string> stdPaths(const QStringList& paths) {
    std::vector<std::string> out;
    for (const QString& p : paths)
        out.push_back(p.toStdString());
    return out;
}

std::vector<NamedInput> runInputs(const QStringList& paths) {
    std::vector<NamedInput> out;
    for (const QString& p : paths)
        out.push_back({"run", p.toStdString()});
    return out;
}

bool moreThanOneRun(const QStringList& paths, const char* command) {
    if (paths.size() <= 1)
        return false;
    std::fprintf(stderr, "kcx %s: one --run (it binds that file's hash); to use several, join them first: kcx convert "
                         "A B ... --out RUN.safetensors\n", command);
    return true;
}

bool writeOutput(const QString& path, const std::string& bytes) {
    if (path == "-") {
        std::fwrite(bytes.data(), 1, bytes.size(), stdout);
        std::fflush(stdout);
        return true;
    }
    try {
        writeFileAtomically(path.toStdString(), bytes);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return false;
    }
    return true;
}

std::future<std::string> hashInBackground(const std::string& path) {
    return std::async(std::launch::async, [path] { return sha256File(path); });
}

std::future<std::string> hashInBackground(const QStringList& paths) {
    if (paths.size() == 1)
        return hashInBackground(paths.first().toStdString());
    std::vector<std::string> list;
    for (const QString& p : paths)
        list.push_back(p.toStdString());
    return std::async(std::launch::async, [list] {
        std::string listing;
        for (const auto& p : list)
            listing += p + '\0' + sha256File(p) + '\n';
        return sha256Hex(listing);
    });
}

bool refuseOutputOverInput(const QString& out, const std::vector<NamedInput>& inputs) {
    const std::string why = sameFileRefusal(out.toStdString(), inputs);
    if (why.empty())
        return false;
    std::fprintf(stderr, "kcx: %s\n", why.c_str());
    return true;
}

AtomicOutputStream::AtomicOutputStream(const std::string& path)
    : std::ostream(static_cast<std::streambuf*>(this)), writer_(path), buf_(size_t(1) << 20) {
    setp(buf_.data(), buf_.data() + buf_.size());
}

bool AtomicOutputStream::drain() {
    if (failed_)
        return false;
    try {
        writer_.write(pbase(), size_t(pptr() - pbase()));
    } catch (const std::exception& e) {
        failed_ = true;
        error_ = e.what();
        return false;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return true;
}

int AtomicOutputStream::overflow(int c) {
    if (!drain())
        return std::streambuf::traits_type::eof();
    if (c != std::streambuf::traits_type::eof()) {
        *pptr() = char(c);
        pbump(1);
    }
    return std::streambuf::traits_type::not_eof(c);
}

int AtomicOutputStream::sync() { return drain() ? 0 : -1; }

bool AtomicOutputStream::commit() {
    if (drain() && !fail()) {
        try {
            writer_.commit();
            return true;
        } catch (const std::exception& e) {
            error_ = e.what();
        }
    }
    std::fprintf(stderr, "kcx: %s\n", kcx::printable(error_.empty() ? writer_.path() + ": cannot write" : error_).c_str());
    return false;
}

}  // namespace kcx::app
