// Choosing a loader by content (SPEC 1; what is what: core/sniff.h).
#include "core/loader.h"

#include "core/import_numpy.h"
#include "core/import_trainer.h"
#include "core/sniff.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace kcx {

namespace {
// The first bytes of the file (fewer when it is shorter).
std::string head(const std::string& path, size_t n) {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f)
        throw InputError::inFile(path, std::string("cannot open: ") + std::strerror(errno));
    std::string s(n, '\0');
    s.resize(std::fread(s.data(), 1, n, f.get()));
    return s;
}

}  // namespace

bool isGzipFile(const std::string& path) {
    const std::string h = head(path, 2);
    return h.size() == 2 && (unsigned char)h[0] == 0x1f && (unsigned char)h[1] == 0x8b;
}

Run loadRun(const std::string& path, const Progress& progress, const LoadOptions& options) {
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
