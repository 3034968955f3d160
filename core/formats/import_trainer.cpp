// Trainer token exports: JSON Lines records with token_ids, loss_mask and both kernels'
// log-probs, one file per step and rank, read into one run (core/formats/import_trainer.h).
#include "core/formats/import_trainer.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/formats/importers.h"
#include "core/formats/json_scan.h"
#include "core/formats/sniff.h"

namespace kcx {

using nlohmann::json;

namespace {


std::string baseName(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

// "step_12_rank_3.jsonl" -> the digits after `word` (optionally after '_' or '-').
std::optional<std::string> numberAfter(const std::string& name, const char* word) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    const size_t n = std::strlen(word);
    for (size_t at = lower.find(word); at != std::string::npos; at = lower.find(word, at + 1)) {
        size_t p = at + n;
        if (p < lower.size() && (lower[p] == '_' || lower[p] == '-'))
            ++p;
        size_t e = p;
        while (e < lower.size() && std::isdigit((unsigned char)lower[e]))
            ++e;
        if (e > p) {
            std::string digits = lower.substr(p, e - p);
            digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
            return digits;
        }
    }
    return std::nullopt;
}

struct Field {
    size_t at = 0;     // byte offset of its key, for errors
    size_t count = 0;  // array length
    bool present = false;
};

struct Record {
    std::vector<int64_t> tokens;
    std::vector<uint8_t> mask;
    std::vector<double> inf, train;
    Field fTokens, fMask, fInf, fTrain, fEntropy, fAdvantages;
    std::optional<std::string> id, step, rank, env;
    std::optional<std::string> sequenceIdx;   // prime-rl's export_sequence_idx, NeMo-RL's idx
    bool sampleMasked = false;                // NeMo-RL's sample_loss_mask 0: no token trains
    std::optional<std::pair<size_t, size_t>> header;   // a {"kcx_header": ...} line: its value's extent
    size_t otherKeys = 0;
};

class ExportReader {
public:
    Run read(const TrainerExports& exports, const std::string& runPath, const Progress& progress);

private:
    void readFile(const std::string& path, const std::string& root);
    void record(std::string_view text, size_t begin, size_t end, const std::string& path, int64_t line,
                const std::string& fileStep, const std::string& fileRank, const std::string& where);
    void mask(JsonScanner& j, Record& r, size_t at);
    double logprob(JsonScanner& j, const char* what);
    void perToken(JsonScanner& j, const char* what, Field& f, const std::function<void()>& item);
    void skipLenient(JsonScanner& j, int depth = 0);
    std::optional<std::string> label(JsonScanner& j, const char* what);

    // the run being built
    std::vector<std::string> ids_;
    std::unordered_map<std::string, std::string> idWhere_;   // id -> "FILE:LINE"
    std::vector<int64_t> offsets_{0};
    std::vector<int32_t> tokens_;
    std::vector<double> inf_, train_;
    std::vector<std::optional<std::string>> env_, step_, rank_;
    size_t records_ = 0, empty_ = 0, sampleMasked_ = 0, promptTokens_ = 0, missingInf_ = 0, missingTrain_ = 0;
    size_t flooredInf_ = 0, flooredTrain_ = 0;
    json header_;   // from a kcx_header line, if any
    Progress progress_;
    uint64_t bytesDone_ = 0, bytesTotal_ = 0;
};

double ExportReader::logprob(JsonScanner& j, const char* what) {
    const char c = j.peek();
    if (c == 'N' && j.literal("NaN"))
        return std::numeric_limits<double>::quiet_NaN();
    if (c == 'I' && j.literal("Infinity"))
        return std::numeric_limits<double>::infinity();
    if (c == '-' && j.literal("-Infinity"))
        return -std::numeric_limits<double>::infinity();
    return j.numberOrMarker(what);   // -9999.0 (vLLM's floor) is told apart in record()
}

// A per-token array, or a batch of one holding it (NeMo-RL writes every value of a line as
// a slice of its batch: [[...]]).
void ExportReader::perToken(JsonScanner& j, const char* what, Field& f, const std::function<void()>& item) {
    f.present = true;
    size_t rows = 0;
    j.array(what, [&] {
        if (j.peek() != '[') {
            item();
            ++f.count;
            return;
        }
        if (rows++ || f.count)
            j.fail(std::string(what) + " holds more than one row (one record is one sequence)");
        j.array(what, [&] {
            item();
            ++f.count;
        });
    });
}

// loss_mask / token_loss_mask: 0 or false = not trained on (a prompt token).
void ExportReader::mask(JsonScanner& j, Record& r, size_t at) {
    r.fMask.at = at;
    perToken(j, "\"loss_mask\"", r.fMask, [&] {
        const char c = j.peek();
        if (c == 't' && j.literal("true"))
            r.mask.push_back(1);
        else if (c == 'f' && j.literal("false"))
            r.mask.push_back(0);
        else
            r.mask.push_back(j.number() != 0 ? 1 : 0);
    });
}

void ExportReader::skipLenient(JsonScanner& j, int depth) {
    if (depth > 256)
        j.fail("nesting deeper than 256 levels");
    const char c = j.peek();
    if (c == '{')
        j.object("an object", [&](const std::string&, size_t) { skipLenient(j, depth + 1); });
    else if (c == '[')
        j.array("an array", [&] { skipLenient(j, depth + 1); });
    else if (!(c == 'N' && j.literal("NaN")) && !(c == 'I' && j.literal("Infinity")) &&
             !(c == '-' && j.literal("-Infinity")))
        j.skipValue(depth);
}

// A slice label: a string, an integer (written in decimal), or null (none).
std::optional<std::string> ExportReader::label(JsonScanner& j, const char* what) {
    const char c = j.peek();
    if (c == 'n' && j.literal("null"))
        return std::nullopt;
    if (c == '"') {
        std::string s;
        j.string(s);
        return s;
    }
    return std::to_string(j.integer(what));
}

void ExportReader::record(std::string_view text, size_t begin, size_t end, const std::string& path, int64_t line,
                    const std::string& fileStep, const std::string& fileRank, const std::string& where) {
    Record r;
    JsonScanner j(text, begin, end);
    // prime-rl's names first, NeMo-RL's second (docs/formats.md, "Trainer token exports").
    j.object("a record", [&](const std::string& key, size_t at) {
        if (key == "token_ids") {
            r.fTokens.at = at;
            perToken(j, "\"token_ids\"", r.fTokens, [&] { r.tokens.push_back(j.integer("token_ids")); });
        } else if (key == "loss_mask" || key == "token_loss_mask") {
            if (r.fMask.present)
                j.fail("a record with both \"loss_mask\" and \"token_loss_mask\"");
            mask(j, r, at);
        } else if (key == "inference_logprobs" || key == "generation_logprobs") {
            if (r.fInf.present)
                j.fail("a record with both \"inference_logprobs\" and \"generation_logprobs\"");
            r.fInf.at = at;
            perToken(j, key == "inference_logprobs" ? "\"inference_logprobs\"" : "\"generation_logprobs\"", r.fInf,
                     [&] { r.inf.push_back(logprob(j, "inference_logprobs")); });
        } else if (key == "trainer_logprobs" || key == "prev_logprobs") {
            if (r.fTrain.present)
                j.fail("a record with both \"trainer_logprobs\" and \"prev_logprobs\"");
            r.fTrain.at = at;
            perToken(j, key == "trainer_logprobs" ? "\"trainer_logprobs\"" : "\"prev_logprobs\"", r.fTrain,
                     [&] { r.train.push_back(logprob(j, "trainer_logprobs")); });
        } else if (key == "sample_loss_mask") {   // NeMo-RL: [x] (a batch of one) or x; 0 = not trained on
            double x = 1;
            if (j.peek() == '[') {
                size_t count = 0;
                j.array("\"sample_loss_mask\"", [&] {
                    if (count++)
                        j.fail("\"sample_loss_mask\" holds more than one value (one record is one sequence)");
                    x = j.number();
                });
            } else {
                x = j.number();
            }
            r.sampleMasked = x == 0;
        } else if (key == "export_sequence_idx" || key == "idx") {
            r.sequenceIdx = label(j, key.c_str());
        } else if (key == "entropy" || key == "advantages") {
            Field& f = key == "entropy" ? r.fEntropy : r.fAdvantages;
            f.at = at;
            if (j.peek() == '[')
                perToken(j, key == "entropy" ? "\"entropy\"" : "\"advantages\"", f, [&] { skipLenient(j); });
            else
                skipLenient(j);   // a per-sequence scalar
        } else if (key == "step") {
            r.step = label(j, "step");
        } else if (key == "rank") {
            r.rank = label(j, "rank");
        } else if (key == "env_name") {
            r.env = label(j, "env_name");
        } else if (key == "id") {
            r.id = label(j, "id");
        } else if (key == "kcx_header") {
            r.header = j.skipValue();
            --r.otherKeys;
        } else {
            skipLenient(j);
        }
        ++r.otherKeys;
    });
    if (!j.atEnd())
        j.fail("unexpected text after the record");
    if (r.header) {   // SPEC 1.3 header line, as in SPEC 1.1 files: the run's header
        if (r.otherKeys)
            throw InputError::atText(path, line, 0, "the header line may only hold \"kcx_header\"");
        json h;
        try {
            h = json::parse(text.substr(r.header->first, r.header->second - r.header->first));
        } catch (const json::exception&) {
        }
        if (!h.is_object())
            throw InputError::atText(path, line, 0, "\"kcx_header\" must be an object (SPEC 1.3)");
        if (header_.is_null())
            header_ = std::move(h);
        return;
    }

    auto fail = [&](size_t at, const std::string& msg) {
        int64_t l = 0, col = 0;
        lineColumn(text.substr(begin, end - begin), at - begin, l, col);
        throw InputError::atText(path, line, at ? col : 0, msg);
    };
    const std::pair<const char*, const Field*> required[] = {
        {"token_ids", &r.fTokens}, {"loss_mask", &r.fMask}, {"inference_logprobs", &r.fInf}, {"trainer_logprobs", &r.fTrain}};
    for (const auto& [name, f] : required)
        if (!f->present)
            throw InputError::atText(path, line, 0,
                                     std::string("record has no \"") + name +
                                         "\" (a trainer export record holds token_ids, loss_mask, "
                                         "inference_logprobs and trainer_logprobs)");
    const size_t t = r.fTokens.count;
    const std::pair<const char*, const Field*> perTok[] = {{"loss_mask", &r.fMask},
                                                           {"inference_logprobs", &r.fInf},
                                                           {"trainer_logprobs", &r.fTrain},
                                                           {"entropy", &r.fEntropy},
                                                           {"advantages", &r.fAdvantages}};
    for (const auto& [name, f] : perTok)
        if (f->present && f->count != t)
            fail(f->at, std::string("\"") + name + "\" has " + std::to_string(f->count) + " entries but \"token_ids\" has " +
                            std::to_string(t) + " (every per-token array must be as long as token_ids)");

    ++records_;
    const std::optional<std::string> step = r.step ? r.step : fileStep.empty() ? std::nullopt : std::optional(fileStep);
    const std::optional<std::string> rank = r.rank ? r.rank : fileRank.empty() ? std::nullopt : std::optional(fileRank);
    // The id: the record's own; else the sequence's place in the export (step, rank and index,
    // unique across a tree); else where the line is.
    std::string id;
    if (r.id) {
        id = *r.id;
    } else if (r.sequenceIdx) {
        id = (step ? "step_" + *step + "/" : "") + (rank ? "rank_" + *rank + "/" : "") + *r.sequenceIdx;
    } else {
        id = where + ":" + std::to_string(line);
    }
    const std::string at = path + ":" + std::to_string(line);
    const auto [it, fresh] = idWhere_.emplace(id, at);
    if (!fresh)
        throw InputError::atText(path, line, 0, "duplicate id '" + id + "' (first at " + it->second + ")");
    if (r.sampleMasked) {   // the trainer left the whole sequence out of the loss
        ++sampleMasked_;
        return;
    }
    size_t kept = 0;
    for (size_t i = 0; i < t; ++i) {
        if (!r.mask[i]) {
            ++promptTokens_;
            continue;
        }
        // vLLM's floor: -9999.0 is max(lp, -9999.0), a log-prob at or below it. Read as -inf,
        // a non-finite number (SPEC 2.5), and counted on its own; never as missing.
        for (auto [v, floored] : {std::pair{&r.inf[i], &flooredInf_}, std::pair{&r.train[i], &flooredTrain_}})
            if (*v == kVllmPlaceholder) {
                *v = -std::numeric_limits<double>::infinity();
                ++*floored;
            }
        const int64_t tok = r.tokens[i];
        if (tok < std::numeric_limits<int32_t>::min() || tok > std::numeric_limits<int32_t>::max())
            fail(r.fTokens.at, "token id " + std::to_string(tok) + " at position " + std::to_string(i) +
                                   " does not fit in 32 bits");
        tokens_.push_back(int32_t(tok));
        missingInf_ += isMissing(r.inf[i]);
        missingTrain_ += isMissing(r.train[i]);
        inf_.push_back(r.inf[i]);
        train_.push_back(r.train[i]);
        ++kept;
    }
    if (kept == 0) {   // a prompt without a response: nothing to compare
        ++empty_;
        return;
    }
    offsets_.push_back(int64_t(tokens_.size()));
    ids_.push_back(std::move(id));
    env_.push_back(r.env);
    step_.push_back(step);
    rank_.push_back(rank);
}

void ExportReader::readFile(const std::string& path, const std::string& root) {
    namespace fs = std::filesystem;
    const std::string text = readPlainOrGzip(path);
    // Where the file lies: its path below the tree's root (its name when given alone); step
    // and rank from the file's name, else from the nearest folder that names them
    // (prime-rl: token_exports/step_12/rank_3.jsonl).
    const fs::path rel = root.empty() ? fs::path(baseName(path)) : fs::path(path).lexically_relative(root);
    std::string fileStep, fileRank;
    for (fs::path p = rel; !p.empty(); p = p.parent_path()) {
        const std::string name = p.filename().string();
        if (fileStep.empty())
            fileStep = numberAfter(name, "step").value_or("");
        if (fileRank.empty())
            fileRank = numberAfter(name, "rank").value_or("");
        if (p == p.parent_path())
            break;
    }
    const std::string where = rel.generic_string();
    int64_t line = 0;
    size_t pos = 0, sinceReport = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        const size_t begin = pos;
        pos = end + 1;
        ++line;
        size_t e = end;
        if (e > begin && text[e - 1] == '\r')
            --e;
        if (std::string_view(text).substr(begin, e - begin).find_first_not_of(" \t") == std::string_view::npos)
            continue;
        try {
            record(text, begin, e, path, line, fileStep, fileRank, where);
        } catch (const ScanError& err) {
            int64_t l = 0, col = 0;
            lineColumn(std::string_view(text).substr(begin, e - begin), err.offset - begin, l, col);
            throw InputError::atText(path, line, col, err.message);
        }
        sinceReport += e - begin;
        if (sinceReport > (size_t(1) << 22)) {
            report(progress_, 0.9 * double(bytesDone_ + pos) / double(std::max<uint64_t>(bytesTotal_, 1)));
            sinceReport = 0;
        }
    }
    bytesDone_ += text.size();
}

Run ExportReader::read(const TrainerExports& exports, const std::string& runPath, const Progress& progress) {
    const std::vector<std::string>& files = exports.files;
    progress_ = progress;
    report(progress_, 0.0);
    for (const auto& f : files) {
        struct stat st {};
        if (::stat(f.c_str(), &st) == 0)
            bytesTotal_ += uint64_t(st.st_size) * (f.size() > 3 && f.compare(f.size() - 3, 3, ".gz") == 0 ? 4 : 1);
            // (a rough guess of what gzip expands to; only for progress)
    }
    for (size_t i = 0; i < files.size(); ++i)
        readFile(files[i], i < exports.roots.size() ? exports.roots[i] : std::string());
    if (ids_.empty())
        throw InputError::inFile(runPath, std::to_string(records_) + " record(s), none with a response token "
                                          "(loss_mask 1): nothing to compare");
    report(progress_, 0.9);

    Run run;
    run.path = runPath;
    run.ids = std::move(ids_);
    run.offsets = Array<int64_t>(std::move(offsets_));
    run.tokens = Array<int32_t>(std::move(tokens_));
    run.lpInf = Column(Array<double>(std::move(inf_)));
    run.lpTrain = Column(Array<double>(std::move(train_)));
    const size_t n = run.ids.size();
    SliceTable& st = run.slices;
    std::vector<const std::vector<std::optional<std::string>>*> columns;
    for (auto [key, col] : {std::pair{"env_name", &env_}, std::pair{"step", &step_}, std::pair{"rank", &rank_}})
        if (std::any_of(col->begin(), col->end(), [](const auto& v) { return v.has_value(); })) {
            st.keys.push_back(key);
            st.values.emplace_back();
            columns.push_back(col);
        }
    st.codes.assign(n * st.keys.size(), -1);
    for (size_t k = 0; k < st.keys.size(); ++k) {
        std::map<std::string, int32_t> codeOf;
        for (size_t s = 0; s < n; ++s) {
            const auto& v = (*columns[k])[s];
            if (!v)
                continue;
            const auto [it, fresh] = codeOf.emplace(*v, int32_t(st.values[k].size()));
            if (fresh)
                st.values[k].push_back(*v);
            st.codes[s * st.keys.size() + k] = it->second;
        }
    }
    json fileList = json::array();
    for (const auto& f : files)
        fileList.push_back(f);
    run.header = header_.is_object() ? header_ : json::object();
    if (!run.header.contains("source"))
        run.header["source"] = "kcx: trainer token export";
    run.header["import"] = {{"format", "trainer-export"},
                            {"files", fileList},
                            {"records", records_},
                            {"records_without_response", empty_},
                            {"records_sample_masked", sampleMasked_},
                            {"prompt_tokens_left_out", promptTokens_},
                            {"missing_inf", missingInf_},
                            {"missing_train", missingTrain_},
                            {"floored_inf", flooredInf_},
                            {"floored_train", flooredTrain_},
                            {"steps_skipped", exports.skipped}};
    run.checkInvariants();
    report(progress_, 1.0);
    return run;
}

bool isExportFile(const std::filesystem::directory_entry& e) {
    const std::string name = e.path().filename().string();
    auto ends = [&](std::string_view s) { return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
    std::error_code ec;
    return !name.empty() && name[0] != '.' && (ends(".jsonl") || ends(".jsonl.gz")) && e.is_regular_file(ec);
}

// Path order for reading: folder by folder, each name in natural order (step_2/ before
// step_10/, and a folder's files before the folders beside them are not interleaved).
bool pathLess(const std::filesystem::path& a, const std::filesystem::path& b) {
    auto i = a.begin(), j = b.begin();
    for (; i != a.end() && j != b.end(); ++i, ++j)
        if (i->string() != j->string())
            return naturalLess(i->string(), j->string());
    return i == a.end() && j != b.end();
}

constexpr int kMaxTreeDepth = 16;   // deeper trees are not trainer exports (and a loop is not walked forever)

void walk(const std::filesystem::path& dir, int depth, std::vector<std::filesystem::path>& files,
          std::vector<std::filesystem::path>& stepDirs, bool& anyStable) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name[0] == '.')
            continue;
        std::error_code ec2;
        if (name == kStableMarker && e.is_regular_file(ec2))
            anyStable = true;
        else if (isExportFile(e))
            files.push_back(e.path());
        else if (e.is_directory(ec2) && !e.is_symlink(ec2) && depth < kMaxTreeDepth) {
            if (numberAfter(name, "step"))
                stepDirs.push_back(e.path());
            walk(e.path(), depth + 1, files, stepDirs, anyStable);
        }
    }
    if (ec)
        throw InputError::inFile(dir.string(), "cannot list the directory: " + ec.message());
}

}  // namespace

bool naturalLess(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit((unsigned char)a[i]), db = std::isdigit((unsigned char)b[j]);
        if (da && db) {
            size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit((unsigned char)a[ie]))
                ++ie;
            while (je < b.size() && std::isdigit((unsigned char)b[je]))
                ++je;
            std::string_view x(a.data() + i, ie - i), y(b.data() + j, je - j);
            x.remove_prefix(std::min(x.find_first_not_of('0'), x.size()));
            y.remove_prefix(std::min(y.find_first_not_of('0'), y.size()));
            if (x.size() != y.size())
                return x.size() < y.size();
            if (x != y)
                return x < y;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j])
            return (unsigned char)a[i] < (unsigned char)b[j];
        ++i;
        ++j;
    }
    if ((a.size() - i) != (b.size() - j))
        return a.size() - i < b.size() - j;
    return a < b;   // equal under natural order (e.g. "01" and "1"): a total order all the same
}

TrainerExports findTrainerExports(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files, stepDirs;
    bool anyStable = false;
    walk(dir, 0, files, stepDirs, anyStable);
    if (files.empty())
        throw InputError::inFile(dir, "the directory holds no .jsonl or .jsonl.gz files (at any depth)");
    TrainerExports out;
    // prime-rl marks a finished step with STABLE in its folder: once any step has one, a step
    // folder without it is still being written, and is left out and named.
    std::vector<fs::path> unfinished;
    if (anyStable)
        for (const auto& d : stepDirs) {
            std::error_code ec;
            if (!fs::is_regular_file(d / kStableMarker, ec))
                unfinished.push_back(d);
        }
    std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
        return pathLess(a.lexically_relative(dir), b.lexically_relative(dir));
    });
    for (const auto& f : files) {
        const bool skip = std::any_of(unfinished.begin(), unfinished.end(), [&](const fs::path& d) {
            const fs::path rel = f.lexically_relative(d);
            return !rel.empty() && *rel.begin() != "..";
        });
        if (!skip) {
            out.files.push_back(f.string());
            out.roots.push_back(dir);
        }
    }
    std::sort(unfinished.begin(), unfinished.end(), [&](const fs::path& a, const fs::path& b) {
        return pathLess(a.lexically_relative(dir), b.lexically_relative(dir));
    });
    for (const auto& d : unfinished)
        out.skipped.push_back((fs::path(dir) / d.lexically_relative(dir)).generic_string());
    if (out.files.empty())
        throw InputError::inFile(dir, "every step folder that holds exports lacks the STABLE marker (still being "
                                      "written): nothing finished to read");
    return out;
}

void TrainerExports::add(const TrainerExports& more) {
    files.insert(files.end(), more.files.begin(), more.files.end());
    roots.insert(roots.end(), more.roots.begin(), more.roots.end());
    skipped.insert(skipped.end(), more.skipped.begin(), more.skipped.end());
}

Run loadTrainerExports(const TrainerExports& exports, const std::string& runPath, const Progress& progress) {
    return ExportReader().read(exports, runPath, progress);
}

Run loadTrainerExport(const std::string& path, const Progress& progress) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return loadTrainerExports(findTrainerExports(path), path, progress);
    return loadTrainerExports({{path}, {""}, {}}, path, progress);
}

}  // namespace kcx
