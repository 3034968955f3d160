// Any bytes as a run file: the loader chooses by content (safetensors, JSON Lines plain or
// gzip, NumPy, trainer exports) and must either return a whole run or throw InputError.
#include "core/base/errors.h"
#include "core/formats/loader.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kcx::fuzz::MemFile file(data, size);
    kcx::LoadOptions options;
    options.maxLineBytes = 1 << 20;
    try {
        const kcx::Run run = kcx::loadRun(file.path(), {}, options);
        (void)run.maxLength();
    } catch (const kcx::InputError&) {
    } catch (const std::exception& e) {
        kcx::fuzz::finding("loadRun", e.what());
    }
    return 0;
}
