#include "core/base/printable.h"
#include "app/common.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

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

std::shared_ptr<const Run> openRun(const QString& path, bool quiet) {
    try {
        auto run = std::make_shared<Run>(loadRun(path.toStdString(), terminalProgress("loading", quiet)));
        if (!quiet && isatty(STDERR_FILENO))
            std::fprintf(stderr, "\r\033[K");
        return run;
    } catch (const InputError& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s: %s\n", qPrintable(path), kcx::printable(e.what()).c_str());
    }
    return nullptr;
}

bool writeOutput(const QString& path, const std::string& bytes) {
    if (path == "-") {
        std::fwrite(bytes.data(), 1, bytes.size(), stdout);
        std::fflush(stdout);
        return true;
    }
    std::ofstream f(path.toStdString(), std::ios::binary);
    f.write(bytes.data(), std::streamsize(bytes.size()));
    f.close();
    if (!f) {
        std::fprintf(stderr, "kcx: %s: cannot write\n", qPrintable(path));
        return false;
    }
    return true;
}

}  // namespace kcx::app
