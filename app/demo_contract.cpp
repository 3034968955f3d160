// The embedded demo contract. The bytes come from a header generated at configure time
// (app/demo_contract_yaml.h.in) as a plain byte array: no raw string literal, so no
// delimiter can clash with the YAML and moc has nothing to mis-tokenise.
#include "app/demo_contract.h"

#include "demo_contract_yaml.h"

namespace kcx::app {

std::string_view demoContractYaml() {
    // The array ends with one extra NUL byte (so that an empty file still compiles).
    return {reinterpret_cast<const char*>(kDemoContractBytes), sizeof kDemoContractBytes - 1};
}

}  // namespace kcx::app
