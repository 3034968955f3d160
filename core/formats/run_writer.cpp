// Writing runs as SPEC 1.1 JSON Lines and SPEC 1.2 safetensors.
//
// Both writers stream to a unique temporary beside `path` and rename it over `path` at the
// end (core/base/safe_write.h), so a reader never sees a half-written file. Numbers are printed in their shortest round-trip form:
// a float64 value reads back as the same double, a float32 value as the same float.
//
// safetensors layout: the header JSON is padded with spaces to a multiple of 8 bytes, and
// tensors are placed by element size (8-byte types, then 4-byte, then 1-byte) with no gaps
// between them, so every tensor is aligned for its type and the file is also accepted by
// readers that insist on a gap-free buffer (the reference safetensors implementation).
// Besides SPEC 1.2, per-token text is stored as `text_offsets` (I64 [M+1]) and
// `text_bytes` (U8 [B]); see core/formats/safetensors.cpp.
#include "core/formats/run_writer.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

#include "core/base/safe_write.h"

namespace kcx {
namespace {

using nlohmann::json;

// ---- output files: plain or gzip, through the safe writer (core/base/safe_write.h) -----
// A unique temporary beside the target, renamed over it once complete: never a fixed
// temporary name a link could be planted at, never half a file under the target's name.
class AtomicFile {
public:
    AtomicFile(std::string path, bool gzip) : out_(std::move(path)), gzip_(gzip) {
        if (gzip_) {
            const int fd = ::dup(out_.fd());
            gz_ = fd >= 0 ? gzdopen(fd, "wb6") : nullptr;
            if (!gz_) {
                const int err = errno ? errno : ENOMEM;
                if (fd >= 0)
                    ::close(fd);
                out_.fail("start a gzip stream", err);
            }
            gzbuffer(gz_, 1 << 20);
        } else {
            buf_.reserve(kBuffer);
        }
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile() {   // not committed: an error happened; the writer drops the temporary
        if (gz_)
            gzclose(gz_);
    }
    void write(const void* data, size_t n) {
        const char* p = static_cast<const char*>(data);
        if (gzip_) {
            while (n > 0) {
                const unsigned chunk = unsigned(std::min<size_t>(n, size_t(1) << 30));
                if (gzwrite(gz_, p, chunk) != int(chunk))
                    out_.fail("write (gzip)", errno ? errno : EIO);
                p += chunk;
                n -= chunk;
            }
        } else if (buf_.size() + n <= kBuffer) {
            buf_.append(p, n);
        } else {
            flush();
            if (n >= kBuffer)
                out_.write(p, n);
            else
                buf_.append(p, n);
        }
    }
    void write(std::string_view s) { write(s.data(), s.size()); }
    void commit() {
        if (gzip_) {
            const int rc = gzclose(gz_);
            gz_ = nullptr;
            if (rc != Z_OK)
                out_.fail("finish the gzip stream", errno ? errno : EIO);
        } else {
            flush();
        }
        out_.commit();
    }

private:
    static constexpr size_t kBuffer = size_t(1) << 20;
    void flush() {
        out_.write(buf_.data(), buf_.size());
        buf_.clear();
    }
    AtomicWriter out_;
    bool gzip_;
    gzFile gz_ = nullptr;
    std::string buf_;
};

// ---- JSON text --------------------------------------------------------------------------
void putString(std::string& out, std::string_view s) {
    static const char* hex = "0123456789abcdef";
    out += '"';
    for (const char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if ((unsigned char)c < 0x20) {
                out += "\\u00";
                out += hex[(unsigned char)c >> 4];
                out += hex[(unsigned char)c & 15];
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

// A number in its shortest round-trip form; missing as null, non-finite as SPEC 1.1 strings.
template <class F>
void putNumber(std::string& out, F v) {
    if (isMissing(v)) {
        out += "null";
    } else if (std::isnan(v)) {
        out += "\"NaN\"";
    } else if (std::isinf(v)) {
        out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    } else {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        out.append(buf, r.ptr);
    }
}

void putInt(std::string& out, int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

// `[v, v, ...]` of column entries [from, from + n).
void putColumn(std::string& out, const Column& c, size_t from, size_t n) {
    out += '[';
    c.visit(
        [&](auto span) {
            for (size_t i = 0; i < span.size(); ++i) {
                if (i)
                    out += ',';
                putNumber(out, span[i]);
            }
        },
        from, n);
    out += ']';
}

// `[[...], [...]]`: `rows` rows of `width` entries starting at `from`.
void putRows(std::string& out, const Column& c, size_t from, size_t rows, size_t width) {
    out += '[';
    for (size_t r = 0; r < rows; ++r) {
        if (r)
            out += ',';
        putColumn(out, c, from + r * width, width);
    }
    out += ']';
}

// A top-k block is absent for a sequence when every slot is the JSONL loader's padding.
bool topkAbsent(const TopK& t, size_t b, size_t e) {
    const size_t k = size_t(t.k);
    for (size_t i = b * k; i < e * k; ++i)
        if (t.ids[i] != -1 || !isMissing(t.logp[i]))
            return false;
    return true;
}

void putTopK(std::string& out, const TopK& t, size_t b, size_t e) {
    const size_t k = size_t(t.k);
    out += "{\"ids\":[";
    for (size_t r = b; r < e; ++r) {
        out += r > b ? ",[" : "[";
        for (size_t q = 0; q < k; ++q) {
            if (q)
                out += ',';
            putInt(out, t.ids[r * k + q]);
        }
        out += ']';
    }
    out += "],\"logp\":";
    putRows(out, t.logp, b * k, e - b, k);
    out += '}';
}

// `steps` is Run::steps(): when it is not empty the slice "step" is written as the `step` key.
void putSequence(std::string& out, const Run& run, size_t s, const std::vector<int64_t>& steps) {
    const size_t b = run.seqBegin(s), e = run.seqEnd(s);
    out += "{\"id\":";
    putString(out, run.ids[s]);
    if (!steps.empty() && steps[s] >= 0) {
        out += ",\"step\":";
        putInt(out, steps[s]);
    }
    // Slices: only the labeled keys.
    const size_t K = run.slices.keys.size();
    const int stepKey = steps.empty() ? -1 : run.slices.keyIndex(kStepKey);
    bool anyLabel = false;
    for (size_t k = 0; k < K; ++k)
        if (const std::string* label = run.slices.label(s, k); label && int(k) != stepKey) {
            out += anyLabel ? "," : ",\"slices\":{";
            anyLabel = true;
            putString(out, run.slices.keys[k]);
            out += ':';
            putString(out, *label);
        }
    if (anyLabel)
        out += '}';
    out += ",\"tokens\":[";
    for (size_t i = b; i < e; ++i) {
        if (i > b)
            out += ',';
        putInt(out, run.tokens[i]);
    }
    out += ']';
    if (run.hasText()) {
        out += ",\"text\":[";
        for (size_t i = b; i < e; ++i) {
            if (i > b)
                out += ',';
            putString(out, run.tokenText(i));
        }
        out += ']';
    }
    out += ",\"logp_train\":";
    putColumn(out, run.lpTrain, b, e - b);
    out += ",\"logp_inf\":";
    putColumn(out, run.lpInf, b, e - b);
    for (auto [name, t] : {std::pair{",\"topk_train\":", &run.topkTrain}, std::pair{",\"topk_inf\":", &run.topkInf}})
        if (t->present() && !topkAbsent(*t, b, e)) {
            out += name;
            putTopK(out, *t, b, e);
        }
    // JSONL logits cover whole sequences; a position without a row is written as null
    // (not logged), which the loader reads back as no row.
    if (run.hasLogits() && e > b) {
        const auto& rows = run.logits.rows;
        const int64_t* lo = std::lower_bound(rows.begin(), rows.end(), int64_t(b));
        const int64_t* hi = std::lower_bound(lo, rows.end(), int64_t(e));
        if (hi > lo) {
            const size_t v = size_t(run.logits.vocab);
            for (auto [name, col] : {std::pair{",\"logits_train\":[", &run.logits.train},
                                     std::pair{",\"logits_inf\":[", &run.logits.inf}}) {
                out += name;
                const int64_t* r = lo;
                for (size_t i = b; i < e; ++i) {
                    if (i > b)
                        out += ',';
                    if (r < hi && size_t(*r) == i) {
                        putColumn(out, *col, size_t(r - rows.begin()) * v, v);
                        ++r;
                    } else {
                        out += "null";
                    }
                }
                out += ']';
            }
        }
    }
    for (auto [name, r] : {std::pair{",\"reward_train\":", &run.rewardTrain},
                           std::pair{",\"reward_inf\":", &run.rewardInf}})
        if (!r->empty() && !isMissing((*r)[s])) {
            out += name;
            putNumber(out, (*r)[s]);
        }
    if (!run.runtime.empty()) {
        out += ",\"runtime\":";
        out += run.runtime[s].dump(-1, ' ', false, json::error_handler_t::replace);
    }
    out += "}\n";
}

// ---- safetensors --------------------------------------------------------------------------
float toF32(double d) {
    if (isMissing(d))
        return missingFloat();
    if (std::isnan(d))   // a plain NaN must never turn into the missing marker
        return std::signbit(d) ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
    return float(d);
}

struct Planned {
    std::string name;
    const char* dtype;
    std::vector<uint64_t> shape;
    uint64_t elemSize;
    std::function<void(AtomicFile&)> emit;   // writes exactly elements * elemSize bytes
    uint64_t bytes() const {
        uint64_t n = elemSize;
        for (uint64_t d : shape)
            n *= d;
        return n;
    }
};

template <class T>
void emitRaw(AtomicFile& f, const T* data, size_t n) { f.write(data, n * sizeof(T)); }

// A span of doubles as float32, in chunks.
void emitAsF32(AtomicFile& f, std::span<const double> v) {
    std::vector<float> buf;
    for (size_t i = 0; i < v.size(); i += 65536) {
        const size_t n = std::min<size_t>(65536, v.size() - i);
        buf.resize(n);
        for (size_t j = 0; j < n; ++j)
            buf[j] = toF32(v[i + j]);
        emitRaw(f, buf.data(), n);
    }
}

// A column as F64 (only for float64 columns) or F32.
Planned columnTensor(std::string name, const Column* c, std::vector<uint64_t> shape, bool keepF64) {
    const bool f64 = keepF64 && c->type() == Column::Type::F64;
    auto emit = [c, f64](AtomicFile& f) {
        c->visit([&](auto span) {
            using T = typename decltype(span)::element_type;
            if constexpr (std::is_same_v<std::remove_const_t<T>, float>)
                emitRaw(f, span.data(), span.size());
            else if (f64)
                emitRaw(f, span.data(), span.size());
            else
                emitAsF32(f, span);
        });
    };
    return {std::move(name), f64 ? "F64" : "F32", std::move(shape), f64 ? 8u : 4u, emit};
}

Planned doublesTensor(std::string name, const std::vector<double>* v, bool f64) {
    auto emit = [v, f64](AtomicFile& f) {
        if (f64)
            emitRaw(f, v->data(), v->size());
        else
            emitAsF32(f, *v);
    };
    return {std::move(name), f64 ? "F64" : "F32", {v->size()}, f64 ? 8u : 4u, emit};
}

template <class T>
Planned rawTensor(std::string name, const char* dtype, const T* data, std::vector<uint64_t> shape) {
    Planned p{std::move(name), dtype, std::move(shape), sizeof(T), {}};
    const size_t n = size_t(p.bytes() / sizeof(T));
    p.emit = [data, n](AtomicFile& f) { emitRaw(f, data, n); };
    return p;
}

// The table without one of its keys.
SliceTable withoutKey(const SliceTable& t, const std::string& key) {
    const int drop = t.keyIndex(key);
    SliceTable out;
    const size_t K = t.keys.size(), n = K ? t.codes.size() / K : 0;
    for (size_t k = 0; k < K; ++k)
        if (int(k) != drop) {
            out.keys.push_back(t.keys[k]);
            out.values.push_back(t.values[k]);
        }
    out.codes.reserve(n * out.keys.size());
    for (size_t s = 0; s < n; ++s)
        for (size_t k = 0; k < K; ++k)
            if (int(k) != drop)
                out.codes.push_back(t.codes[s * K + k]);
    return out;
}

std::string dumpJson(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

void writeJsonl(const Run& run, const std::string& path) {
    AtomicFile f(path, path.ends_with(".gz"));
    std::string buf;
    if (run.header.is_object()) {
        buf = "{\"kcx_header\":" + dumpJson(run.header) + "}\n";
    }
    const std::vector<int64_t> steps = run.steps();
    for (size_t s = 0; s < run.sequenceCount(); ++s) {
        putSequence(buf, run, s, steps);
        if (buf.size() >= (size_t(1) << 20)) {
            f.write(buf);
            buf.clear();
        }
    }
    f.write(buf);
    f.commit();
}

void writeSafetensors(const Run& run, const std::string& path, bool keepF64) {
    const uint64_t n = run.sequenceCount(), m = run.tokenCount();
    std::vector<Planned> plan;
    plan.push_back(rawTensor("offsets", "I64", run.offsets.data(), {n + 1}));
    plan.push_back(rawTensor("tokens", "I32", run.tokens.data(), {m}));
    plan.push_back(columnTensor("logp_train", &run.lpTrain, {m}, keepF64));
    plan.push_back(columnTensor("logp_inf", &run.lpInf, {m}, keepF64));
    for (auto [which, t] : {std::pair{"train", &run.topkTrain}, std::pair{"inf", &run.topkInf}})
        if (t->present()) {
            const uint64_t k = uint64_t(t->k);
            plan.push_back(rawTensor(std::string("topk_") + which + "_ids", "I32", t->ids.data(), {m, k}));
            plan.push_back(columnTensor(std::string("topk_") + which + "_logp", &t->logp, {m, k}, keepF64));
        }
    if (run.hasLogits()) {
        const uint64_t p = run.logits.rows.size(), v = uint64_t(run.logits.vocab);
        plan.push_back(rawTensor("logits_rows", "I64", run.logits.rows.data(), {p}));
        plan.push_back(columnTensor("logits_train", &run.logits.train, {p, v}, keepF64));
        plan.push_back(columnTensor("logits_inf", &run.logits.inf, {p, v}, keepF64));
    }
    if (!run.rewardTrain.empty())
        plan.push_back(doublesTensor("reward_train", &run.rewardTrain, keepF64));
    if (!run.rewardInf.empty())
        plan.push_back(doublesTensor("reward_inf", &run.rewardInf, keepF64));
    // Steps go in the `step` tensor (SPEC 1.2), the other keys in slice_codes.
    const std::vector<int64_t> steps = run.steps();
    SliceTable labels;
    const SliceTable& slices = steps.empty() ? run.slices : (labels = withoutKey(run.slices, kStepKey));
    if (!steps.empty())
        plan.push_back(rawTensor(kStepKey, "I64", steps.data(), {n}));
    const uint64_t K = slices.keys.size();
    if (K > 0)
        plan.push_back(rawTensor("slice_codes", "I32", slices.codes.data(), {n, K}));
    if (run.hasText()) {
        static_assert(sizeof(uint64_t) == sizeof(int64_t));
        plan.push_back(rawTensor("text_offsets", "I64", run.textOffsets.data(), {m + 1}));
        plan.push_back(rawTensor("text_bytes", "U8", reinterpret_cast<const uint8_t*>(run.textPool.data()),
                                 {run.textPool.size()}));
    }

    // Larger elements first: every tensor lands aligned for its type without gaps.
    std::stable_sort(plan.begin(), plan.end(), [](const Planned& a, const Planned& b) { return a.elemSize > b.elemSize; });
    json header = json::object();
    uint64_t at = 0;
    for (const Planned& p : plan) {
        header[p.name] = {{"dtype", p.dtype}, {"shape", p.shape}, {"data_offsets", {at, at + p.bytes()}}};
        at += p.bytes();
    }
    json meta = {{"kcx", "1"}, {"ids", dumpJson(run.ids)}};
    if (K > 0) {
        json values = json::object();
        for (size_t k = 0; k < K; ++k)
            values[slices.keys[k]] = slices.values[k];
        meta["slice_keys"] = dumpJson(slices.keys);
        meta["slice_values"] = dumpJson(values);
    }
    if (!run.header.is_null())
        meta["header"] = dumpJson(run.header);
    if (!run.runtime.empty())
        meta["runtime"] = dumpJson(run.runtime);
    header["__metadata__"] = meta;

    std::string text = dumpJson(header);
    text.append((8 - text.size() % 8) % 8, ' ');
    const uint64_t len = text.size();
    static_assert(std::endian::native == std::endian::little);

    AtomicFile f(path, false);
    f.write(&len, 8);
    f.write(text);
    for (const Planned& p : plan)
        p.emit(f);
    f.commit();
}

}  // namespace kcx
