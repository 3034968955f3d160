// Any bytes as a safetensors run (SPEC 1.2): mapped, header parsed, tensors checked.
#include "core/base/errors.h"
#include "core/formats/loader.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kcx::fuzz::MemFile file(data, size);
    try {
        const kcx::Run run = kcx::loadSafetensors(file.path());
        (void)run.maxLength();
    } catch (const kcx::InputError&) {
    } catch (const std::exception& e) {
        kcx::fuzz::finding("loadSafetensors", e.what());
    }
    return 0;
}
