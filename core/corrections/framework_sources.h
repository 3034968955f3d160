// The RL frameworks' repositories at the commits KCX's presets and framework figures were read
// from (docs/corrections.md): "owner/name@commit", followed in each citation by a path:line.
#pragma once

namespace kcx::sources {

inline constexpr const char* kVerl = "volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7";
inline constexpr const char* kSlime = "THUDM/slime@624b824a898ab0ec1fcb4d373004c7f3852bf515";
inline constexpr const char* kSkyrl = "NovaSky-AI/SkyRL@a9564572eb8e91076be43c1bd5e4615e3de17265";
inline constexpr const char* kTrl = "huggingface/trl@f2cd57710ae345ea6428ae95363267fcf38a3dc8";
inline constexpr const char* kNemo = "NVIDIA-NeMo/RL@7ea279abfbeb698b092856d0dab61e7cf39bc909";
inline constexpr const char* kOpenrlhf = "OpenRLHF/OpenRLHF@3c3be6234e0cb353e76bb8019947db9dfe99fca7";
inline constexpr const char* kPrime = "PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64";
// prime-rl's loss before 2026-03 (the parent of "change default rl algo to ipo").
inline constexpr const char* kPrimeLegacy = "PrimeIntellect-ai/prime-rl@bf71516c9154e4da2f2b92396d80045b271f46a3";

}  // namespace kcx::sources
