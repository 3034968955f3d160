// Choosing a loader by content (SPEC 1; what is what: core/formats/sniff.h).
#include "core/formats/loader.h"

#include "core/formats/import_numpy.h"
#include "core/formats/import_trainer.h"
#include "core/formats/sniff.h"
#include "core/base/safe_open.h"

#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace kcx {


std::optional<uint64_t> parseMemorySize(const std::string& text) {
    size_t i = 0;
    uint64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, uint64_t(text[i] - '0'), &v))
            return std::nullopt;
        ++i;
    }
    if (i == 0)
        return std::nullopt;
    std::string unit;
    for (char c : text.substr(i))
        unit += char(std::toupper(static_cast<unsigned char>(c)));
    static const std::string kUnits = "KMGT";
    int shift = 0;
    if (!unit.empty() && kUnits.find(unit[0]) != std::string::npos) {
        shift = 10 * (1 + int(kUnits.find(unit[0])));
        unit.erase(0, 1);
    }
    if (unit == "B" || unit == "IB")
        unit.clear();
    if (!unit.empty() || (shift && v > (UINT64_MAX >> shift)))
        return std::nullopt;
    return v << shift;
}

std::string memoryText(uint64_t bytes) {
    static const char* const kUnits[] = {"bytes", "KB", "MB", "GB", "TB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, kUnits[u]);
    return buf;
}

size_t defaultMaxLineBytes() {
    if (const char* env = std::getenv("KCX_MAX_LINE"); env && *env) {
        const auto v = parseMemorySize(env);
        if (!v || *v == 0)
            throw InputError::inFile("KCX_MAX_LINE", std::string("'") + env + "' is not a size (examples: 64M, 1G)");
        return size_t(*v);
    }
    return size_t(1) << 30;
}

uint64_t memoryLimit() {
    if (const char* env = std::getenv("KCX_MAX_MEMORY"); env && *env) {
        const auto v = parseMemorySize(env);
        if (!v || *v == 0)
            throw InputError::inFile("KCX_MAX_MEMORY",
                                     std::string("'") + env + "' is not a memory size (examples: 8G, 512M, 1073741824)");
        return *v;
    }
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return UINT64_MAX;
    return uint64_t(double(pages) * double(page) * 0.8);
}

bool isGzipFile(const std::string& path) {
    const std::string h = fileHead(path, 2);
    return h.size() == 2 && (unsigned char)h[0] == 0x1f && (unsigned char)h[1] == 0x8b;
}

Run loadRun(const std::string& path, const Progress& progress, const LoadOptions& options) {
    requireRegularFile(path, true);   // a FIFO, device or socket: refused by name, never read
    const Sniffed what = sniffRun(path);
    switch (what.kind) {
    case RunKind::Empty: throw InputError::inFile(path, "the file is empty");
    case RunKind::Safetensors: return loadSafetensors(path, progress);
    case RunKind::Npz: return loadNpz(path, progress, options);
    case RunKind::NpyDirectory: return loadNpyDirectory(path, progress, options);
    case RunKind::TrainerExport:
    case RunKind::TrainerDirectory: return loadTrainerExport(path, progress);
    case RunKind::Npy:
        throw InputError::inFile(path, "a single .npy holds one array; a run needs offsets, tokens, logp_train and "
                                       "logp_inf: open the directory that holds them as NAME.npy, or save them "
                                       "together with np.savez (docs/formats.md)");
    case RunKind::OneSide:
        throw InputError::inFile(path, "holds one kernel's log-probs only (" + what.detail +
                                           "); pair it with the other side: kcx import --inf INF.jsonl --train "
                                           "TRAIN.jsonl --out RUN.safetensors (docs/formats.md)");
    case RunKind::Foreign: throw InputError::inFile(path, foreignFormatMessage(what.detail));
    case RunKind::Summary:
        throw InputError::inFile(path, "is a KCX summary (kcx summarize), not a run: this needs the run's own "
                                       "data; `kcx metrics`, `kcx check` and `kcx merge` read summaries (docs/summaries.md)");
    case RunKind::UnknownDirectory:
        throw InputError::inFile(path, "a directory opens as a run when it holds NumPy arrays (offsets.npy, "
                                       "tokens.npy, ...) or trainer export files (*.jsonl, *.jsonl.gz)");
    case RunKind::SpecJsonl: break;
    }
    if (what.detail.empty())
        return loadJsonl(path, progress, options);
    try {
        return loadJsonl(path, progress, options);
    } catch (const InputError& e) {   // same file and place, and what to do about it
        throw InputError(e.file(), e.place(),
                         e.message() + " (the file looks like one side's " + what.detail +
                             ": pair it with the other side with kcx import --inf INF.jsonl --train TRAIN.jsonl "
                             "--out RUN.safetensors)");
    }
}

}  // namespace kcx
