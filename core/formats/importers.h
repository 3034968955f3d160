// Importing the log-prob files people already have (issue 6; docs/formats.md).
//
// One side (inference or training) is a JSON Lines file with one record per line, in any
// of these shapes, detected per line:
//   - OpenAI chat completion (vLLM, SGLang, OpenAI servers):
//       choices[0].logprobs.content[j] = {token, logprob, bytes, top_logprobs: [{token, logprob}]}
//   - OpenAI completion: choices[0].logprobs = {tokens, token_logprobs, top_logprobs: [{tok: lp}]}
//   - either of those wrapped as an OpenAI batch output line: {custom_id, response: {body: ...}}
//   - SGLang native /generate: meta_info.output_token_logprobs = [[logprob, token_id, text]],
//       meta_info.output_top_logprobs = [[[logprob, token_id, text], ...]] (optional)
//   - plain arrays: {"id", "logp_train" | "logp_inf" | "logp": [...], "tokens": [int | string]}
// The record id is `kcx_id`, else `custom_id`, else `id` (else SGLang's meta_info.id);
// an optional `metadata` object gives slice labels. Log-probs that are null or vLLM's
// placeholder -9999.0 are missing (never numbers); "NaN"/"Infinity" strings and bare
// NaN/Infinity/-Infinity (Python's json.dumps) are non-finite numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/formats/run.h"

namespace kcx {

// A token as one side saw it: its text, its id, or both.
struct ImportedToken {
    std::string text;
    int64_t id = -1;        // -1 = unknown
    bool hasText = false;
};

struct ImportedAlternative {
    ImportedToken token;
    double logp = 0;
};

struct ImportedRecord {
    std::string id;
    int64_t line = 0;                                            // 1-based line in its file
    std::vector<std::pair<std::string, std::string>> labels;     // from `metadata`
    std::vector<ImportedToken> tokens;                           // may be empty (plain arrays without tokens)
    std::vector<double> logp;                                    // missing = missingDouble()
    std::vector<std::vector<ImportedAlternative>> top;           // empty, or one row per position
};

struct ImportedSide {
    std::string path;
    std::vector<std::string> formats;   // shapes seen: openai-chat, openai-completions, sglang, plain
    std::vector<ImportedRecord> records;
    size_t missing = 0;                 // log-probs that were null or -9999.0
    size_t missingTop = 0;              // top-k entries dropped for the same reason
};

// Reads one side (plain or gzip). Throws InputError "FILE:LINE:COL: ..." for broken JSON,
// an unknown shape, a record without an id, a duplicate id or arrays of unequal length.
ImportedSide readLogprobFile(const std::string& path);
ImportedSide parseLogprobJsonl(std::string_view text, const std::string& name);

struct ImportOptions {
    bool allowMismatch = false;   // drop records whose tokens differ instead of failing
};

// One position where the two sides saw different tokens (or one side had ended).
struct TokenMismatch {
    std::string id;
    size_t position = 0;
    std::string inf, train;       // human-readable tokens, "(end)" past a side's end
};

struct ImportResult {
    Run run;                                  // valid when ok()
    std::vector<TokenMismatch> mismatches;    // every mismatched position
    size_t mismatchedRecords = 0;             // records with at least one mismatch
    size_t droppedRecords = 0;                // dropped for mismatch (allowMismatch)
    std::vector<std::string> onlyInf, onlyTrain;   // ids present on one side only
    size_t paired = 0;                        // records present on both sides
    size_t uncheckedPositions = 0;            // positions where no token could be compared
    size_t missingInf = 0, missingTrain = 0;  // null / -9999.0 log-probs, per side
    int topkInf = 0, topkTrain = 0;           // k kept per side (0 = none)
    size_t topkRowsTrimmed = 0;               // rows longer than k, cut to the k most likely
    bool vocabularyIds = false;               // ids assigned from token strings (see importPair)
    size_t vocabularySize = 0;
    bool failed = false;                      // mismatches without allowMismatch: no run
    bool ok() const { return !failed; }
};

// Pairs records by id (in the inf file's order) and positions by order, checks that both
// sides saw the same tokens (ids when both sides have ids, else token strings) and builds
// a run. With mismatches and !allowMismatch, `run` is left empty and ok() is false.
//
// Token ids: when every sampled token and every top-k alternative carries an id (SGLang,
// or plain `tokens` arrays of integers) those ids are used. Otherwise ids come from a
// vocabulary of token strings: each distinct string gets the next id 0, 1, 2, ... in order
// of first appearance, walking the paired records in the inf file's order and, at each
// position, the sampled token, then the inf side's alternatives, then the train side's. A
// token known only by id is keyed "<id N>". The vocabulary is stored in the run header
// (`import.vocabulary`, index = id) and the strings are kept as per-token text.
ImportResult importPair(const ImportedSide& inf, const ImportedSide& train, const ImportOptions& = {});

// vLLM writes -9999.0 where it has no log-prob (for example a prompt's first token).
inline constexpr double kVllmPlaceholder = -9999.0;

}  // namespace kcx
