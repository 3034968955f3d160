// The RL frameworks' own corrections for training–inference mismatch and their documented
// defaults, as KCX methods (issue 21; docs/corrections.md "Presets"), each with the file of the
// framework's code or docs it was read from and how faithful the KCX method is. Read from the
// frameworks' repositories at the commits named in `source`.
#pragma once

#include <string>
#include <vector>

#include "core/corrections/corrections.h"

namespace kcx {

struct PresetMethod {
    std::string method;     // "tis:2", parsed by parseCorrection
    std::string setting;    // the framework's own name for it
    std::string fidelity;   // "exact" or "approximate: why"
    std::string source;     // repo@commit path:line
};

struct CorrectionPreset {
    std::string framework;   // verl, slime, skyrl, trl, nemo-rl, openrlhf, prime-rl
    std::string lpTrain;     // which log-prob plays lp_train there
    std::vector<PresetMethod> methods;
    std::string note;        // what has no KCX method
};

const std::vector<CorrectionPreset>& correctionPresets();
const CorrectionPreset* findPreset(const std::string& framework);
std::string presetNames();   // "verl, slime, …"

}  // namespace kcx
