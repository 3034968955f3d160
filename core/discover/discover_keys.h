// The slice keys slice discovery searches (core/discover/discover.h): labelled and derived
// keys as codes, and the ranges that are not bucket edges (issue 20) — dyadic position
// intervals and "step ≥ s". Internal to core/discover.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/formats/run.h"
#include "core/metrics/derived_slices.h"

namespace kcx::discover_detail {

// One slice key as integer codes: per token (derived token keys) or per sequence.
struct Key {
    std::string name;
    bool token = false;
    std::vector<std::string> values;
    const int8_t* tok = nullptr;
    std::vector<int32_t> seq;
    std::shared_ptr<const DerivedCodes> hold;
    std::vector<int8_t> ownTok;                                // codes this search made
    bool position = false;                                     // positions or derived.pos_bucket
    std::vector<std::pair<int64_t, int64_t>> ranges;           // a position key's [from, to) per value
    std::vector<std::vector<std::string>> anyOf;               // a step-range key's labels per value
};

// Dyadic position keys (DiscoverOptions::positionRanges): per scale w, the intervals
// [a·w, (a+1)·w) and, shifted by w, [w + a·2w, w + (a+1)·2w) (the adjacent pairs that are
// not the next scale's own intervals).
void addPositionKeys(const Run& run, size_t maxValues, std::vector<Key>& keys);
// "step ≥ s" keys (DiscoverOptions::stepRanges): s at up to 8 evenly spread places of the
// run's steps, the first step excluded (≥ it is every sequence).
void addStepKeys(const Run& run, std::vector<Key>& keys);
// Two keys whose conjunction says nothing new: two position keys (nested or overlapping),
// or two ranges of steps.
bool exclusive(const Key& a, const Key& b);

}  // namespace kcx::discover_detail
