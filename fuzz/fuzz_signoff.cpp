// Any bytes as a sign-off record: read, validated, and its signature checked.
#include "core/signoff/signoff.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kcx::fuzz::MemFile file(data, size);
    try {
        const kcx::SignoffRecord r = kcx::readSignoff(file.path());
        (void)kcx::signatureValid(r);
        (void)kcx::signedBytes(r);
    } catch (const kcx::SignoffError&) {
    } catch (const std::exception& e) {
        kcx::fuzz::finding("readSignoff", e.what());
    }
    return 0;
}
