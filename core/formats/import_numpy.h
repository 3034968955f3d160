// NumPy runs (docs/formats.md): the tensors of SPEC 1.2 under the same names, as one
// `.npz` archive (numpy.savez or numpy.savez_compressed: ZIP members "NAME.npy", stored or
// deflated) or as a directory of "NAME.npy" files (numpy.save).
//
// .npy format versions 1.0, 2.0 and 3.0 (C order; Fortran order only where it is the same
// layout: at most one dimension longer than 1). Numeric dtypes: <f2 <f4 <f8 <i4 <i8 |u1 |b1
// (and |i1 <i2); bfloat16 stored as <u2 or <V2 when LoadOptions::bf16 is set. The
// __metadata__ entries of SPEC 1.2 are members of the same name: `ids` and `slice_keys` as
// 1-D string arrays (<U or |S; integer ids are written in decimal), or any of `ids`,
// `slice_keys`, `slice_values`, `header`, `runtime` as a 0-d string holding the JSON text
// that safetensors metadata would hold. Members with other names are ignored.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/errors.h"
#include "core/formats/loader.h"

namespace kcx {

// A parsed .npy header.
struct NpyHeader {
    int major = 0, minor = 0;
    std::string descr;            // as written, e.g. "<f4"
    bool fortranOrder = false;
    std::vector<uint64_t> shape;
    uint64_t elements = 0;        // the product of shape (1 for a 0-d array)
    uint64_t itemSize = 0;        // bytes per element, from descr
    uint64_t dataOffset = 0;      // where the data starts (magic + lengths + header text)
    uint64_t dataBytes = 0;       // elements * itemSize
};

// Parses the .npy header at the start of `bytes` and checks that the data it announces fits
// in `bytes`. `fail(offset, message)` makes the error (offset within `bytes`), so that the
// caller names its file or archive member. Checks: magic, version, header length (at most
// 1 MB), the header's Python dict, descr syntax, shape overflow, Fortran order, truncation.
// The dtype itself is not judged here.
NpyHeader parseNpyHeader(std::string_view bytes,
                         const std::function<InputError(uint64_t offset, const std::string& message)>& fail);

// A run from an .npz archive; errors name the archive, the byte offset and the member.
Run loadNpz(const std::string& path, const Progress& progress = {}, const LoadOptions& options = {});

// A run from a directory of NAME.npy files; errors name the .npy file and byte offset.
Run loadNpyDirectory(const std::string& dir, const Progress& progress = {}, const LoadOptions& options = {});

}  // namespace kcx
