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

// The export files of a directory: regular *.jsonl and *.jsonl.gz files (not hidden), in
// natural order of their names (step_2 before step_10). Throws InputError when none.
std::vector<std::string> trainerExportFiles(const std::string& dir);

// One file, or a directory of files (trainerExportFiles), as one run.
Run loadTrainerExport(const std::string& path, const Progress& progress = {});

// The given files in the given order as one run; `runPath` becomes Run::path.
Run loadTrainerExportFiles(const std::vector<std::string>& files, const std::string& runPath,
                           const Progress& progress = {});

// Natural order of file names: runs of digits compare as numbers.
bool naturalLess(const std::string& a, const std::string& b);

}  // namespace kcx
