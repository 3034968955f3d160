// Any bytes as one side of a log-prob import (OpenAI chat/completions, SGLang, plain
// arrays), then paired with itself.
#include <string_view>

#include "core/base/errors.h"
#include "core/formats/importers.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const kcx::ImportedSide side =
            kcx::parseLogprobJsonl(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.jsonl");
        kcx::ImportOptions options;
        options.allowMismatch = true;
        (void)kcx::importPair(side, side, options);
    } catch (const kcx::InputError&) {
    } catch (const std::exception& e) {
        kcx::fuzz::finding("import", e.what());
    }
    return 0;
}
