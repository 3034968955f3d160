// Trainer token exports (docs/formats.md): the JSON Lines an RL trainer writes per step and
// rank, one record per sequence (optionally gzip-compressed):
//
//   {"token_ids": [int], "loss_mask": [0|1], "inference_logprobs": [number|null],
//    "trainer_logprobs": [number|null], "entropy": [...], "advantages": [...],
//    "step": 12, "rank": 3, "env_name": "math", "id": "..."}
//
// token_ids, loss_mask, inference_logprobs and trainer_logprobs are required and must all
// be as long as token_ids (entropy and advantages too when they are arrays; they are checked,
// not used). Positions with loss_mask 0 are prompt tokens and are left out; a record without
// any response token is skipped (counted in the header). `null` (the trainer writes it for
// non-finite values) and vLLM's -9999.0 placeholder are missing log-probs, never numbers;
// "NaN"/"Infinity" strings and bare NaN/Infinity are non-finite numbers. inference_logprobs
// become logp_inf, trainer_logprobs logp_train. `env_name`, `step` and `rank` become slices
// (step and rank are taken from the file name, as in step_12_rank_3.jsonl, when a record
// has none). A record's id is its `id` when it has one, else "FILE:LINE".
#pragma once

#include <string>
#include <vector>

#include "core/formats/loader.h"

namespace kcx {

// prime-rl writes this empty file into a step's folder once the step is complete.
inline constexpr const char* kStableMarker = "STABLE";

// What a run of trainer exports is read from.
struct TrainerExports {
    std::vector<std::string> files;     // in reading order
    std::vector<std::string> roots;     // per file, the tree it lies in ("" for a file given alone)
    std::vector<std::string> skipped;   // step folders left out: no STABLE marker (still being written)

    void add(const TrainerExports& more);   // appends another tree's files after these
};

// The export files of a tree, at any depth: regular *.jsonl and *.jsonl.gz files (nothing
// hidden), folder by folder in natural order of the names (step_2 before step_10). When any
// folder holds a STABLE marker, step folders (a name with step_N) without one are skipped.
// Throws InputError when nothing is left.
TrainerExports findTrainerExports(const std::string& dir);

// One file, or a tree of files (findTrainerExports), as one run.
Run loadTrainerExport(const std::string& path, const Progress& progress = {});

// The files in their order as one run; `runPath` becomes Run::path.
Run loadTrainerExports(const TrainerExports& exports, const std::string& runPath, const Progress& progress = {});

// Natural order of file names: runs of digits compare as numbers.
bool naturalLess(const std::string& a, const std::string& b);

}  // namespace kcx
