// The demo's tiny decoder-only transformer and the two kernels that run it (docs/demo.md).
// Internal to core/demo/demo.cpp; plain C++ and Eigen.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/base/xoshiro.h"

namespace kcx::demo {

inline constexpr int kVocab = 128;
inline constexpr int kDModel = 64;
inline constexpr int kHeads = 4;
inline constexpr int kHeadDim = kDModel / kHeads;
inline constexpr int kLayers = 2;
inline constexpr int kFF = 128;

// ---- a portable PRNG (core/base/xoshiro.h) -------------------------------------------------
using kcx::splitmix64;

// xoshiro256**, seeded through splitmix64 from (seed, stream).
class Rng {
public:
    Rng(uint64_t seed, uint64_t stream);
    uint64_t next();
    double uniform();                 // [0, 1), 53 bits
    int below(int n);                 // [0, n)
    int range(int lo, int hi) { return lo + below(hi - lo + 1); }   // [lo, hi]
    double normal();                  // Box–Muller, N(0, 1)
private:
    uint64_t s_[4];
    double spare_ = 0;
    bool hasSpare_ = false;
};

// ---- weights -------------------------------------------------------------------------
using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::VectorXf;

struct Weights {
    Mat embed;                        // V x d
    struct Layer {
        Vec norm1, norm2;             // d
        Mat wqkv;                     // d x 3d (x · W, inputs on rows)
        Mat wo;                       // d x d
        Mat w1;                       // d x ff
        Mat w2;                       // ff x d
    };
    std::vector<Layer> layers;
    Vec normF;                        // d
    Mat wout;                         // d x V

    static Weights init(uint64_t seed);          // the float32 master checkpoint
    Weights roundedBf16() const;                 // what a bf16 serving engine loads
    std::string sha256() const;                  // of the float32 bytes, in a fixed order
};

// ---- the kernels -----------------------------------------------------------------------
struct KernelConfig {
    bool bf16 = false;         // bf16 weights, activations rounded after every op
    int block = 0;             // 0: sequential reductions; else blocks of this width combined pairwise
    bool bf16Rope = false;     // rotary inverse frequencies held in bf16 (error grows with position)
    bool flashSoftmax = false; // unnormalised bf16 P in the P·V product, fp32 row sum
    bool fp8Out = false;       // e4m3 output projection with per-tensor scales
};

struct Fp8Tensor {
    Mat q;          // values of W / scale rounded to e4m3 (stored as float)
    float scale = 1;
};

// Weights as a kernel sees them: the master copy or a rounded one, plus the FP8 copy of
// the output projection when a kernel needs it.
struct LoadedWeights {
    Weights w;
    std::shared_ptr<const Fp8Tensor> woutFp8;
    static std::shared_ptr<const LoadedWeights> load(const Weights& master, bool bf16, bool fp8);
};

// One kernel decoding one sequence: a KV cache and an incremental forward pass. The
// computation for a row depends only on the row and the cache, so prefill, decoding and
// teacher forcing give the same numbers.
class Kernel {
public:
    Kernel(std::shared_ptr<const LoadedWeights> weights, const KernelConfig& config, int maxLen);
    ~Kernel();
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    // Appends `token` at position length() and returns the V next-token logits (valid
    // until the next call).
    const float* step(int token);
    int length() const { return len_; }
    void truncate(int n) { len_ = n; }   // forget positions >= n

private:
    struct Scratch;
    void linear(const float* x, const Mat& w, float* y) const;
    float reduce(const float* v, int n) const;
    void rmsnorm(const float* x, const Vec& g, float* y) const;
    void rope(float* v) const;
    void attend(int layer, const float* q, float* out) const;
    void round(float* v, int n) const;

    std::shared_ptr<const LoadedWeights> lw_;
    KernelConfig cfg_;
    int maxLen_;
    int len_ = 0;
    std::vector<Mat> kT_;    // per layer: d x maxLen (keys transposed, for the score products)
    std::vector<Mat> v_;     // per layer: maxLen x d
    std::vector<float> invFreq_;
    std::unique_ptr<Scratch> s_;
};

}  // namespace kcx::demo
