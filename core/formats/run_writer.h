// Writing a run back out in the formats of SPEC 1.
#pragma once

#include <string>

#include "core/formats/run.h"

namespace kcx {

// SPEC 1.1 JSON Lines with a header line; numbers round-trip (shortest form that
// reads back to the same double); missing values as null, non-finite as "NaN"/"Infinity".
// A path ending in .gz is gzip-compressed. Written atomically like every output
// (core/base/safe_write.h); throws InputError naming the file on I/O failure.
void writeJsonl(const Run& run, const std::string& path);

// SPEC 1.2 safetensors. Float columns are written as F32 unless any column is F64 and
// `keepF64` is set. Writes atomically (core/base/safe_write.h: a unique temporary beside
// the target, renamed over it).
void writeSafetensors(const Run& run, const std::string& path, bool keepF64 = true);

}  // namespace kcx
