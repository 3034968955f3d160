// The four clause families of SPEC 4: keys, shapes and constraints.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/base/unicode_nfc.h"
#include "core/contract/contract_parse.h"
#include "core/metrics/derived_slices.h"
#include "core/metrics/metric_aliases.h"
#include "core/metrics/metrics.h"

namespace kcx::contract_parse {
namespace {

const Names kNumericalKeys = {"id",    "metric",    "aggregate", "max",         "min", "severity",
                              "where", "positions", "per_slice", "description"};
const Names kStatisticalKeys = {"id",          "metric",      "test",       "level",     "max",  "min",
                                "confidence",  "per_slice",   "where",      "positions", "unit", "min_samples",
                                "correction",  "resamples",   "seed",       "severity",  "description"};
const Names kRuntimeKeys = {"id", "field", "aggregate", "max", "min", "require_equal", "require", "severity",
                            "description"};
const Names kObservabilityKeys = {"id",        "require_fields", "min_coverage", "metric",   "max_nonfinite_fraction",
                                  "where",     "per_slice",      "positions",    "severity", "description"};

// Fields an observability clause can require (what the evaluator can measure coverage of).
const Names kObservableFields = {"id",         "tokens",       "logp_train", "logp_inf",     "topk_train",
                                 "topk_inf",   "logits",       "logits_train", "logits_inf", "text",
                                 "reward_train", "reward_inf", "runtime"};

const Names& keysOf(Family f) {
    switch (f) {
    case Family::Numerical: return kNumericalKeys;
    case Family::Statistical: return kStatisticalKeys;
    case Family::Runtime: return kRuntimeKeys;
    case Family::Observability: return kObservabilityKeys;
    }
    return kNumericalKeys;
}

// The first character of an id that does not show, or shows as something else: controls
// (C0, DEL, C1), zero-width and joiner characters, bidi embeddings, overrides and isolates,
// other format characters (soft hyphen, word joiner, invisible operators, BOM, tags),
// variation selectors, spaces other than U+0020, and space at either end. With its index
// (in characters) and its name "U+200B"; nullopt when every character shows. Text is UTF-8
// (checked before parsing).
std::optional<std::pair<size_t, std::string>> unseenCharacter(const std::string& s) {
    auto hidden = [](uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xA0 || cp == 0xAD || cp == 0x34F || cp == 0x61C ||
               cp == 0x115F || cp == 0x1160 || cp == 0x1680 || cp == 0x17B4 || cp == 0x17B5 ||
               (cp >= 0x180B && cp <= 0x180F) || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
               (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0x3164 || (cp >= 0xFE00 && cp <= 0xFE0F) ||
               cp == 0xFEFF || cp == 0xFFA0 || (cp >= 0xFFF0 && cp <= 0xFFFB) || (cp >= 0x1D173 && cp <= 0x1D17A) ||
               (cp >= 0xE0000 && cp <= 0xE0FFF);
    };
    size_t count = 0;
    for (size_t i = 0; i < s.size(); ++count) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        uint32_t cp = n == 1 ? c : c & (0xFF >> (n + 1));
        for (size_t k = 1; k < n && i + k < s.size(); ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        if (hidden(cp)) {
            char name[16];
            std::snprintf(name, sizeof name, "U+%04X", unsigned(cp));
            return std::make_pair(count, std::string(name) + (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)
                                                                  ? " (a control character)"
                                                                  : " (a character that does not show)"));
        }
        i += n;
    }
    if (s.front() == ' ')
        return std::make_pair(size_t(0), std::string("a space at the start"));
    if (s.back() == ' ')
        return std::make_pair(count - 1, std::string("a space at the end"));
    return std::nullopt;
}

class ClauseReader {
public:
    ClauseReader(const Doc& doc, const YAML::Node& node, Family family, Clause& c)
        : doc_(doc), node_(node), c_(c) {
        c.family = family;
        f_ = doc.mapping(node, std::string("a ") + familyName(family) + " clause", keysOf(family));
        const Entry* id = f_.get("id");
        if (!id)
            doc.fail(node, std::string("a ") + familyName(family) + " clause needs an 'id'");
        c.id = doc.string(*id);
        if (c.id.empty())
            doc.fail(*id, "'id' must not be empty");
        if (const auto bad = unseenCharacter(c.id))
            doc.fail(*id, "'id' holds " + bad->second + " at character " + std::to_string(bad->first + 1) +
                              ": clause ids must look like what they are, so two ids that read the same are the same "
                              "(docs/contracts.md)");
        if (const auto notNfc = nfcProblem(c.id))
            doc.fail(*id, "'id' is not in Unicode normal form C: " + *notNfc +
                              "; two ids that read the same must be the same bytes, so write it as NFC does "
                              "(docs/contracts.md)");
        c.span = doc.span(id->value);
        what_ = std::string(familyName(family)) + " clause '" + c.id + "'";
        if (const Entry* e = f_.get("severity"))
            c.severity = doc.name<Severity>(*e, "severity", parseSeverity, kSeverityNames);
        if (const Entry* e = f_.get("description"))
            c.description = doc.string(*e);
    }

    const Entry* get(std::string_view key) const { return f_.get(key); }

    const Entry& need(std::string_view key, const std::string& why = "") const {
        if (const Entry* e = f_.get(key))
            return *e;
        doc_.fail(node_, what_ + " needs '" + std::string(key) + "'" + why);
    }

    [[noreturn]] void fail(std::string_view key, const std::string& message) const { doc_.fail(*f_.get(key), message); }

    void forbid(std::string_view key, const std::string& why) const {
        if (f_.has(key))
            fail(key, "'" + std::string(key) + "' " + why);
    }

    void metric() {
        const Entry& e = need("metric");
        c_.metric = doc_.string(e);
        if (!findMetric(c_.metric))
            if (const MetricAlias* a = findMetricAlias(c_.metric)) {
                // A framework's name for one of KCX's formulas (docs/corrections.md).
                c_.metricAlias = c_.metric;
                c_.metric = a->metric;
            }
        const MetricInfo* info = findMetric(c_.metric);
        if (!info) {
            Names names;
            for (const auto& m : metricCatalog())
                names.push_back(m.name);
            const std::string n = nearest(c_.metric, names);
            doc_.fail(e, "unknown metric '" + c_.metric + "'" +
                             (n.empty() ? " (see docs/metrics.md for the catalog)" : " — did you mean '" + n + "'?"));
        }
        if (f_.has("positions") && info->level != MetricLevel::Token)
            fail("positions", "'positions' applies to per-token metrics; '" + c_.metric + "' is per " +
                                  levelName(info->level));
        if (info->level == MetricLevel::Run)
            for (const char* k : {"where", "per_slice"})
                if (f_.has(k))
                    fail(k, "'" + std::string(k) + "' does not apply to '" + c_.metric + "', a per-run metric");
    }

    // A derived slice key (docs/slices.md) must exist, and a per-token one needs a per-token metric.
    void derivedKey(const YAML::Node& at, const std::string& key) {
        if (auto err = checkDerivedKey(key))
            doc_.fail(at, *err);
        const MetricInfo* info = c_.metric.empty() ? nullptr : findMetric(c_.metric);
        if (info && info->level != MetricLevel::Token && derivedLevel(key) == DerivedLevel::Token)
            doc_.fail(at, "'" + key + "' is a per-token slice key; '" + c_.metric + "' is per " + levelName(info->level));
    }

    void aggregate() {
        const Entry& e = need("aggregate");
        std::string text;
        if (e.value.IsScalar()) {
            text = e.value.Scalar();
        } else if (e.value.IsMap() && e.value.size() == 1) {
            const auto kv = *e.value.begin();
            const YAML::Node key = kv.first, arg = kv.second;
            if (!key.IsScalar())
                doc_.fail(key, "an aggregate is a name like p99 or fraction_above, found " +
                                         Doc::describe(key));
            text = key.Scalar() + ": ";
            if (arg.IsScalar()) {
                text += arg.Scalar();
            } else if (arg.IsSequence()) {
                text += "[";
                bool first = true;
                for (const auto& x : arg) {
                    if (!x.IsScalar())
                        doc_.fail(x, "'" + key.Scalar() + "' needs numbers, found " + Doc::describe(x));
                    text += (first ? "" : ", ") + x.Scalar();
                    first = false;
                }
                text += "]";
            } else {
                doc_.fail(arg.IsNull() ? key : arg,
                          "'" + key.Scalar() + "' needs a number or [a, b], found " + Doc::describe(arg));
            }
        } else {
            doc_.fail(e, "'aggregate' must be a name (max, min, mean, sum, count, pNN) or a one-key mapping like "
                         "{fraction_above: 0.2}, found " + Doc::describe(e.value));
        }
        std::string error;
        c_.aggregate = parseAggregate(text, &error);
        if (!c_.aggregate)
            doc_.fail(e, error);
    }

    // max and/or min; `need` = at least one of them.
    void bounds(bool needOne, const std::string& why) {
        if (const Entry* e = f_.get("max"))
            c_.max = doc_.threshold(*e);
        if (const Entry* e = f_.get("min"))
            c_.min = doc_.threshold(*e);
        if (needOne && !c_.max && !c_.min)
            doc_.fail(node_, what_ + " needs 'max' and/or 'min'" + why);
        if (c_.min && c_.max && c_.min->value > c_.max->value)
            fail("min", "'min' (" + doc_.string(*f_.get("min")) + ") is above 'max' (" + doc_.string(*f_.get("max")) +
                            ")");
    }

    void scope() {
        if (const Entry* e = f_.get("where")) {
            c_.where = doc_.filter(*e);
            for (const auto& k : doc_.mapping(*e, {}).list)
                if (isDerivedKey(k.key)) {
                    derivedKey(k.keyNode, k.key);
                    if (!c_.requireFields.empty())
                        doc_.fail(k.keyNode, "derived slice keys do not apply to a 'require_fields' clause (its coverage "
                                     "counts whole sequences); use a labeled key");
                    const auto items = doc_.stringNodes(k, true);
                    for (const auto& n : items)
                        if (auto err = checkDerivedValue(k.key, n.Scalar()))
                            doc_.fail(n, *err);
                }
        }
        if (const Entry* e = f_.get("per_slice")) {
            c_.perSlice = doc_.string(*e);
            if (c_.perSlice.empty())
                doc_.fail(*e, "'per_slice' must name a slice key");
            if (isDerivedKey(c_.perSlice))
                derivedKey(e->value, c_.perSlice);
        }
        if (const Entry* e = f_.get("positions")) {
            const auto items = doc_.list(*e);
            if (items.size() != 2)
                doc_.fail(*e, "'positions' must be [from, to), two whole numbers with 0 ≤ from < to");
            const int64_t from = doc_.integer(Entry{"positions", e->keyNode, items[0]}, 0);
            const int64_t to = doc_.integer(Entry{"positions", e->keyNode, items[1]}, 0);
            if (from >= to)
                doc_.fail(*e, "'positions' must be [from, to) with from < to, found [" + std::to_string(from) + ", " +
                                  std::to_string(to) + "]");
            c_.positions = std::make_pair(from, to);
        }
    }

    void unitInterval(const char* key, std::optional<Threshold>& out, bool open) {
        const Entry* e = f_.get(key);
        if (!e)
            return;
        out = doc_.threshold(*e);
        const double v = out->value;
        if (open ? !(v > 0 && v < 1) : !(v >= 0 && v <= 1))
            doc_.fail(*e, "'" + std::string(key) + "' must lie in " + (open ? "(0, 1)" : "[0, 1]") + ", found " +
                              doc_.string(*e));
    }

    const std::string& what() const { return what_; }
    const Doc& doc() const { return doc_; }
    Clause& clause() { return c_; }

private:
    const Doc& doc_;
    const YAML::Node& node_;
    Clause& c_;
    Fields f_;
    std::string what_;
};

void numerical(ClauseReader& r) {
    r.metric();
    r.aggregate();
    r.bounds(true, "");
    r.scope();
}

void statistical(ClauseReader& r) {
    Clause& c = r.clause();
    const Doc& doc = r.doc();
    r.metric();
    if (const Entry* e = r.get("test")) {
        const std::string t = doc.string(*e);
        if (t == "exceedance")
            c.test = Clause::Test::Exceedance;
        else if (t == "mean")
            c.test = Clause::Test::Mean;
        else
            doc.fail(*e, "unknown test '" + t + "'" + suggestion(t, {"exceedance", "mean"}));
    }
    if (c.test == Clause::Test::Exceedance) {
        r.need("level", " (test: exceedance counts the values above 'level')");
        r.need("max", " (the largest share of values above 'level')");
        r.forbid("min", "does not apply to test: exceedance (use test: mean for a lower bound)");
        c.level = doc.threshold(*r.get("level"));
        r.bounds(true, "");
        if (c.max->value < 0 || c.max->value > 1)
            r.fail("max", "'max' of an exceedance test is a share of values, between 0 and 1; found " +
                              doc.string(*r.get("max")));
    } else {
        r.forbid("level", "applies to test: exceedance only");
        r.bounds(true, " (test: mean needs the interval the mean must lie in)");
    }
    std::optional<Threshold> conf;
    r.unitInterval("confidence", conf, true);
    if (conf)
        c.confidence = *conf;
    r.scope();
    if (const Entry* e = r.get("min_samples"))
        c.minSamples = doc.integer(*e, 0);
    if (const Entry* e = r.get("correction")) {
        const std::string s = doc.string(*e);
        if (s == "none")
            c.correction = Clause::Correction::None;
        else if (s == "bonferroni")
            c.correction = Clause::Correction::Bonferroni;
        else
            doc.fail(*e, "unknown correction '" + s + "'" + suggestion(s, {"none", "bonferroni"}));
    }
    if (const Entry* e = r.get("unit")) {
        const std::string s = doc.string(*e);
        if (s == "token")
            c.unit = Clause::Unit::Token;
        else if (s == "sequence")
            c.unit = Clause::Unit::Sequence;
        else
            doc.fail(*e, "unknown unit '" + s + "'" + suggestion(s, {"token", "sequence"}));
    }
    if (const Entry* e = r.get("resamples"))
        c.resamples = doc.integer(*e, 1, kMaxResamples);
    if (const Entry* e = r.get("seed"))
        c.seed = doc.unsignedInteger(*e);
}

void runtime(ClauseReader& r) {
    Clause& c = r.clause();
    const Doc& doc = r.doc();
    const char* shapes[] = {"field", "require_equal", "require"};
    std::vector<std::string> given;
    for (const char* s : shapes)
        if (r.get(s))
            given.push_back(s);
    if (given.empty())
        r.doc().fail(r.get("id")->keyNode,
                     r.what() + " needs 'field' with 'aggregate' and 'max'/'min', or 'require_equal: FIELD', or "
                                "'require: {path: value}'");
    if (given.size() > 1)
        doc.fail(r.get(given[1])->keyNode, r.what() + " has both '" + given[0] + "' and '" + given[1] +
                             "': a runtime clause checks one of field, require_equal, require");
    if (given[0] == "field") {
        c.field = doc.string(*r.get("field"));
        r.need("aggregate", " (how to summarize 'field' over the sequences, e.g. max)");
        r.aggregate();
        r.bounds(true, "");
        return;
    }
    for (const char* k : {"aggregate", "max", "min"})
        r.forbid(k, "applies only with 'field'");
    if (given[0] == "require_equal") {
        c.requireEqual = doc.string(*r.get("require_equal"));
        if (c.requireEqual.empty())
            r.fail("require_equal", "'require_equal' must name a kernel key, e.g. weights_sha256");
        return;
    }
    const Entry& req = *r.get("require");
    const Fields f = doc.mapping(req, {});
    if (f.list.empty())
        doc.fail(req, "'require' must map at least one header path to a value, e.g. {inf.batch_invariant: true}");
    for (const auto& e : f.list)
        c.require.emplace_back(e.key, doc.scalarValue(e));
}

void observability(ClauseReader& r) {
    Clause& c = r.clause();
    const Doc& doc = r.doc();
    if (r.get("require_fields")) {
        for (const char* k : {"metric", "max_nonfinite_fraction", "per_slice", "positions"})
            r.forbid(k, "does not apply with 'require_fields' (an observability clause checks either "
                        "require_fields or a metric)");
        const Entry& e = *r.get("require_fields");
        const auto items = doc.stringNodes(e, false);
        c.requireFields = doc.strings(e, false);
        for (size_t i = 0; i < c.requireFields.size(); ++i) {
            const std::string& f = c.requireFields[i];
            const bool known = std::find(kObservableFields.begin(), kObservableFields.end(), f) !=
                                   kObservableFields.end() ||
                               (f.rfind("slices.", 0) == 0 && f.size() > 7) ||
                               (f.rfind("runtime.", 0) == 0 && f.size() > 8);
            if (!known) {
                std::string n = nearest(f, kObservableFields);
                const std::string more = n.empty() ? " (expected one of: " + joinNames(kObservableFields) +
                                                         ", runtime.NAME, slices.KEY)"
                                                   : " — did you mean '" + n + "'?";
                doc.fail(items[i], "unknown field '" + f + "'" + more);
            }
        }
        r.unitInterval("min_coverage", c.minCoverage, false);
        r.scope();
        return;
    }
    if (r.get("metric")) {
        r.forbid("min_coverage", "applies only with 'require_fields'");
        r.metric();
        r.unitInterval("max_nonfinite_fraction", c.maxNonfiniteFraction, false);
        r.scope();
        return;
    }
    doc.fail(r.get("id")->keyNode, r.what() + " needs 'require_fields: [...]' (with 'min_coverage'), or 'metric' "
                                              "(with 'max_nonfinite_fraction')");
}

}  // namespace

void parseClause(const Doc& doc, const YAML::Node& node, Family family, Clause& out) {
    ClauseReader r(doc, node, family, out);
    switch (family) {
    case Family::Numerical: numerical(r); break;
    case Family::Statistical: statistical(r); break;
    case Family::Runtime: runtime(r); break;
    case Family::Observability: observability(r); break;
    }
}

}  // namespace kcx::contract_parse
