// Joining parsed JSONL chunks into one run, and reading JSONL files (plain or gzip).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "core/base/errors.h"
#include "core/formats/json_scan.h"
#include "core/formats/jsonl_parts.h"
#include "core/formats/loader.h"
#include "core/formats/sniff.h"
#include "core/formats/tensor_run.h"

namespace kcx {
namespace detail {
namespace {

template <class T>
void append(std::vector<T>& to, std::vector<T>& from) {
    if (to.empty())
        to.swap(from);
    else
        to.insert(to.end(), from.begin(), from.end());
    std::vector<T>().swap(from);
}

[[noreturn]] void failAt(std::string_view text, const std::string& name, size_t offset, const std::string& msg) {
    int64_t line, col;
    lineColumn(text, offset, line, col);
    throw InputError::atText(name, line, col, msg);
}

}  // namespace

Run joinChunks(std::vector<ChunkRun>& parts, std::string_view text, const std::string& name) {
    size_t n = 0;
    for (const auto& p : parts) {
        n += p.ids.size();

    }
    if (n == 0)
        throw InputError::inFile(name, text.find_first_not_of(" \t\r\n") == std::string_view::npos
                                           ? "the file is empty: expected one JSON object per line"
                                           : "no sequences: the file holds only a header");
    // Identifiers are unique within a run.
    {
        std::unordered_map<std::string_view, size_t> seen;
        seen.reserve(n);
        for (const auto& p : parts)
            for (size_t s = 0; s < p.ids.size(); ++s) {
                const auto [it, fresh] = seen.emplace(p.ids[s], p.lineStarts[s]);
                if (!fresh) {
                    int64_t line, col;
                    lineColumn(text, it->second, line, col);
                    failAt(text, name, p.lineStarts[s],
                           "duplicate sequence id '" + p.ids[s] + "' (first used on line " + std::to_string(line) + ")");
                }
            }
    }
    // k and V agree across chunks.
    int k[2] = {0, 0};
    int64_t vocab = 0;
    for (const auto& p : parts) {
        for (int w = 0; w < 2; ++w)
            if (p.topkK[w]) {
                if (!k[w])
                    k[w] = p.topkK[w];
                else if (k[w] != p.topkK[w])
                    failAt(text, name, p.topkFirstAt[w],
                           std::string(w ? "topk_inf" : "topk_train") + " has k = " + std::to_string(p.topkK[w]) +
                               " but an earlier sequence has k = " + std::to_string(k[w]));
            }
        if (p.vocab) {
            if (!vocab)
                vocab = p.vocab;
            else if (vocab != p.vocab)
                failAt(text, name, p.lineStarts.front(), "logits have V = " + std::to_string(p.vocab) +
                                                             " but an earlier sequence has V = " + std::to_string(vocab));
        }
    }

    Run run;
    run.path = name;
    run.header = parts.front().header;
    run.ids.reserve(n);
    std::vector<int64_t> offsets{0};
    offsets.reserve(n + 1);
    std::vector<int32_t> tokens;
    std::vector<double> lpTrain, lpInf, rewardTrain, rewardInf;
    std::vector<int32_t> topIds[2];
    std::vector<double> topLogp[2];
    std::vector<int64_t> logitRows;
    std::vector<double> logitsTrain, logitsInf;
    bool anyText = false, anyReward[2] = {false, false}, anyRuntime = false;
    for (const auto& p : parts) {
        for (bool t : p.hasText)
            anyText = anyText || t;
        anyReward[0] = anyReward[0] || p.haveReward[0];
        anyReward[1] = anyReward[1] || p.haveReward[1];
        for (const auto& r : p.runtime)
            anyRuntime = anyRuntime || !r.is_null();
    }
    std::unordered_map<std::string, size_t> keyIndex;
    std::vector<std::unordered_map<std::string, int32_t>> valueIndex;
    std::vector<std::vector<std::pair<size_t, int32_t>>> seqLabels;   // per sequence (key, code)
    seqLabels.reserve(n);

    for (auto& p : parts) {
        const size_t base = tokens.size();
        const size_t ns = p.ids.size();
        for (size_t s = 0; s < ns; ++s) {
            run.ids.push_back(std::move(p.ids[s]));
            offsets.push_back(offsets.back() + p.lengths[s]);
        }
        // Top-k: pad sequences without it with missing rows so every kernel has M*k.
        for (int w = 0; w < 2; ++w) {
            if (!k[w])
                continue;
            size_t src = 0;
            for (size_t s = 0; s < ns; ++s) {
                const size_t cells = size_t(p.lengths[s]) * size_t(k[w]);
                if (p.hasTopk[w][s]) {
                    topIds[w].insert(topIds[w].end(), p.topkIds[w].begin() + ptrdiff_t(src),
                                     p.topkIds[w].begin() + ptrdiff_t(src + cells));
                    topLogp[w].insert(topLogp[w].end(), p.topkLogp[w].begin() + ptrdiff_t(src),
                                      p.topkLogp[w].begin() + ptrdiff_t(src + cells));
                    src += cells;
                } else {
                    topIds[w].insert(topIds[w].end(), cells, -1);
                    topLogp[w].insert(topLogp[w].end(), cells, missingDouble());
                }
            }
            std::vector<int32_t>().swap(p.topkIds[w]);
            std::vector<double>().swap(p.topkLogp[w]);
        }
        for (int64_t r : p.logitRows)
            logitRows.push_back(r + int64_t(base));
        append(logitsTrain, p.logitsTrain);
        append(logitsInf, p.logitsInf);
        if (anyText) {
            if (run.textOffsets.empty())
                run.textOffsets.push_back(0);
            const uint64_t poolBase = run.textPool.size();
            for (uint64_t e : p.textEnds)
                run.textOffsets.push_back(poolBase + e);
            run.textPool += p.textPool;
            std::string().swap(p.textPool);
        }
        append(tokens, p.tokens);
        append(lpTrain, p.lpTrain);
        append(lpInf, p.lpInf);
        append(rewardTrain, p.rewardTrain);
        append(rewardInf, p.rewardInf);
        for (auto& labels : p.slices) {
            seqLabels.emplace_back();
            for (auto& [key, value] : labels) {
                auto [kit, fresh] = keyIndex.emplace(key, run.slices.keys.size());
                if (fresh) {
                    run.slices.keys.push_back(key);
                    run.slices.values.emplace_back();
                    valueIndex.emplace_back();
                }
                auto& vi = valueIndex[kit->second];
                auto [vit, vfresh] = vi.emplace(value, int32_t(run.slices.values[kit->second].size()));
                if (vfresh)
                    run.slices.values[kit->second].push_back(value);
                seqLabels.back().emplace_back(kit->second, vit->second);
            }
        }
        if (anyRuntime)
            for (auto& r : p.runtime)
                run.runtime.push_back(r.is_null() ? nlohmann::json::object() : std::move(r));
    }
    const size_t K = run.slices.keys.size();
    run.slices.codes.assign(n * K, -1);
    for (size_t s = 0; s < n; ++s)
        for (auto [key, code] : seqLabels[s])
            run.slices.codes[s * K + key] = code;

    run.offsets = Array<int64_t>(std::move(offsets));
    run.tokens = Array<int32_t>(std::move(tokens));
    run.lpTrain = Column(Array<double>(std::move(lpTrain)));
    run.lpInf = Column(Array<double>(std::move(lpInf)));
    TopK* tk[2] = {&run.topkTrain, &run.topkInf};
    for (int w = 0; w < 2; ++w)
        if (k[w]) {
            tk[w]->k = k[w];
            tk[w]->ids = Array<int32_t>(std::move(topIds[w]));
            tk[w]->logp = Column(Array<double>(std::move(topLogp[w])));
        }
    if (vocab) {
        run.logits.vocab = vocab;
        run.logits.rows = Array<int64_t>(std::move(logitRows));
        run.logits.train = Column(Array<double>(std::move(logitsTrain)));
        run.logits.inf = Column(Array<double>(std::move(logitsInf)));
    }
    if (anyReward[0])
        run.rewardTrain = std::move(rewardTrain);
    if (anyReward[1])
        run.rewardInf = std::move(rewardInf);
    run.checkInvariants();
    return run;
}

}  // namespace detail

namespace {

// The file's bytes: mapped when plain, inflated when gzip.
struct FileText {
    std::string owned;
    const char* data = nullptr;
    size_t size = 0;
    std::shared_ptr<const tensors::Mapping> map;
    std::string_view view() const { return {data, size}; }
};

void readPlain(const std::string& path, FileText& out) {
    out.map = tensors::mapFile(path);
    out.size = out.map->size;
    out.data = reinterpret_cast<const char*>(out.map->data);
    if (out.size)
        madvise(const_cast<unsigned char*>(out.map->data), out.size, MADV_SEQUENTIAL);
}

// A JSON Lines run is read whole: its arrays take about as much memory as its text (a
// plain file is mapped; a gzip file's text is held as well). Refused, saying what to do,
// when that exceeds the limit; safetensors runs are mapped and stream from disk instead.
[[noreturn]] void tooBig(const std::string& path, uint64_t need, uint64_t limit, const char* what) {
    throw InputError::inFile(path, std::string("reading this ") + what + " run needs about " + memoryText(need) +
                                       " of memory, more than the " + memoryText(limit) +
                                       " KCX may use here (80% of memory; KCX_MAX_MEMORY sets it). JSON Lines runs "
                                       "are read whole, safetensors runs are mapped and stream from disk: convert "
                                       "this one where there is more memory (kcx convert RUN --out RUN.safetensors)");
}

// Inflated as it goes, and stopped as soon as the text passes either limit: the memory
// limit (half of it: the arrays take about as much again) or the line limit (a line with
// no end yet longer than KCX_MAX_LINE). The text's buffer never grows past the limit plus
// one read, so a small file of zeros cannot inflate into gigabytes before the refusal.
void readGzip(const std::string& path, FileText& out, const Progress& progress, uint64_t maxText, size_t maxLine) {
    // zlib's gzread ignores bytes after the last gzip member, so a file with garbage
    // appended read as if it ended there (issue 16, case 8). The mapped file (a regular
    // file: mapFile refuses the rest) is inflated here member by member, and anything after
    // the last member that is not another member is refused at its byte. Inflation stops
    // as it goes at the memory limit and at an over-long line, never after the whole text.
    const auto map = tensors::mapFile(path);
    const auto* in = reinterpret_cast<const Bytef*>(map->data);
    const uint64_t size = map->size;
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        throw InputError::inFile(path, "cannot start gzip decompression");
    struct End {
        z_stream& z;
        ~End() { inflateEnd(&z); }
    } end{z};
    uint64_t pos = 0;            // bytes of the file consumed
    uint64_t line = 1;           // the line being read (1-based)
    size_t lineStart = 0;        // where it starts in out.owned
    std::vector<char> buf(size_t(4) << 20);
    for (;;) {
        const uInt chunkIn = uInt(std::min<uint64_t>(size - pos, uint64_t(1) << 30));
        z.next_in = const_cast<Bytef*>(in + pos);
        z.avail_in = chunkIn;
        z.next_out = reinterpret_cast<Bytef*>(buf.data());
        z.avail_out = uInt(buf.size());
        const int rc = inflate(&z, Z_NO_FLUSH);
        pos += chunkIn - z.avail_in;
        const size_t got = buf.size() - z.avail_out;
        if (out.owned.size() + got > maxText)
            tooBig(path, 2 * (uint64_t(out.owned.size()) + got), 2 * maxText, "gzip-compressed JSON Lines (at least)");
        if (out.owned.size() + got > out.owned.capacity())   // doubling, capped at the limit
            out.owned.reserve(size_t(std::min<uint64_t>(std::max<uint64_t>(2 * out.owned.capacity(), 1 << 22),
                                                        maxText + buf.size())));
        const size_t before = out.owned.size();
        out.owned.append(buf.data(), got);
        for (const char* p = out.owned.data() + before; (p = static_cast<const char*>(std::memchr(
                                                              p, '\n', size_t(out.owned.data() + out.owned.size() - p))));
             ++p) {
            ++line;
            lineStart = size_t(p - out.owned.data()) + 1;
        }
        if (out.owned.size() - lineStart > maxLine)
            throw InputError::atText(path, int64_t(line), 0,
                                     "line is longer than the limit of " + std::to_string(maxLine) +
                                         " bytes (KCX_MAX_LINE sets it); stopped inflating the gzip stream there");
        if (size)
            report(progress, 0.3 * double(pos) / double(size));
        if (rc == Z_STREAM_END) {
            if (pos == size)
                break;
            if (size - pos >= 2 && in[pos] == 0x1f && in[pos + 1] == 0x8b) {   // another member (cat a.gz b.gz)
                inflateReset(&z);
                continue;
            }
            throw InputError::atByte(path, pos, std::to_string(size - pos) +
                                                    " bytes of trailing data after the end of the gzip stream");
        }
        if (rc == Z_BUF_ERROR && pos == size)
            throw InputError::atByte(path, pos, "the gzip stream is cut short (the file ends inside it)");
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            throw InputError::atByte(path, pos, std::string("corrupt gzip data: ") + (z.msg ? z.msg : "inflate failed"));
        if (rc == Z_BUF_ERROR && z.avail_out == buf.size())   // no progress, input left: cannot happen
            throw InputError::atByte(path, pos, "corrupt gzip data");
    }
    out.data = out.owned.data();
    out.size = out.owned.size();
}

}  // namespace

bool isGzipFile(const std::string& path);

namespace detail {

// What reading a JSON Lines run costs in memory, for the limit (KCX_MAX_MEMORY): its text
// (mapped, resident as it is read; a gzip run's text is held), its arrays, and what the
// command then computes per token. The arrays are measured on the parsed first lines (at
// least 4 MB, whole lines) and scaled to the whole text, so a run of short numbers (4
// bytes of text become 8 of array) is not taken for one of long numbers. Before, the
// estimate was the text size alone and a run accepted under 300M peaked at 698 MB (issue
// 16). The factors were measured against the peak resident size of `kcx check`
// (tests/cli/cli_memory_test.sh checks it on four kinds of run).
// A text no larger than the sample is parsed whole: that run is returned with the need, so
// that it is not parsed twice.
struct MemoryNeed {
    uint64_t bytes = 0;
    std::optional<Run> whole;
};
MemoryNeed jsonlMemoryNeed(std::string_view text, const std::string& name, const LoadOptions& options) {
    constexpr size_t kSample = size_t(4) << 20;
    size_t cut = text.size();
    if (text.size() > kSample) {
        const size_t nl = text.find('\n', kSample);
        cut = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    MemoryNeed need;
    uint64_t arrays = 0, tokens = 0, perToken = kEvaluationBytesPerToken;
    if (cut < text.size() && cut > (size_t(256) << 20)) {
        // The first lines alone are huge (full logits): every number at its most.
        arrays = text.size() * 4;
        tokens = text.size() / 16;
        perToken += kTopKEvaluationBytesPerToken + kLogitEvaluationBytesPerToken;
    } else {
        Run sample = parseJsonl(text.substr(0, cut), name, {}, options);
        const double scale = double(text.size()) / double(std::max<size_t>(cut, 1));
        arrays = uint64_t(double(sample.approxBytes()) * scale);
        tokens = uint64_t(double(sample.tokenCount()) * scale);
        if (sample.hasTopK())
            perToken += kTopKEvaluationBytesPerToken;
        if (sample.hasLogits())
            perToken += kLogitEvaluationBytesPerToken;
        if (cut == text.size())
            need.whole = std::move(sample);
    }
    // The process itself; the arrays twice (the parse's chunks and the joined run exist
    // together while they are joined); then per token the evaluation's columns, more when
    // the run has top-k or logits (their metric groups are computed for every token).
    need.bytes = kProcessBytes + uint64_t(text.size()) + 2 * arrays + tokens * perToken;
    return need;
}

}  // namespace detail

Run loadJsonl(const std::string& path, const Progress& progress, const LoadOptions& options) {
    FileText text;
    const uint64_t limit = options.maxMemoryBytes ? options.maxMemoryBytes : memoryLimit();
    if (isGzipFile(path)) {
        readGzip(path, text, progress, limit / 2, options.maxLineBytes);
        auto need = detail::jsonlMemoryNeed(text.view(), path, options);
        if (need.bytes > limit)
            tooBig(path, need.bytes, limit, "gzip JSON Lines");
        if (need.whole)
            return std::move(*need.whole);
        const Progress rest = progress ? Progress([&](double f) { return progress(0.3 + 0.7 * f); }) : Progress();
        return parseJsonl(text.view(), path, rest, options);
    }
    readPlain(path, text);
    auto need = detail::jsonlMemoryNeed(text.view(), path, options);
    if (need.bytes > limit)
        tooBig(path, need.bytes, limit, "JSON Lines");
    if (need.whole)
        return std::move(*need.whole);
    return parseJsonl(text.view(), path, progress, options);
}

}  // namespace kcx
