// Building a run from the named tensors of SPEC 1.2, wherever they are stored: the
// safetensors reader (core/formats/safetensors.cpp) and the NumPy reader (core/formats/import_numpy.cpp)
// both collect typed, shaped byte ranges under the SPEC 1.2 names and the parsed
// __metadata__ values, and hand them here. The run's rules (CSR offsets, matching shapes,
// ids, slice codes, top-k, logits, text) are checked once, in one place; every error is
// made by the caller's own functions so that it names the caller's file and place.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/errors.h"
#include "core/formats/run.h"

namespace kcx::tensors {

// A whole file mapped read-only (unmapped when the last owner goes). Throws InputError
// naming the file when it cannot be opened, is not a regular file, or cannot be mapped.
struct Mapping {
    const unsigned char* data = nullptr;
    size_t size = 0;
    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping();
};
std::shared_ptr<const Mapping> mapFile(const std::string& path);
// Drops this process's pages of [p, p + bytes) when the range lies inside a live mapping of
// mapFile (they are read again from the file if touched); does nothing otherwise, so it is
// safe on any memory. kcx summarize streams a mapped run block by block with it, so that its
// resident size does not grow with the file.
void dropMappedPages(const void* p, size_t bytes);

enum class Kind { Float, Int };
enum class DT { F64, F32, F16, BF16, F8E4M3, F8E5M2, I64, I32, I16, I8, U8, Bool };
struct DType {
    const char* name;   // the safetensors spelling: F64, F32, ..., BOOL
    DT dt;
    uint64_t size;      // bytes per element
    Kind kind;
};

// By safetensors name ("F32"); nullptr when unknown.
const DType* findDType(const std::string& name);
const DType& dtypeOf(DT dt);
// "F64, F32, F16, ..." for error messages.
std::string dtypeList();
// "[3, 4]"
std::string shapeText(const std::vector<uint64_t>& shape);

struct Tensor {
    std::string name;
    const DType* dtype = nullptr;
    std::vector<uint64_t> shape;
    uint64_t elements = 0;
    uint64_t begin = 0, end = 0;           // the caller's own offsets (safetensors: within the data buffer)
    const unsigned char* data = nullptr;   // elements * dtype->size bytes, little-endian, any alignment
};

// The __metadata__ values of SPEC 1.2, already parsed from their JSON text.
struct Metadata {
    std::optional<nlohmann::json> ids, sliceKeys, sliceValues, header, runtime;
};

struct Source {
    std::string path;                          // becomes Run::path
    std::map<std::string, Tensor> tensors;     // by SPEC 1.2 name; other names are ignored
    std::map<std::string, std::string> otherTensors;   // name -> a dtype KCX does not read (safetensors)
    Metadata meta;
    std::shared_ptr<const void> keepAlive;     // owns the bytes `data` points into (views share it)
    // Errors about the metadata (`key` = the metadata key, or "" for the whole) ...
    std::function<InputError(const std::string& message, const std::string& key)> headerError;
    // ... and about element `element` of a tensor. The message does not name the tensor.
    std::function<InputError(const Tensor& t, uint64_t element, const std::string& message)> tensorError;
};

// Checks the run's rules and builds the run; float32/float64 and int32/int64 tensors that
// are aligned for their type are used in place (views that keep `keepAlive`). Reports
// progress from 0.1 to 1.0. Throws what the source's error functions make.
Run buildRun(const Source& source, const Progress& progress);

}  // namespace kcx::tensors
