// Any bytes as a SPEC 1.1 JSON Lines run.
#include <string_view>

#include "core/base/errors.h"
#include "core/formats/loader.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kcx::LoadOptions options;
    options.maxLineBytes = 1 << 20;
    try {
        const kcx::Run run = kcx::parseJsonl(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.jsonl", {}, options);
        (void)run.maxLength();
    } catch (const kcx::InputError&) {
    } catch (const std::exception& e) {
        kcx::fuzz::finding("parseJsonl", e.what());
    }
    return 0;
}
