// Several runs read as one (`--run A --run B`, `kcx convert A B`): sequences in the order
// the runs were given (core/formats/loader.h, loadRuns).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <unordered_map>

#include "core/formats/import_trainer.h"
#include "core/formats/loader.h"
#include "core/formats/sniff.h"

namespace kcx {

using nlohmann::json;

namespace {

// One column from the parts' columns: float32 when every part is float32, else float64.
Column joinColumns(const std::vector<const Column*>& parts) {
    const bool f32 = std::all_of(parts.begin(), parts.end(), [](const Column* c) { return c->type() == Column::Type::F32; });
    size_t n = 0;
    for (const Column* c : parts)
        n += c->size();
    if (f32) {
        std::vector<float> out;
        out.reserve(n);
        for (const Column* c : parts)
            c->visit([&](auto s) { out.insert(out.end(), s.begin(), s.end()); });
        return Column(Array<float>(std::move(out)));
    }
    std::vector<double> out;
    out.reserve(n);
    for (const Column* c : parts)
        for (size_t i = 0; i < c->size(); ++i)
            out.push_back((*c)[i]);   // keeps the missing marker
    return Column(Array<double>(std::move(out)));
}

template <class T>
void append(std::vector<T>& out, const Array<T>& a) {
    out.insert(out.end(), a.begin(), a.end());
}

// Every part has it, or none does: a join never drops what one run holds.
void sameShape(const std::vector<Run>& runs, const char* what, const std::function<int64_t(const Run&)>& size) {
    for (size_t r = 1; r < runs.size(); ++r)
        if (size(runs[r]) != size(runs[0])) {
            const auto say = [&](const Run& x) {
                const int64_t v = size(x);
                return v ? std::string(what) + " " + std::to_string(v) : "no " + std::string(what);
            };
            throw InputError::inFile(runs[r].path, "has " + say(runs[r]) + " but " + runs[0].path + " has " +
                                                       say(runs[0]) + ": runs read as one must hold the same kind of "
                                                       "data (join them in the same shape, or open them one at a time)");
        }
}

}  // namespace

Run joinRuns(std::vector<Run> runs) {
    if (runs.size() == 1)
        return std::move(runs.front());
    sameShape(runs, "top-k with k =", [](const Run& r) { return r.topkTrain.present() && r.topkInf.present() ? r.topkTrain.k : 0; });
    sameShape(runs, "logits with V =", [](const Run& r) { return r.logits.present() ? r.logits.vocab : 0; });

    Run out;
    json sources = json::array();
    std::unordered_map<std::string, size_t> firstRun;   // id -> the run it came from
    std::vector<int64_t> offsets{0};
    std::vector<int32_t> tokens;
    std::vector<int32_t> topkIds[2];
    std::vector<int64_t> logitRows;
    const bool anyRewards = std::any_of(runs.begin(), runs.end(), [](const Run& r) { return !r.rewardTrain.empty() || !r.rewardInf.empty(); });
    const bool anyRuntime = std::any_of(runs.begin(), runs.end(), [](const Run& r) { return !r.runtime.empty(); });
    const bool anyText = std::any_of(runs.begin(), runs.end(), [](const Run& r) { return r.hasText(); });
    // Slice keys in order of first appearance; each run's codes remapped onto the union.
    std::vector<std::string>& keys = out.slices.keys;
    std::vector<std::map<std::string, int32_t>> codeOf;
    for (const Run& r : runs)
        for (const auto& k : r.slices.keys)
            if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
                keys.push_back(k);
                out.slices.values.emplace_back();
                codeOf.emplace_back();
            }
    for (size_t ri = 0; ri < runs.size(); ++ri) {
        const Run& r = runs[ri];
        sources.push_back(r.path);
        const int64_t base = int64_t(tokens.size());
        for (size_t s = 0; s < r.sequenceCount(); ++s) {
            const auto [it, fresh] = firstRun.emplace(r.ids[s], ri);
            if (!fresh)
                throw InputError::inFile(r.path, "sequence id '" + r.ids[s] + "' is also in " + runs[it->second].path +
                                                     " (ids must be unique across the runs read as one)");
            out.ids.push_back(r.ids[s]);
            offsets.push_back(base + r.offsets[s + 1]);
            for (size_t k = 0; k < keys.size(); ++k) {
                const int rk = r.slices.keyIndex(keys[k]);
                const std::string* label = rk < 0 ? nullptr : r.slices.label(s, size_t(rk));
                int32_t code = -1;
                if (label) {
                    const auto [c, added] = codeOf[k].emplace(*label, int32_t(out.slices.values[k].size()));
                    if (added)
                        out.slices.values[k].push_back(*label);
                    code = c->second;
                }
                out.slices.codes.push_back(code);
            }
            if (anyRewards) {
                out.rewardTrain.push_back(r.rewardTrain.empty() ? missingDouble() : r.rewardTrain[s]);
                out.rewardInf.push_back(r.rewardInf.empty() ? missingDouble() : r.rewardInf[s]);
            }
            if (anyRuntime)
                out.runtime.push_back(r.runtime.empty() ? json::object() : r.runtime[s]);
        }
        append(tokens, r.tokens);
        if (r.hasTopK())
            for (int w = 0; w < 2; ++w)
                append(topkIds[w], (w ? r.topkInf : r.topkTrain).ids);
        if (r.hasLogits())
            for (int64_t row : r.logits.rows)
                logitRows.push_back(base + row);
        if (anyText) {
            if (out.textOffsets.empty())
                out.textOffsets.push_back(0);
            for (size_t i = 0; i < r.tokenCount(); ++i) {
                out.textPool += r.tokenText(i);   // empty where a run has no text
                out.textOffsets.push_back(out.textPool.size());
            }
        }
    }
    auto columns = [&](auto get) {
        std::vector<const Column*> parts;
        for (const Run& r : runs)
            parts.push_back(&get(r));
        return joinColumns(parts);
    };
    out.lpTrain = columns([](const Run& r) -> const Column& { return r.lpTrain; });
    out.lpInf = columns([](const Run& r) -> const Column& { return r.lpInf; });
    if (runs[0].hasTopK()) {
        out.topkTrain.k = out.topkInf.k = runs[0].topkTrain.k;
        out.topkTrain.ids = Array<int32_t>(std::move(topkIds[0]));
        out.topkInf.ids = Array<int32_t>(std::move(topkIds[1]));
        out.topkTrain.logp = columns([](const Run& r) -> const Column& { return r.topkTrain.logp; });
        out.topkInf.logp = columns([](const Run& r) -> const Column& { return r.topkInf.logp; });
    }
    if (runs[0].hasLogits()) {
        out.logits.vocab = runs[0].logits.vocab;
        out.logits.rows = Array<int64_t>(std::move(logitRows));
        out.logits.train = columns([](const Run& r) -> const Column& { return r.logits.train; });
        out.logits.inf = columns([](const Run& r) -> const Column& { return r.logits.inf; });
    }
    out.offsets = Array<int64_t>(std::move(offsets));
    out.tokens = Array<int32_t>(std::move(tokens));
    out.path = runs[0].path;
    out.header = runs[0].header.is_object() ? runs[0].header : json::object();
    out.header["joined"] = sources;
    out.checkInvariants();
    return out;
}

Run loadRuns(const std::vector<std::string>& paths, const Progress& progress, const LoadOptions& options) {
    if (paths.empty())
        throw InputError::inFile("", "no run given");
    if (paths.size() == 1)
        return loadRun(paths[0], progress, options);
    // Trainer exports join record by record (one reader, one header of counts); anything else
    // is read run by run and joined.
    const bool trainer = std::all_of(paths.begin(), paths.end(), [](const std::string& p) {
        const RunKind k = sniffRun(p).kind;
        return k == RunKind::TrainerExport || k == RunKind::TrainerDirectory;
    });
    if (trainer) {
        TrainerExports all;
        for (const auto& p : paths) {
            std::error_code ec;
            all.add(std::filesystem::is_directory(p, ec) ? findTrainerExports(p) : TrainerExports{{p}, {""}, {}});
        }
        return loadTrainerExports(all, paths[0], progress);
    }
    std::vector<Run> runs;
    for (size_t i = 0; i < paths.size(); ++i) {
        const Progress part = [&](double f) { return !progress || progress((double(i) + f) / double(paths.size())); };
        runs.push_back(loadRun(paths[i], part, options));
    }
    return joinRuns(std::move(runs));
}

}  // namespace kcx
