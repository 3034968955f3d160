// Any bytes as a contract (YAML or JSON), and when it parses, evaluated against a small
// fixed run: the parser and the evaluator must cope with whatever the text says.
#include <memory>
#include <string>

#include "core/base/errors.h"
#include "core/contract/contract.h"
#include "core/evaluate/evaluator.h"
#include "core/formats/loader.h"
#include "fuzz/fuzz_util.h"

namespace {
std::shared_ptr<const kcx::Run> smallRun() {
    static const auto run = std::make_shared<const kcx::Run>(kcx::parseJsonl(
        R"({"kcx_header": {"kernels": {"train": {"name": "t"}, "inf": {"name": "i"}}}}
{"id": "a", "tokens": [1, 2, 3], "logp_train": [-1, -2, -0.5], "logp_inf": [-1.5, -2, -0.25], "slices": {"task": "math"}}
{"id": "b", "tokens": [4, 5], "logp_train": [-0.1, -3], "logp_inf": [-0.2, null], "slices": {"task": "chat"}}
)",
        "small.jsonl"));
    return run;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    kcx::Contract contract;
    try {
        contract = kcx::parseContract(text, "fuzz.yaml");
    } catch (const kcx::InputError&) {
        return 0;
    } catch (const std::exception& e) {
        kcx::fuzz::finding("parseContract", e.what());
    }
    try {
        (void)kcx::evaluateContract(contract, smallRun());
    } catch (const std::invalid_argument&) {
        // a stage or option the run cannot satisfy: documented
    } catch (const std::exception& e) {
        kcx::fuzz::finding("evaluateContract", e.what());
    }
    return 0;
}
