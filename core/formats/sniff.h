// What a path holds, told by content (core/formats/loader.cpp's loadRun dispatches on it).
//
//   - a directory: "offsets.npy" in it -> NumPy arrays; *.jsonl / *.jsonl.gz files -> a
//     trainer token export (one file per step and rank);
//   - \x93NUMPY -> one .npy array (not a run by itself); "PK\3\4" / "PK\5\6" -> .npz;
//   - 8-byte length then '{' -> safetensors;
//   - gzip or text starting with '{' -> JSON Lines, told apart by the top-level keys of the
//     first record after an optional {"kcx_header": ...} line: token_ids with loss_mask or
//     inference_logprobs/trainer_logprobs -> trainer export; choices / response (OpenAI,
//     OpenAI batch), meta_info (SGLang), details + generated_text (TGI) or output (OpenAI
//     Responses) -> one side of an import; anything else -> SPEC
//     1.1 (a single log-prob array, logp or only one of logp_train / logp_inf, is noted so
//     that the loader's error can point at `kcx import`);
//   - text starting with "data:" / "event:" (a saved stream), or '[' and a first element
//     whose keys make it a response (an array of responses) -> one side of an import;
//   - files of other tools that KCX does not read are named (foreignFormat(): a PyTorch
//     .pt, a pickle, Parquet, Arrow IPC / Feather) and rejected with a pointer to the
//     Python in docs/formats.md that converts them;
//   - gzip or JSON whose first key is "kcx_summary" -> a KCX summary (kcx summarize);
//   - otherwise the file name (.safetensors, .npz), else SPEC 1.1 (whose loader then
//     names what is wrong).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct gzFile_s;   // zlib's gzFile

namespace kcx {

enum class RunKind {
    Empty,              // an empty file
    SpecJsonl,          // SPEC 1.1, plain or gzip
    Safetensors,        // SPEC 1.2
    Npz,                // NumPy archive
    Npy,                // a single NumPy array
    NpyDirectory,       // a directory of NAME.npy files
    TrainerExport,      // one trainer export file
    TrainerDirectory,   // a directory of trainer export files
    OneSide,            // one kernel's log-prob dump (needs kcx import)
    UnknownDirectory,   // a directory with neither
    Foreign,            // another tool's file KCX does not read (detail: what it is)
    Summary,            // a KCX summary (core/summary, docs/summaries.md): the binary container, or JSON whose first key is kcx_summary
};

// The first bytes of a summary's binary container (after gzip, when compressed).
inline constexpr std::string_view kSummaryBinaryMagic{"\x89KCXSUM\n", 8};

struct Sniffed {
    RunKind kind = RunKind::SpecJsonl;
    // OneSide: which shape ("OpenAI chat or completions responses", ...). Foreign: what the
    // file is ("a PyTorch file (torch.save) ..."). SpecJsonl: when
    // not empty, the record looks like one side's plain arrays (this says which), and an
    // error of the SPEC 1.1 loader gets a pointer to `kcx import`.
    std::string detail;
};

// Throws InputError when the path cannot be opened.
Sniffed sniffRun(const std::string& path);

// What a file is when it is one of the formats ML code saves its tensors in and KCX does not
// read, told from its first bytes (`head`, at least 512 when the file is that long) and
// its last ones (`tail`, at least 4): "a PyTorch file (torch.save, a ZIP archive with
// data.pkl)", "a Python pickle", "a Parquet file", "an Arrow IPC file (Feather v2)", "a
// Feather v1 file"; empty for anything else.
std::string foreignFormat(std::string_view head, std::string_view tail);
// The error for such a file: what it is, and where docs/formats.md shows the few lines of
// Python that turn it into KCX JSON Lines.
std::string foreignFormatMessage(const std::string& what);

// The first n bytes of a file (fewer when it is shorter). Throws InputError when it cannot
// be opened.
std::string fileHead(const std::string& path, size_t n);
// The whole file, plain or gzip-compressed (gzread passes plain files through). Throws
// InputError for a file that cannot be opened, is not a regular file, or is corrupt gzip;
// and, with maxBytes, once the text would exceed it ("what" names the text in the message).
// `memberStarts` (when not null) receives the offsets in the result where the gzip members
// after the first began.
// A file of several members that each say their size in the header (writeGzipMember) is
// inflated on every CPU at once; any other, member by member.
std::string readPlainOrGzip(const std::string& path, size_t maxBytes = SIZE_MAX, const char* what = "text",
                            std::vector<size_t>* memberStarts = nullptr);
// Appends `text` to `out` as one gzip member at zlib's `level`, its header without time or
// name and with an extra field "KX" (RFC 1952's FEXTRA) holding the member's size in bytes,
// 8 bytes little-endian: a reader can find every member without inflating any (other
// readers skip the field). Equal text, equal bytes.
void writeGzipMember(std::string_view text, int level, std::string& out);
uint64_t gzipParallelInflates();   // files inflated in parallel since the process began
// A gzip (or plain: zlib passes it through) read stream on a regular file, opened safely
// (core/base/safe_open.h: a FIFO or a device is refused before reading). Throws InputError.
::gzFile_s* openGzipRead(const std::string& path);

// The top-level keys of the first JSON Lines record (after a kcx_header line), read from a
// plain or gzip file, scanning at most `maxBytes` of text. `complete` is false when the
// record did not end within that (the keys seen so far are returned) or the text is not a
// JSON object.
std::vector<std::string> firstRecordKeys(const std::string& path, size_t maxBytes, bool& complete);

// The kind a record with these top-level keys belongs to (SpecJsonl, TrainerExport or
// OneSide with `detail`). Keys a record lacks only count when it was seen `complete`.
Sniffed classifyRecordKeys(const std::vector<std::string>& keys, bool complete);

}  // namespace kcx
