#include "core/demo/demo_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "core/base/half.h"
#include "core/base/sha256.h"

namespace kcx::demo {

// ---- PRNG --------------------------------------------------------------------------------
Rng::Rng(uint64_t seed, uint64_t stream) {
    uint64_t st = seed;
    st = splitmix64(st) ^ (stream * 0xd1b54a32d192ed03ULL + 0x632be59bd9b4e019ULL);
    for (auto& w : s_)
        w = splitmix64(st);
}

uint64_t Rng::next() { return xoshiro256ssNext(s_); }

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

int Rng::below(int n) { return int((unsigned __int128)(next()) * uint64_t(n) >> 64); }

double Rng::normal() {
    if (hasSpare_) {
        hasSpare_ = false;
        return spare_;
    }
    const double u1 = 1.0 - uniform();   // (0, 1]
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(a);
    hasSpare_ = true;
    return r * std::cos(a);
}

// ---- weights -----------------------------------------------------------------------------
namespace {

Mat gaussian(Rng& rng, int rows, int cols, double stddev) {
    Mat m(rows, cols);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            m(i, j) = float(rng.normal() * stddev);
    return m;
}

Vec gains(Rng& rng, int n) {
    Vec v(n);
    for (int i = 0; i < n; ++i)
        v[i] = float(1.0 + 0.1 * rng.normal());
    return v;
}

template <class M>
void appendBytes(std::string& out, const M& m) {
    out.append(reinterpret_cast<const char*>(m.data()), size_t(m.size()) * sizeof(float));
}

template <class M>
M mapped(const M& m, float (*f)(float)) {
    return m.unaryExpr(f);
}

// Round-to-nearest-even to bf16 for finite values, inline for the hot loops (the model
// never produces NaN; kcx::roundBf16 is the reference and agrees on finite input).
inline float bf16(float f) {
    uint32_t b = std::bit_cast<uint32_t>(f);
    b = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
    return std::bit_cast<float>(b);
}

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

// Sums parts[lo..hi) (rows of `width` floats, `stride` apart) pairwise into parts[lo].
void combineTree(float* parts, int stride, int lo, int hi, int width) {
    if (hi - lo < 2)
        return;
    const int mid = lo + (hi - lo + 1) / 2;
    combineTree(parts, stride, lo, mid, width);
    combineTree(parts, stride, mid, hi, width);
    ArrayMap(parts + size_t(lo) * stride, width) += ConstArrayMap(parts + size_t(mid) * stride, width);
}

// dst[0..kChunk) = sum over i in [i0, i1), in order, of x[i] * w[i][col..col+kChunk).
// Every output element is its own sequential chain; the chunk only keeps the running sums
// in registers.
constexpr int kChunk = 32;
using Chunk = Eigen::Array<float, kChunk, 1>;
inline void rowSum(const float* x, const float* w, int stride, int i0, int i1, int col, float* dst) {
    Chunk acc = x[i0] * Eigen::Map<const Chunk>(w + size_t(i0) * stride + col);
    for (int i = i0 + 1; i < i1; ++i)
        acc += x[i] * Eigen::Map<const Chunk>(w + size_t(i) * stride + col);
    Eigen::Map<Chunk> out(dst);
    out = acc;
}

// s[j0 .. j0+C) = scale * (sum over d, in order, of q[d] * kT[d][j0 .. j0+C)).
template <int C>
void scoreChunk(const float* q, const float* kT, size_t stride, int j0, float scale, float* s) {
    using A = Eigen::Array<float, C, 1>;
    A acc = q[0] * Eigen::Map<const A>(kT + j0);
    for (int d = 1; d < kHeadDim; ++d)
        acc += q[d] * Eigen::Map<const A>(kT + size_t(d) * stride + j0);
    Eigen::Map<A> out(s + j0);
    out = acc * scale;
}

using Head = Eigen::Array<float, kHeadDim, 1>;

// The sum over keys j in [j0, j1), in order, of p[j] * (head slice of value row j).
Head weightedSum(const float* p, const float* v, int r0, int j0, int j1) {
    Head acc = p[j0] * Eigen::Map<const Head>(v + size_t(j0) * kDModel + r0);
    for (int j = j0 + 1; j < j1; ++j)
        acc += p[j] * Eigen::Map<const Head>(v + size_t(j) * kDModel + r0);
    return acc;
}

}  // namespace

Weights Weights::init(uint64_t seed) {
    Rng rng(seed, 0x77e1647500000001ULL);
    const double sd = 1.0 / std::sqrt(double(kDModel));
    Weights w;
    w.embed = gaussian(rng, kVocab, kDModel, 1.0);
    for (int l = 0; l < kLayers; ++l) {
        Layer L;
        L.norm1 = gains(rng, kDModel);
        L.wqkv.resize(kDModel, 3 * kDModel);
        // Sharper queries/keys than a plain init, so that attention is selective and the
        // positions (rotary encoding) matter.
        L.wqkv.leftCols(2 * kDModel) = gaussian(rng, kDModel, 2 * kDModel, 1.6 * sd);
        L.wqkv.rightCols(kDModel) = gaussian(rng, kDModel, kDModel, sd);
        L.wo = gaussian(rng, kDModel, kDModel, 1.2 * sd);
        L.norm2 = gains(rng, kDModel);
        L.w1 = gaussian(rng, kDModel, kFF, sd);
        L.w2 = gaussian(rng, kFF, kDModel, 0.8 / std::sqrt(double(kFF)));
        w.layers.push_back(std::move(L));
    }
    w.normF = gains(rng, kDModel);
    w.wout = gaussian(rng, kDModel, kVocab, 0.3);
    return w;
}

Weights Weights::roundedBf16() const {
    Weights r;
    r.embed = mapped(embed, &kcx::roundBf16);
    for (const auto& L : layers)
        r.layers.push_back({mapped(L.norm1, &kcx::roundBf16), mapped(L.norm2, &kcx::roundBf16),
                            mapped(L.wqkv, &kcx::roundBf16), mapped(L.wo, &kcx::roundBf16),
                            mapped(L.w1, &kcx::roundBf16), mapped(L.w2, &kcx::roundBf16)});
    r.normF = mapped(normF, &kcx::roundBf16);
    r.wout = mapped(wout, &kcx::roundBf16);
    return r;
}

std::string Weights::sha256() const {
    std::string bytes;
    appendBytes(bytes, embed);
    for (const auto& L : layers) {
        appendBytes(bytes, L.norm1);
        appendBytes(bytes, L.wqkv);
        appendBytes(bytes, L.wo);
        appendBytes(bytes, L.norm2);
        appendBytes(bytes, L.w1);
        appendBytes(bytes, L.w2);
    }
    appendBytes(bytes, normF);
    appendBytes(bytes, wout);
    return kcx::sha256Hex(bytes);
}

std::shared_ptr<const LoadedWeights> LoadedWeights::load(const Weights& master, bool bf16, bool fp8) {
    auto lw = std::make_shared<LoadedWeights>();
    lw->w = bf16 ? master.roundedBf16() : master;
    if (fp8) {
        // Per-tensor scale: the largest magnitude maps to e4m3's largest finite value.
        auto t = std::make_shared<Fp8Tensor>();
        const float amax = lw->w.wout.cwiseAbs().maxCoeff();
        t->scale = amax > 0 ? amax / 448.0f : 1.0f;
        t->q = lw->w.wout.unaryExpr([&](float v) { return kcx::roundFp8e4m3(v / t->scale); });
        lw->woutFp8 = std::move(t);
    }
    return lw;
}

// ---- the kernel ----------------------------------------------------------------------------
struct Kernel::Scratch {
    Eigen::ArrayXf x{kDModel}, h{kDModel}, qkv{3 * kDModel}, att{kDModel}, tmp{kDModel};
    Eigen::ArrayXf ff{kFF}, logits{kVocab}, sq{kDModel}, cosv{kHeadDim / 2}, sinv{kHeadDim / 2};
    Eigen::ArrayXf scores, probs;      // maxLen
    std::vector<float> partial;        // block sums of a scalar reduction
    Mat parts;                         // block partial sums of a product (rows of values)
};

Kernel::Kernel(std::shared_ptr<const LoadedWeights> weights, const KernelConfig& config, int maxLen)
    : lw_(std::move(weights)), cfg_(config), maxLen_((maxLen + 3) / 4 * 4), s_(std::make_unique<Scratch>()) {
    if (cfg_.fp8Out && !lw_->woutFp8)
        throw std::logic_error("demo kernel: FP8 output projection without FP8 weights");
    for (int l = 0; l < kLayers; ++l) {
        kT_.emplace_back(Mat::Zero(kDModel, maxLen_));
        v_.emplace_back(Mat::Zero(maxLen_, kDModel));
    }
    for (int i = 0; i < kHeadDim / 2; ++i) {
        const float f = float(std::pow(10000.0, -2.0 * i / kHeadDim));
        invFreq_.push_back(cfg_.bf16Rope ? kcx::roundBf16(f) : f);
    }
    s_->scores.setZero(maxLen_);
    s_->probs.setZero(maxLen_);
    const int block = std::max(cfg_.block, 1);
    const int maxBlocks = (std::max(kFF, maxLen_) + block - 1) / block;
    s_->partial.assign(size_t(maxBlocks), 0.0f);
    s_->parts.setZero(maxBlocks, std::max({kFF, kVocab, 3 * kDModel}));
}

Kernel::~Kernel() = default;

void Kernel::round(float* v, int n) const {
    if (cfg_.bf16)
        for (int i = 0; i < n; ++i)
            v[i] = bf16(v[i]);
}

// y = x · W. Sequential: one running sum over the inputs, in order. Blocked: a partial sum
// per block of `block` inputs, the partials added pairwise (a split-K reduction).
void Kernel::linear(const float* x, const Mat& w, float* y) const {
    const int in = int(w.rows()), out = int(w.cols());
    if (cfg_.block <= 0) {
        for (int c = 0; c < out; c += kChunk)
            rowSum(x, w.data(), out, 0, in, c, y + c);
        return;
    }
    Mat& parts = s_->parts;
    const int stride = int(parts.cols());
    const int nb = (in + cfg_.block - 1) / cfg_.block;
    for (int bl = 0; bl < nb; ++bl) {
        const int i0 = bl * cfg_.block, i1 = std::min(in, i0 + cfg_.block);
        for (int c = 0; c < out; c += kChunk)
            rowSum(x, w.data(), out, i0, i1, c, parts.data() + size_t(bl) * stride + c);
    }
    combineTree(parts.data(), stride, 0, nb, out);
    ArrayMap(y, out) = ConstArrayMap(parts.data(), out);
}

float Kernel::reduce(const float* v, int n) const {
    if (cfg_.block <= 0) {
        float s = 0;
        for (int i = 0; i < n; ++i)
            s += v[i];
        return s;
    }
    const int nb = (n + cfg_.block - 1) / cfg_.block;
    float* p = s_->partial.data();
    for (int b = 0; b < nb; ++b) {
        float s = 0;
        for (int i = b * cfg_.block; i < std::min(n, (b + 1) * cfg_.block); ++i)
            s += v[i];
        p[b] = s;
    }
    combineTree(p, 1, 0, nb, 1);
    return nb ? p[0] : 0.0f;
}

void Kernel::rmsnorm(const float* x, const Vec& g, float* y) const {
    ArrayMap sq(s_->sq.data(), kDModel);
    sq = ConstArrayMap(x, kDModel).square();
    const float ms = reduce(sq.data(), kDModel) / float(kDModel);
    const float r = 1.0f / std::sqrt(ms + 1e-6f);
    ArrayMap(y, kDModel) = ConstArrayMap(x, kDModel) * r * g.array();
    round(y, kDModel);
}

// Rotary position encoding of one d_model vector (all heads), rotate-half convention.
void Kernel::rope(float* v) const {
    constexpr int half = kHeadDim / 2;
    for (int hd = 0; hd < kHeads; ++hd) {
        float* u = v + hd * kHeadDim;
        for (int i = 0; i < half; ++i) {
            const float a = u[i], b = u[i + half];
            const float c = s_->cosv[i], s = s_->sinv[i];
            u[i] = a * c - b * s;
            u[i + half] = b * c + a * s;
        }
    }
    round(v, kDModel);
}

// Causal attention of the newest query over the cache [0, len_).
void Kernel::attend(int layer, const float* q, float* out) const {
    const int n = len_;
    const int n4 = (n + 3) / 4 * 4;       // exp over whole packets, so a key's weight is the
    const float* kT = kT_[size_t(layer)].data();   // same whatever the context length
    const float* vc = v_[size_t(layer)].data();
    const size_t stride = size_t(maxLen_);
    ArrayMap s(s_->scores.data(), n4), p(s_->probs.data(), n4);
    const float scale = 1.0f / std::sqrt(float(kHeadDim));
    for (int h = 0; h < kHeads; ++h) {
        const int r0 = h * kHeadDim;
        const float* kh = kT + size_t(r0) * stride;
        int j0 = 0;
        for (; j0 + 16 <= n4; j0 += 16)
            scoreChunk<16>(q + r0, kh, stride, j0, scale, s.data());
        for (; j0 < n4; j0 += 4)
            scoreChunk<4>(q + r0, kh, stride, j0, scale, s.data());
        s.tail(n4 - n).setConstant(-1e30f);
        const float m = s.head(n).maxCoeff();
        p = (s - m).exp();
        Eigen::Map<Head> o(out + r0);
        const float l = reduce(p.data(), n);
        if (!cfg_.flashSoftmax) {
            // Eager attention: normalise the probabilities, then one running sum over keys.
            p.head(n) /= l;
            o = weightedSum(p.data(), vc, r0, 0, n);
            continue;
        }
        // Flash-style: the fp32 row sum, the probabilities cast to bf16 for the P·V product,
        // which is reduced in blocks of keys (the KV blocks) and normalised at the end.
        if (cfg_.bf16)
            for (int j = 0; j < n; ++j)
                p[j] = bf16(p[j]);
        const int kb = std::max(cfg_.block, 1);
        const int nb = (n + kb - 1) / kb;
        Mat& parts = s_->parts;
        const int pstride = int(parts.cols());
        for (int b = 0; b < nb; ++b) {
            Eigen::Map<Head> acc(parts.data() + size_t(b) * pstride);
            acc = weightedSum(p.data(), vc, r0, b * kb, std::min(n, (b + 1) * kb));
        }
        combineTree(parts.data(), pstride, 0, nb, kHeadDim);
        o = Eigen::Map<const Head>(parts.data()) / l;
    }
    round(out, kDModel);
}

const float* Kernel::step(int token) {
    if (len_ >= maxLen_)
        throw std::logic_error("demo kernel: KV cache full");
    if (token < 0 || token >= kVocab)
        throw std::logic_error("demo kernel: token out of range");
    const Weights& w = lw_->w;
    Scratch& s = *s_;
    const int pos = len_;
    // Rotary angles for this position.
    for (int i = 0; i < kHeadDim / 2; ++i) {
        // Angles in fp32; K_inf's inverse frequencies are bf16 (the buffer was cast with the
        // checkpoint), so its angle error grows linearly with the position.
        const float a = float(pos) * invFreq_[size_t(i)];
        float c = float(std::cos(double(a))), sn = float(std::sin(double(a)));
        if (cfg_.bf16) {
            c = bf16(c);
            sn = bf16(sn);
        }
        s.cosv[i] = c;
        s.sinv[i] = sn;
    }
    s.x = w.embed.row(token).transpose().array();
    len_ = pos + 1;
    for (int l = 0; l < kLayers; ++l) {
        const Weights::Layer& L = w.layers[size_t(l)];
        rmsnorm(s.x.data(), L.norm1, s.h.data());
        linear(s.h.data(), L.wqkv, s.qkv.data());
        round(s.qkv.data(), 3 * kDModel);
        float* q = s.qkv.data();
        float* k = q + kDModel;
        float* v = k + kDModel;
        rope(q);
        rope(k);
        for (int d = 0; d < kDModel; ++d)
            kT_[size_t(l)](d, pos) = k[d];
        v_[size_t(l)].row(pos) = Eigen::Map<const Eigen::RowVectorXf>(v, kDModel);
        attend(l, q, s.att.data());
        linear(s.att.data(), L.wo, s.tmp.data());
        round(s.tmp.data(), kDModel);
        s.x += s.tmp;
        round(s.x.data(), kDModel);

        rmsnorm(s.x.data(), L.norm2, s.h.data());
        linear(s.h.data(), L.w1, s.ff.data());
        round(s.ff.data(), kFF);
        s.ff = s.ff / (1.0f + (-s.ff).exp());   // SiLU
        round(s.ff.data(), kFF);
        linear(s.ff.data(), L.w2, s.tmp.data());
        round(s.tmp.data(), kDModel);
        s.x += s.tmp;
        round(s.x.data(), kDModel);
    }
    rmsnorm(s.x.data(), w.normF, s.h.data());
    if (cfg_.fp8Out) {
        // Dynamic per-tensor activation scale, e4m3 operands, fp32 accumulation, rescale.
        const Fp8Tensor& f8 = *lw_->woutFp8;
        const float amax = s.h.abs().maxCoeff();
        const float sh = amax > 0 ? amax / 448.0f : 1.0f;
        for (int i = 0; i < kDModel; ++i)
            s.tmp[i] = kcx::roundFp8e4m3(s.h[i] / sh);
        linear(s.tmp.data(), f8.q, s.logits.data());
        s.logits *= f8.scale * sh;
    } else {
        linear(s.h.data(), w.wout, s.logits.data());
    }
    round(s.logits.data(), kVocab);
    return s.logits.data();
}

}  // namespace kcx::demo
