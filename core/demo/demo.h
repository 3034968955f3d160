// The built-in demo run: a tiny Eigen transformer scored by two kernels (docs/demo.md).
#pragma once

#include <cstdint>
#include <string>

#include "core/formats/run.h"

namespace kcx {

struct DemoOptions {
    uint64_t seed = 20261202;
    int sequences = 240;       // rollouts
    int threads = 0;           // worker threads (0 = one per core); never changes the result
    // Sanity switch: K_inf computes exactly what K_train computes (fp32, the same
    // reduction order, no FP8), so every log-ratio is exactly zero.
    bool identicalKernels = false;
};

// Deterministic for a seed. Calls progress with fractions in [0, 1].
Run makeDemoRun(const DemoOptions& options = {}, const Progress& progress = {});

// Writes demo.jsonl (and demo.safetensors) into dir, creating it. Returns the JSONL path.
std::string writeDemo(const std::string& dir, const DemoOptions& options = {});

}  // namespace kcx
