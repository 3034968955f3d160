// Internal to the JSONL loader: what one chunk of lines parses into, and the join.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/formats/run.h"

namespace kcx::detail {

struct ChunkRun {
    nlohmann::json header;
    bool sawHeader = false;
    std::vector<std::string> ids;
    std::vector<size_t> lineStarts;   // byte offset of each sequence's line (for errors)
    std::vector<int64_t> lengths;
    std::vector<int32_t> tokens;
    std::vector<double> lpTrain, lpInf;
    std::vector<bool> hasText;
    std::string textPool;
    std::vector<uint64_t> textEnds;   // per token, end offset in textPool
    int topkK[2] = {0, 0};
    size_t topkFirstAt[2] = {0, 0};
    std::vector<bool> hasTopk[2];
    std::vector<int32_t> topkIds[2];
    std::vector<double> topkLogp[2];
    int64_t vocab = 0;
    std::vector<int64_t> logitRows;   // chunk-local token index
    std::vector<double> logitsTrain, logitsInf;
    std::vector<double> rewardTrain, rewardInf;
    bool haveReward[2] = {false, false};
    std::vector<std::vector<std::pair<std::string, std::string>>> slices;
    std::vector<nlohmann::json> runtime;
};

// Joins the chunks in order into one run; checks what spans chunks (duplicate ids, a
// consistent k and V) and reports problems with line and column in `text`.
Run joinChunks(std::vector<ChunkRun>& parts, std::string_view text, const std::string& name);

}  // namespace kcx::detail
