// The built-in demo run (docs/demo.md): traffic, rollouts under K_inf, teacher forcing
// under both kernels, rewards, simulated serving facts, and the Run they make.
#include "core/demo/demo.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "core/base/parallel.h"
#include "core/demo/demo_model.h"
#include "core/formats/run_writer.h"

namespace kcx {

using namespace demo;

namespace {

// ---- a made-up readable vocabulary ------------------------------------------------------
enum Cat { Digit, Symbol, Code, Word, Syllable };
struct Tok {
    const char* text;
    Cat cat;
};
// clang-format off
constexpr std::array<Tok, kVocab> kTokens = {{
    {"0", Digit}, {"1", Digit}, {"2", Digit}, {"3", Digit}, {"4", Digit},
    {"5", Digit}, {"6", Digit}, {"7", Digit}, {"8", Digit}, {"9", Digit},
    {" +", Symbol}, {" -", Symbol}, {" *", Symbol}, {" /", Symbol}, {" =", Symbol},
    {"(", Symbol}, {")", Symbol}, {".", Symbol}, {",", Symbol}, {":", Symbol},
    {";", Symbol}, {"?", Symbol}, {"!", Symbol}, {" <", Symbol}, {" >", Symbol},
    {"[", Symbol}, {"]", Symbol}, {"{", Symbol}, {"}", Symbol}, {"\"", Symbol},
    {"_", Symbol}, {"\n", Symbol}, {"  ", Symbol}, {" #", Symbol}, {"%", Symbol},
    {" def", Code}, {" return", Code}, {" if", Code}, {" else", Code}, {" for", Code},
    {" in", Code}, {" while", Code}, {" x", Code}, {" y", Code}, {" i", Code},
    {" n", Code}, {" self", Code}, {" print", Code}, {" import", Code}, {" class", Code},
    {" True", Code}, {" False", Code}, {" None", Code}, {" len", Code}, {" range", Code},
    {" list", Code}, {" dict", Code},
    {" the", Word}, {" a", Word}, {" of", Word}, {" and", Word}, {" to", Word},
    {" is", Word}, {" it", Word}, {" that", Word}, {" we", Word}, {" you", Word},
    {" can", Word}, {" what", Word}, {" how", Word}, {" why", Word}, {" so", Word},
    {" not", Word}, {" but", Word}, {" with", Word}, {" this", Word}, {" are", Word},
    {" be", Word}, {" on", Word}, {" at", Word}, {" by", Word}, {" as", Word},
    {" from", Word}, {" or", Word}, {" one", Word}, {" two", Word}, {" sum", Word},
    {" number", Word}, {" answer", Word}, {" step", Word}, {" first", Word}, {" then", Word},
    {" next", Word}, {" find", Word}, {" let", Word}, {" value", Word}, {" total", Word},
    {" time", Word}, {" story", Word},
    {" question", Word}, {" hello", Word}, {" thanks", Word}, {" please", Word}, {" think", Word},
    {" know", Word}, {" want", Word}, {" good", Word}, {" more", Word},
    {"ing", Syllable}, {"ed", Syllable}, {"s", Syllable}, {"er", Syllable}, {"ly", Syllable},
    {"tion", Syllable}, {" re", Syllable}, {" un", Syllable}, {" pre", Syllable}, {"al", Syllable},
    {"ous", Syllable}, {"ment", Syllable}, {" ka", Syllable}, {"lo", Syllable}, {"mi", Syllable},
    {"ra", Syllable}, {"ve", Syllable}, {"to", Syllable}, {"na", Syllable}, {"shi", Syllable},
}};
// clang-format on

// ---- traffic -----------------------------------------------------------------------------
const std::vector<std::string> kTasks = {"math", "code", "chat", "long_context"};
const std::vector<std::string> kLengthBuckets = {"short", "medium", "long"};
const std::vector<std::string> kPrecisions = {"bf16", "fp8"};
constexpr int kTopK = 8;
constexpr int kHorizon = 32;             // greedy decode length for the rewards
constexpr int kLogitSeqEvery = 4, kLogitPosEvery = 16;
constexpr const char* kVersion = "1.0.0";

int bucketOf(int length) { return length < 128 ? 0 : length < 256 ? 1 : 2; }

struct SequencePlan {
    int task = 0, precision = 0, length = 0;
    std::vector<int> prompt;
    double arrivalMs = 0;
    int batch = 1;
    double waitMs = 0;
};

// Prompt tokens of a task: which categories it draws from, with weights.
std::vector<int> promptPool(int task) {
    std::array<int, 5> weight{};   // Digit, Symbol, Code, Word, Syllable
    switch (task) {
    case 0: weight = {6, 3, 0, 2, 0}; break;   // math
    case 1: weight = {1, 3, 5, 0, 0}; break;   // code
    case 2: weight = {0, 1, 0, 6, 1}; break;   // chat
    default: weight = {1, 1, 1, 4, 3}; break;  // long_context: a document
    }
    std::vector<int> pool;
    for (int t = 0; t < kVocab; ++t)
        pool.insert(pool.end(), size_t(weight[size_t(kTokens[size_t(t)].cat)]), t);
    return pool;
}

std::vector<SequencePlan> makePlans(const DemoOptions& o) {
    std::vector<std::vector<int>> pools;
    for (int t = 0; t < 4; ++t)
        pools.push_back(promptPool(t));
    std::vector<SequencePlan> plans(size_t(o.sequences));
    double clock = 0;
    std::array<int, 20> order{};
    for (size_t s = 0; s < plans.size(); ++s) {
        SequencePlan& p = plans[s];
        Rng rng(o.seed, 0x7a1f1c0000000000ULL + s);   // a stream per sequence
        const double u = rng.uniform();
        p.task = u < 0.25 ? 0 : u < 0.5 ? 1 : u < 0.78 ? 2 : 3;
        p.precision = rng.uniform() < 0.25 ? 1 : 0;
        // Response lengths are stratified: every block of 20 sequences holds 6 short,
        // 7 medium and 7 long ones, in an order shuffled per block.
        const size_t block = s / 20;
        if (s % 20 == 0) {
            Rng br(o.seed, 0x3b0c4e0000000000ULL + block);
            order = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2};
            for (int i = 19; i > 0; --i)
                std::swap(order[size_t(i)], order[size_t(br.below(i + 1))]);
        }
        static constexpr int lenLo[] = {48, 128, 272}, lenHi[] = {127, 255, 479};
        const int bucket = order[s % 20];
        p.length = rng.range(lenLo[bucket], lenHi[bucket]);
        static constexpr int lo[] = {12, 16, 8, 160}, hi[] = {40, 64, 48, 256};
        const int promptLen = rng.range(lo[p.task], hi[p.task]);
        const auto& pool = pools[size_t(p.task)];
        for (int i = 0; i < promptLen; ++i)
            p.prompt.push_back(pool[size_t(rng.below(int(pool.size())))]);
        // Arrivals: a Poisson stream whose rate swings between quiet and busy.
        const double rate = 0.25 * (1.0 + 0.9 * std::sin(double(s) * 2.0 * 3.141592653589793 / 90.0));
        clock += -std::log(1.0 - rng.uniform()) / std::max(rate, 0.01);   // ms
        p.arrivalMs = clock;
    }
    // A dynamic batcher: a batch opens at an arrival and takes everything that arrives in
    // the next 40 ms, up to 32 requests.
    for (size_t s = 0; s < plans.size();) {
        size_t e = s + 1;
        while (e < plans.size() && e - s < 32 && plans[e].arrivalMs - plans[s].arrivalMs < 40.0)
            ++e;
        const double closeMs = e - s == 32 ? plans[e - 1].arrivalMs : plans[s].arrivalMs + 40.0;
        for (size_t i = s; i < e; ++i) {
            plans[i].batch = int(e - s);
            plans[i].waitMs = closeMs - plans[i].arrivalMs;
        }
        s = e;
    }
    return plans;
}

// The batch changes K_inf's split-K width, as tile heuristics do (not batch invariant).
int infBlock(int batch) { return batch >= 16 ? 32 : 16; }

nlohmann::json runtimeOf(const SequencePlan& p, bool identical) {
    const double prefill = 0.03 * double(p.prompt.size()) * (1.0 + p.batch / 16.0);
    const double perToken = 3.5 + 0.22 * p.batch;
    const double latency = p.waitMs + prefill + perToken * p.length;
    auto r3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
    std::string version = std::string("demo-inf/") + kVersion + (identical ? "-fp32" : p.precision ? "-fp8" : "-bf16");
    return {{"batch_size", p.batch},
            {"latency_ms", r3(latency)},
            {"kernel_version", version},
            {"tokens_per_s", r3(p.length / (latency / 1000.0))}};
}

// ---- one sequence --------------------------------------------------------------------------
struct SeqOut {
    std::vector<int32_t> tokens;
    std::vector<double> lpTrain, lpInf;
    std::vector<int32_t> topTrainIds, topInfIds;
    std::vector<double> topTrainLp, topInfLp;
    std::vector<int64_t> logitPos;           // positions t with full logits
    std::vector<double> logitsTrain, logitsInf;
    double rewardTrain = 0, rewardInf = 0;
};

using LogProbs = std::array<double, kVocab>;

LogProbs logSoftmax(const float* z) {
    double m = z[0];
    for (int i = 1; i < kVocab; ++i)
        m = std::max(m, double(z[i]));
    double sum = 0;
    for (int i = 0; i < kVocab; ++i)
        sum += std::exp(double(z[i]) - m);
    const double lse = m + std::log(sum);
    LogProbs lp;
    for (int i = 0; i < kVocab; ++i)
        lp[size_t(i)] = double(z[i]) - lse;
    return lp;
}

void appendTopK(const LogProbs& lp, std::vector<int32_t>& ids, std::vector<double>& logp) {
    std::array<int32_t, kVocab> order;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + kTopK, order.end(), [&](int32_t a, int32_t b) {
        return lp[size_t(a)] > lp[size_t(b)] || (lp[size_t(a)] == lp[size_t(b)] && a < b);
    });
    for (int j = 0; j < kTopK; ++j) {
        ids.push_back(order[size_t(j)]);
        logp.push_back(lp[size_t(order[size_t(j)])]);
    }
}

int argmax(const float* z) { return int(std::max_element(z, z + kVocab) - z); }

// Greedy continuation of the prompt already in the kernel; scored against the prompt's
// rhythm: position h should have the category of prompt token h (mod prompt length).
double greedyReward(Kernel& k, const std::vector<float>& last, const std::vector<int>& prompt) {
    const int keep = k.length();
    int tok = argmax(last.data());
    int hits = 0;
    for (int h = 0; h < kHorizon; ++h) {
        hits += kTokens[size_t(tok)].cat == kTokens[size_t(prompt[size_t(h) % prompt.size()])].cat;
        if (h + 1 < kHorizon)
            tok = argmax(k.step(tok));
    }
    k.truncate(keep);
    return double(hits) / kHorizon;
}

struct Models {
    std::shared_ptr<const LoadedWeights> train, inf;
    KernelConfig trainCfg, infCfg;
};

SeqOut runSequence(const Models& m, const SequencePlan& p, uint64_t seed, size_t s, bool identical) {
    const int promptLen = int(p.prompt.size());
    const int maxLen = promptLen + std::max(p.length, kHorizon) + 1;
    KernelConfig icfg = m.infCfg;
    if (!identical) {
        icfg.block = infBlock(p.batch);
        icfg.fp8Out = p.precision == 1;
    }
    Kernel kt(m.train, m.trainCfg, maxLen), ki(m.inf, icfg, maxLen);
    const float* z = nullptr;
    for (int tok : p.prompt)
        z = kt.step(tok);
    std::vector<float> zt(z, z + kVocab);
    for (int tok : p.prompt)
        z = ki.step(tok);
    std::vector<float> zi(z, z + kVocab);

    SeqOut out;
    out.rewardTrain = greedyReward(kt, zt, p.prompt);
    out.rewardInf = greedyReward(ki, zi, p.prompt);

    // Rollout: sample from K_inf at temperature 1; K_train scores the same tokens.
    Rng rng(seed, 0x5a3b1e0000000000ULL + s);
    const bool keepLogits = s % kLogitSeqEvery == 0;
    for (int t = 0; t < p.length; ++t) {
        const LogProbs li = logSoftmax(zi.data()), lt = logSoftmax(zt.data());
        const double u = rng.uniform();
        double cum = 0;
        int y = -1;
        for (int i = 0; i < kVocab && y < 0; ++i) {
            cum += std::exp(li[size_t(i)]);
            if (u < cum)
                y = i;
        }
        if (y < 0)   // rounding left the cumulative sum just short of u
            y = int(std::max_element(li.begin(), li.end()) - li.begin());
        out.tokens.push_back(y);
        out.lpInf.push_back(li[size_t(y)]);
        out.lpTrain.push_back(lt[size_t(y)]);
        appendTopK(lt, out.topTrainIds, out.topTrainLp);
        appendTopK(li, out.topInfIds, out.topInfLp);
        if (keepLogits && t % kLogitPosEvery == 0) {
            out.logitPos.push_back(t);
            out.logitsTrain.insert(out.logitsTrain.end(), zt.begin(), zt.end());
            out.logitsInf.insert(out.logitsInf.end(), zi.begin(), zi.end());
        }
        if (t + 1 < p.length) {
            z = ki.step(y);
            std::copy(z, z + kVocab, zi.begin());
            z = kt.step(y);
            std::copy(z, z + kVocab, zt.begin());
        }
    }
    return out;
}

// Runs every sequence on worker threads; progress and cancellation on the calling thread.
std::vector<SeqOut> runAll(const Models& m, const std::vector<SequencePlan>& plans, const DemoOptions& o,
                           const Progress& progress) {
    std::vector<SeqOut> outs(plans.size());
    std::atomic<size_t> next{0}, done{0};
    std::atomic<bool> stop{false};
    std::exception_ptr error;
    std::mutex mu;
    std::condition_variable cv;
    auto work = [&] {
        while (!stop) {
            const size_t s = next.fetch_add(1);
            if (s >= plans.size())
                return;
            try {
                outs[s] = runSequence(m, plans[s], o.seed, s, o.identicalKernels);
            } catch (...) {
                std::lock_guard lock(mu);
                if (!error)
                    error = std::current_exception();
                stop = true;
            }
            done.fetch_add(1);
            cv.notify_one();
        }
    };
    const int threads = std::min(resolveThreads(o.threads), std::max(1, int(plans.size())));
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
        pool.emplace_back(work);
    bool cancelled = false;
    std::exception_ptr callerError;   // thrown by the progress callback
    try {
        std::unique_lock lock(mu);
        while (done.load() < plans.size() && !stop) {
            const double f = 0.9 * double(done.load()) / double(plans.size());
            lock.unlock();
            const bool go = !progress || progress(f);
            lock.lock();
            if (!go) {
                cancelled = true;
                break;
            }
            cv.wait_for(lock, std::chrono::milliseconds(50));
        }
    } catch (...) {
        callerError = std::current_exception();
    }
    if (cancelled || callerError)
        stop = true;
    for (auto& t : pool)
        t.join();
    if (callerError)
        std::rethrow_exception(callerError);
    if (error)
        std::rethrow_exception(error);
    if (cancelled)
        throw Cancelled{};
    return outs;
}

nlohmann::json makeHeader(const DemoOptions& o, const std::string& sha) {
    nlohmann::json train = {{"name", "demo-train"}, {"version", kVersion}, {"precision", "fp32"},
                            {"hardware", "cpu"}, {"weights_sha256", sha}, {"batch_invariant", true},
                            {"reduction", "sequential fp32"}, {"attention", "eager, fp32 softmax"},
                            {"rotary", "fp32 inverse frequencies"}};
    nlohmann::json inf = {{"name", "demo-inf"}, {"version", kVersion}, {"precision", "bf16"},
                          {"hardware", "cpu"}, {"weights_sha256", sha}, {"batch_invariant", false},
                          {"reduction", "split-K blocks of 16 (32 at batch >= 16), pairwise"},
                          {"attention", "flash-style: fp32 row sums, bf16 probabilities in the PV product, KV blocks"},
                          {"rotary", "bf16 inverse frequencies (angle error grows with position)"},
                          {"fp8", "e4m3 output projection, per-tensor scales, on slice precision=fp8"}};
    if (o.identicalKernels) {
        inf = train;
        inf["name"] = "demo-inf";
        inf["identical_to_train"] = true;
    }
    return {{"kernels", {{"train", train}, {"inf", inf}}},
            {"model",
             {{"arch", "decoder-only transformer"}, {"layers", kLayers}, {"d_model", kDModel},
              {"heads", kHeads}, {"d_ff", kFF}, {"vocab", kVocab}, {"norm", "rmsnorm"},
              {"position", "rotary"}}},
            {"created", "2025-01-01T00:00:00Z"},
            {"source", "kcx demo"},
            {"demo", {{"seed", o.seed}, {"sequences", o.sequences}, {"top_k", kTopK},
                      {"reward_horizon", kHorizon}}}};
}

std::string sequenceId(size_t s, size_t n) {
    std::string digits = std::to_string(s);
    const size_t width = std::max<size_t>(4, std::to_string(n ? n - 1 : 0).size());
    return "demo-" + std::string(width - std::min(width, digits.size()), '0') + digits;
}

Run assemble(const std::vector<SequencePlan>& plans, std::vector<SeqOut>& outs, const DemoOptions& o,
             const std::string& sha) {
    Run run;
    run.header = makeHeader(o, sha);
    std::vector<int64_t> offsets{0}, logitRows;
    std::vector<int32_t> tokens, topT, topI;
    std::vector<double> lpT, lpI, topTl, topIl, logT, logI;
    run.slices.keys = {"task", "length_bucket", "precision"};
    run.slices.values = {kTasks, kLengthBuckets, kPrecisions};
    run.textOffsets.push_back(0);
    for (size_t s = 0; s < plans.size(); ++s) {
        SeqOut& q = outs[s];
        const int64_t base = offsets.back();
        run.ids.push_back(sequenceId(s, plans.size()));
        offsets.push_back(base + int64_t(q.tokens.size()));
        tokens.insert(tokens.end(), q.tokens.begin(), q.tokens.end());
        lpT.insert(lpT.end(), q.lpTrain.begin(), q.lpTrain.end());
        lpI.insert(lpI.end(), q.lpInf.begin(), q.lpInf.end());
        topT.insert(topT.end(), q.topTrainIds.begin(), q.topTrainIds.end());
        topI.insert(topI.end(), q.topInfIds.begin(), q.topInfIds.end());
        topTl.insert(topTl.end(), q.topTrainLp.begin(), q.topTrainLp.end());
        topIl.insert(topIl.end(), q.topInfLp.begin(), q.topInfLp.end());
        for (int64_t t : q.logitPos)
            logitRows.push_back(base + t);
        logT.insert(logT.end(), q.logitsTrain.begin(), q.logitsTrain.end());
        logI.insert(logI.end(), q.logitsInf.begin(), q.logitsInf.end());
        run.rewardTrain.push_back(q.rewardTrain);
        run.rewardInf.push_back(q.rewardInf);
        const SequencePlan& p = plans[s];
        run.slices.codes.insert(run.slices.codes.end(), {p.task, bucketOf(p.length), p.precision});
        run.runtime.push_back(runtimeOf(p, o.identicalKernels));
        for (int32_t tok : q.tokens) {
            run.textPool += kTokens[size_t(tok)].text;
            run.textOffsets.push_back(run.textPool.size());
        }
        q = SeqOut{};   // release as we go
    }
    run.offsets = Array<int64_t>(std::move(offsets));
    run.tokens = Array<int32_t>(std::move(tokens));
    run.lpTrain = Column(Array<double>(std::move(lpT)));
    run.lpInf = Column(Array<double>(std::move(lpI)));
    run.topkTrain = {kTopK, Array<int32_t>(std::move(topT)), Column(Array<double>(std::move(topTl)))};
    run.topkInf = {kTopK, Array<int32_t>(std::move(topI)), Column(Array<double>(std::move(topIl)))};
    if (!logitRows.empty()) {
        run.logits.rows = Array<int64_t>(std::move(logitRows));
        run.logits.vocab = kVocab;
        run.logits.train = Column(Array<double>(std::move(logT)));
        run.logits.inf = Column(Array<double>(std::move(logI)));
    }
    return run;
}

}  // namespace

Run makeDemoRun(const DemoOptions& options, const Progress& progress) {
    if (options.sequences < 1)
        throw std::invalid_argument("demo: at least one sequence");
    report(progress, 0.0);
    const Weights master = Weights::init(options.seed);
    Models m;
    m.train = LoadedWeights::load(master, false, false);
    if (options.identicalKernels) {
        m.inf = m.train;
        m.infCfg = m.trainCfg;
    } else {
        m.inf = LoadedWeights::load(master, true, true);
        m.infCfg = {.bf16 = true, .block = 16, .bf16Rope = true, .flashSoftmax = true, .fp8Out = false};
    }
    const std::vector<SequencePlan> plans = makePlans(options);
    std::vector<SeqOut> outs = runAll(m, plans, options, progress);
    report(progress, 0.95);
    Run run = assemble(plans, outs, options, master.sha256());
    run.checkInvariants();
    report(progress, 1.0);
    return run;
}

std::string writeDemo(const std::string& dir, const DemoOptions& options) {
    const Run run = makeDemoRun(options);
    std::filesystem::create_directories(dir);
    const std::string jsonl = (std::filesystem::path(dir) / "demo.jsonl").string();
    writeJsonl(run, jsonl);
    writeSafetensors(run, (std::filesystem::path(dir) / "demo.safetensors").string());
    return jsonl;
}

}  // namespace kcx
