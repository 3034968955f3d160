// The built-in demo contract: resources/contracts/demo.yaml, embedded in the binary at
// build time (app/CMakeLists.txt turns the file into a byte array; no Qt resources, so it
// works headless). `kcx demo` writes it as DIR/demo-contract.yaml, and it is the contract
// the window opens with the demo run.
#pragma once

#include <string_view>

namespace kcx::app {

// The bytes of resources/contracts/demo.yaml as they were when kcx was built.
std::string_view demoContractYaml();

// The file name `kcx demo` gives it next to demo.jsonl.
inline constexpr const char* kDemoContractFile = "demo-contract.yaml";

}  // namespace kcx::app
