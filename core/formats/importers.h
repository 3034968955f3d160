// Importing the log-prob files people already have (issue 6, issue 18; docs/formats.md).
//
// One side (inference or training) is a file of responses in any of these shapes, detected
// per response:
//   - OpenAI chat completion (vLLM, SGLang, OpenAI servers):
//       choices[i].logprobs.content[j] = {token, logprob, bytes, top_logprobs: [{token, logprob}]}
//   - OpenAI completion: choices[i].logprobs = {tokens, token_logprobs, top_logprobs: [{tok: lp}]}
//   - either of those wrapped as an OpenAI / vLLM batch output line: {custom_id, response: {body: ...}}
//   - SGLang native /generate: meta_info.output_token_logprobs = [[logprob, token_id, text]],
//       meta_info.output_top_logprobs = [[[logprob, token_id, text], ...]] (optional); the same
//       meta_info inside a chat choice (choices[i].meta_info) is preferred there (it gives ids)
//   - TGI /generate with details: details.tokens[j] = {id, text, logprob, special},
//       details.top_tokens[j][] (optional); details.prefill (the prompt) is left out
//   - OpenAI Responses API: output[].content[type=output_text].logprobs[j] = {token, logprob,
//       top_logprobs: [{token, logprob}]}
//   - plain arrays: {"id", "logp_train" | "logp_inf" | "logp": [...], "tokens": [int | string]}
// The file is JSON Lines (a line may also be an array of responses, as SGLang's batch
// /generate returns), one JSON document (an object, or an array of responses; pretty-printed
// or not), or a server-sent-event stream ("data: {chunk}" lines ending in "data: [DONE]") of
// chat completion chunks, whose log-probs are joined into one record per stream and choice.
//
// A response with several choices (n > 1, several prompts) becomes one record per choice,
// with the id "ID#INDEX" (INDEX from choices[i].index, else the position); a single choice
// keeps the plain id. The record id is `kcx_id`, else `custom_id`, else `id` (else SGLang's
// meta_info.id); an optional `metadata` object gives slice labels.
//
// Log-probs: null is missing; "NaN"/"Infinity" strings and bare NaN/Infinity/-Infinity
// (Python's json.dumps) are non-finite numbers. vLLM's -9999.0 is its floor, max(lp, -9999.0):
// a log-prob at or below it, kept as read here; importPair() reads it as -infinity (a
// non-finite number, SPEC 2.5) and counts it as floored, never as missing.
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
    // A scoring response (vLLM prompt_logprobs, completions with echo): the positions start
    // with the prompt. importPair keeps the part the other side scored: from `promptLength`
    // (kcx_prompt_len in `metadata` or at top level) when given, else where the other side's
    // tokens are found (a suffix, else the last contiguous match).
    bool withPrompt = false;
    int64_t promptLength = -1;   // -1 = unknown
};

// A response the server failed (a batch output line with an error) or could not give
// log-probs for: left out of the run and named in the import summary.
struct SkippedRecord {
    std::string id;
    int64_t line = 0;
    std::string reason;
};

struct ImportedSide {
    std::string path;
    std::vector<std::string> formats;   // shapes seen: openai-chat, openai-completions, sglang, tgi, ...
    std::vector<ImportedRecord> records;
    std::vector<SkippedRecord> skipped; // failed requests, in file order
    size_t choicesSplit = 0;            // responses with several choices (one record per choice)
    size_t bestOfIgnored = 0;           // TGI best_of_sequences left out (only the chosen one is read)
};

// Reads one side (plain or gzip). Throws InputError "FILE:LINE:COL: ..." for broken JSON,
// an unknown shape, a record without an id, a duplicate id or choice index, arrays of
// unequal length or a cut stream, and names what a file is when it is no such text
// (a PyTorch .pt, a pickle, Parquet, Arrow/Feather: see sniff.h's foreignFormat()).
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
    size_t missingInf = 0, missingTrain = 0;  // null log-probs in the run, per side
    size_t flooredInf = 0, flooredTrain = 0;  // vLLM's -9999.0 in the run, read as -infinity
    size_t missingTop = 0;                    // top-k entries null or -9999.0, kept as missing entries
    size_t promptInf = 0, promptTrain = 0;    // prompt positions of scoring responses, left out
    std::vector<SkippedRecord> skippedInf, skippedTrain;   // failed requests, left out
    size_t choicesSplit = 0;                  // responses (both sides) split one record per choice
    size_t bestOfIgnored = 0;                 // TGI best_of_sequences left out (both sides)
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
//
// The header's `import` object also holds the counts above (missing_*, floored_*,
// prompt_left_out_*, choices_split, best_of_ignored) and `skipped`: each side's skipped
// records {side, id, line, reason}. Throws InputError at a scoring record whose response
// positions cannot be found.
ImportResult importPair(const ImportedSide& inf, const ImportedSide& train, const ImportOptions& = {});

// vLLM's floor: it writes max(lp, -9999.0), and -9999.0 where a chat token has no log-prob
// entry. A log-prob of exactly this value is "at or below the floor" (read as -infinity).
inline constexpr double kVllmPlaceholder = -9999.0;

}  // namespace kcx
