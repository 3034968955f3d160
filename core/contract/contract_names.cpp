// Names of the contract's enumerations, both ways.
#include "core/contract/contract.h"

namespace kcx {
namespace {
template <class E, size_t N>
std::optional<E> lookup(const char* const (&names)[N], std::string_view s) {
    for (size_t i = 0; i < N; ++i)
        if (s == names[i])
            return E(i);
    return std::nullopt;
}
const char* const kFamilies[] = {"numerical", "statistical", "runtime", "observability"};
const char* const kSeverities[] = {"info", "warn", "error", "critical"};
const char* const kActions[] = {"pass", "warn", "hold", "shadow_only", "route_to_reference", "block_promotion",
                                "rollback"};
const char* const kStatuses[] = {"pass", "fail", "inconclusive", "error"};
}  // namespace

const char* familyName(Family f) { return kFamilies[int(f)]; }
const char* severityName(Severity s) { return kSeverities[int(s)]; }
const char* actionName(Action a) { return kActions[int(a)]; }
const char* statusName(Status s) { return kStatuses[int(s)]; }
std::optional<Family> parseFamily(std::string_view s) { return lookup<Family>(kFamilies, s); }
std::optional<Severity> parseSeverity(std::string_view s) { return lookup<Severity>(kSeverities, s); }
std::optional<Action> parseAction(std::string_view s) { return lookup<Action>(kActions, s); }
std::optional<Status> parseStatus(std::string_view s) { return lookup<Status>(kStatuses, s); }

const Clause* Contract::find(const std::string& id) const {
    for (const auto& c : clauses)
        if (c.id == id)
            return &c;
    return nullptr;
}

}  // namespace kcx
