// The kernel contract C = (N, S, R, O, Pi) of SPEC 4, as one typed model.
//
// The parser keeps the source position of every value a user may edit (thresholds,
// levels, confidence), so that the window can write an edited number back in place
// without touching comments, key order or formatting.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics/aggregate.h"

namespace kcx {

// Where a value stands in the contract's text: 1-based line and column, 0-based byte
// offset and byte length of the scalar as written (0/0 when unknown).
struct SourceSpan {
    int line = 0, column = 0;
    size_t offset = 0, length = 0;
    bool known() const { return line > 0; }
};

enum class Family { Numerical, Statistical, Runtime, Observability };
enum class Severity { Info, Warn, Error, Critical };
// In increasing strength (SPEC 4).
enum class Action { Pass, Warn, Hold, ShadowOnly, RouteToReference, BlockPromotion, Rollback };
enum class Status { Pass, Fail, Inconclusive, Error };

const char* familyName(Family);
const char* severityName(Severity);
const char* actionName(Action);
const char* statusName(Status);
std::optional<Family> parseFamily(std::string_view);
std::optional<Severity> parseSeverity(std::string_view);
std::optional<Action> parseAction(std::string_view);
std::optional<Status> parseStatus(std::string_view);

// `where:` / `slice:` — every given key must match; a key lists the values it accepts.
struct SliceFilter {
    std::map<std::string, std::vector<std::string>> anyOf;
    bool empty() const { return anyOf.empty(); }
};

// A number the user may edit, with where it stands.
struct Threshold {
    double value = 0;
    SourceSpan span;
};

struct Clause {
    std::string id;
    Family family = Family::Numerical;
    Severity severity = Severity::Error;
    std::string description;
    SourceSpan span;                       // the clause's `id:` value

    // numerical and statistical (and observability's max_nonfinite_fraction)
    std::string metric;
    std::string metricAlias;               // the framework's name the contract used, if any (metric_aliases.h)
    std::optional<Aggregate> aggregate;    // numerical, runtime
    std::optional<Threshold> min, max;
    SliceFilter where;
    std::optional<std::pair<int64_t, int64_t>> positions;   // [from, to)
    std::string perSlice;                  // slice key, or empty

    // statistical
    enum class Test { Exceedance, Mean };
    enum class Correction { None, Bonferroni };
    enum class Unit { Token, Sequence };
    Test test = Test::Exceedance;
    std::optional<Threshold> level;        // exceedance
    Threshold confidence{0.95, {}};
    int64_t minSamples = 0;
    Correction correction = Correction::None;
    Unit unit = Unit::Token;
    int64_t resamples = 2000;
    uint64_t seed = 0;

    // runtime
    std::string field;                     // runtime field with `aggregate`
    std::string requireEqual;              // header.kernels.train[x] == header.kernels.inf[x]
    // `require: {inf.batch_invariant: true}`: dotted path under header.kernels -> value
    std::vector<std::pair<std::string, nlohmann::json>> require;

    // observability
    std::vector<std::string> requireFields;
    std::optional<Threshold> minCoverage;
    std::optional<Threshold> maxNonfiniteFraction;
};

struct EscalationRule {
    bool isDefault = false;                // `- default: ACTION`
    std::vector<std::string> clauses;      // when.clause (any of)
    std::vector<Family> families;
    std::vector<Severity> severities;
    std::vector<Status> statuses;
    std::vector<std::string> stages;
    SliceFilter slice;
    Action action = Action::Warn;
    SourceSpan span;
    // SPEC 8, over steps (kcx replay only; elsewhere a rule matches as if they were absent):
    // persist — matches a clause at step s only if it matched it at ≥ failures of the last
    // `window` steps, s included; until — once matched, keeps matching that clause until a
    // step at which the clause has passed `passes` consecutive steps (that step included).
    struct Persist {
        int64_t failures = 1, window = 1;
    };
    std::optional<Persist> persist;
    std::optional<int64_t> untilPasses;
};

struct ContractBounds {
    double ppoClip = 0.2;
    std::optional<std::pair<double, double>> rewardRange;
    std::optional<int64_t> seqLen;         // horizon T; default: the run's max length
    std::optional<double> gradNorm;        // G of the bound chain's step 4 (extension)
    std::optional<double> advantageMax;    // A_max of step 4 (extension)
};

struct Contract {
    int format = 1;
    std::string name, version, description, owner;
    ContractBounds bounds;
    std::vector<Clause> clauses;           // in file order: numerical, statistical, runtime, observability
    std::vector<EscalationRule> escalation;
    std::vector<std::string> stages = {"offline_ci", "shadow", "canary", "full"};
    std::string path;                      // file it came from
    std::string text;                      // its bytes, for hashing and write-back

    const Clause* find(const std::string& id) const;
};

// Parses YAML (or JSON, which is YAML too; a text starting with '{' is read as JSON with
// nlohmann for exact JSON positions). Throws InputError naming `name`, line and column.
Contract parseContract(const std::string& text, const std::string& name);
Contract loadContract(const std::string& path);

}  // namespace kcx
