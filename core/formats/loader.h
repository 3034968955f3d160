// Opening a run file of any supported kind (SPEC 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/errors.h"
#include "core/formats/run.h"

namespace kcx {

// The longest JSON Lines line accepted by default: $KCX_MAX_LINE ("64M", bytes, ...), else
// 1 GB. A malformed KCX_MAX_LINE throws InputError naming the variable.
size_t defaultMaxLineBytes();

struct LoadOptions {
    // Longest accepted JSONL line in bytes (a hostile file must not exhaust memory).
    size_t maxLineBytes = defaultMaxLineBytes();
    // NumPy input: read 2-byte arrays stored as <u2 or <V2 as bfloat16 bits (torch's
    // bf16 tensors reach numpy that way); without it they are rejected with a hint.
    bool bf16 = false;
    // The memory a run that is read whole (JSON Lines, gzip, the deflated members of a
    // .npz) may take; 0 = memoryLimit(). Safetensors runs and stored .npz/.npy arrays are
    // mapped and stream from disk: not limited.
    uint64_t maxMemoryBytes = 0;
};

// The memory KCX may use for a run it reads whole: $KCX_MAX_MEMORY ("8G", "512M", "2T" or
// bytes), else 80% of the machine's physical memory. A malformed KCX_MAX_MEMORY throws
// InputError naming the variable.
uint64_t memoryLimit();

// What the JSON Lines reader counts against the limit besides the text and the arrays
// (measured with `kcx check`, docs/reliability.md): the process itself, and per token the
// evaluation's metric columns: log-prob metrics, and the top-k and full-logit groups.
inline constexpr uint64_t kProcessBytes = uint64_t(40) << 20;
inline constexpr uint64_t kEvaluationBytesPerToken = 20;
inline constexpr uint64_t kTopKEvaluationBytesPerToken = 48;
inline constexpr uint64_t kLogitEvaluationBytesPerToken = 80;
// "8G" -> 8 GiB: digits with an optional K, M, G or T (powers of 1024) and "B"/"iB";
// nothing on anything else.
std::optional<uint64_t> parseMemorySize(const std::string& text);
// "1.5 GB" (powers of 1024), for messages.
std::string memoryText(uint64_t bytes);

// Chooses the loader by content (core/formats/sniff.h): gzip or plain JSON Lines (SPEC 1.1 runs and
// trainer token exports, told apart by the first record's keys), safetensors, NumPy .npz,
// and directories of .npy arrays or of trainer export files. One-sided log-prob dumps
// (OpenAI, SGLang, plain arrays) are rejected with a pointer to `kcx import`. Throws
// InputError naming the file and place; Cancelled when the progress callback asks to stop.
// Nothing half-built escapes: the run is returned whole.
Run loadRun(const std::string& path, const Progress& progress = {}, const LoadOptions& = {});

// Several runs read as one, sequences in the order given (`--run A --run B`): trainer
// exports (files and trees) through one reader, anything else each by loadRun, then joined.
// Ids must be unique across them; runs with top-k or logits must all have them, with the
// same k and V; slice keys are the union (a run without a key leaves it unlabeled);
// rewards, runtime facts and text a run lacks are missing. header.joined lists the paths.
Run loadRuns(const std::vector<std::string>& paths, const Progress& progress = {}, const LoadOptions& = {});
Run joinRuns(std::vector<Run> runs);

// SPEC 1.1: JSON Lines, optionally gzip-compressed (detected by magic bytes).
Run loadJsonl(const std::string& path, const Progress& progress = {}, const LoadOptions& = {});

// SPEC 1.2: safetensors, memory-mapped; float32/float64/int tensors are used in place.
Run loadSafetensors(const std::string& path, const Progress& progress = {});

// The same from bytes already in memory (tests, decompressed input). `name` is used in errors.
Run parseJsonl(std::string_view text, const std::string& name, const Progress& progress = {},
               const LoadOptions& = {});

}  // namespace kcx
