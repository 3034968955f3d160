// Any bytes as a summary file (docs/summaries.md), either container: read and checked, then
// every figure a command reads from it computed, and written back in both containers: what
// is read must write the same text and bytes.
#include "core/base/errors.h"
#include "core/summary/summary.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kcx::fuzz::MemFile file(data, size);
    kcx::RunSummary s;
    try {
        s = kcx::readSummary(file.path());
    } catch (const kcx::InputError&) {
        return 0;
    } catch (const std::exception& e) {
        kcx::fuzz::finding("readSummary", e.what());
    }
    try {
        if (auto all = s.total()) {
            for (const auto& [name, cell] : all->metrics)
                for (double q : {0.0, 0.5, 0.99, 0.999, 1.0})
                    (void)kcx::sketchQuantile(cell, q);
            (void)kcx::essOf(all->run);
            (void)kcx::probPearsonOf(all->run);
            (void)kcx::logPplDiffOf(all->run);
        }
        const std::string text = kcx::summaryJsonText(s);
        if (kcx::summaryJsonText(kcx::parseSummary(text, "rewritten")) != text)
            kcx::fuzz::finding("summaryJsonText", "a summary read back does not write the same text");
        const std::string bytes = kcx::summaryBinaryBytes(s);
        if (kcx::summaryBinaryBytes(kcx::parseSummary(bytes, "rewritten")) != bytes)
            kcx::fuzz::finding("summaryBinaryBytes", "a summary read back does not write the same bytes");
    } catch (const std::exception& e) {
        kcx::fuzz::finding("summary figures", e.what());
    }
    return 0;
}
