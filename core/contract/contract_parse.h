// Internal to the contract parser (contract.cpp, contract_parse_*.cpp): a checked walk
// over yaml-cpp nodes that turns every mistake into an InputError with line and column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/contract/contract.h"

namespace kcx::contract_parse {

using Names = std::vector<std::string_view>;

// The nearest of `known` to `word`, or "" when none is close: candidates are within optimal
// string alignment distance 3 (and less than the shorter word's length), or share the
// shorter word as a prefix ('maximum' -> 'max', 'bonf' -> 'bonferroni'), which rank first.
std::string nearest(std::string_view word, const Names& known);
// "a, b, c"
std::string joinNames(const Names& names);
// " — did you mean 'x'?" or " (expected one of: a, b, c)"
std::string suggestion(std::string_view word, const Names& known);

// One `key: value` pair of a mapping, in file order.
struct Entry {
    std::string key;
    YAML::Node keyNode, value;
};

struct Fields {
    std::vector<Entry> list;
    const Entry* get(std::string_view key) const;
    bool has(std::string_view key) const { return get(key) != nullptr; }
};

// The caps on the counts a contract sets (docs/contracts.md, "Limits").
inline constexpr int64_t kMaxResamples = 1'000'000;             // bootstrap draws
inline constexpr int64_t kMaxContractCount = 1'000'000'000'000;  // min_samples, positions, seq_len

class Doc {
public:
    Doc(const std::string& text, const std::string& name);

    [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const;
    [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const;
    // At the value, or at the key when the value is empty.
    [[noreturn]] void fail(const Entry& entry, const std::string& message) const;
    [[noreturn]] void failAtStart(const std::string& message) const;

    SourceSpan span(const YAML::Node& scalar) const;
    SourceSpan span(const YAML::Mark& mark) const;

    // A mapping whose keys are scalars, unique, and (unless `known` is empty) among `known`.
    Fields mapping(const YAML::Node& node, const std::string& what, const Names& known) const;
    Fields mapping(const Entry& entry, const Names& known) const;
    // The elements of a list.
    std::vector<YAML::Node> list(const Entry& entry) const;

    std::string string(const Entry& entry) const;                     // any scalar, as written
    double number(const Entry& entry) const;                          // finite
    Threshold threshold(const Entry& entry) const;
    // A whole number in [least, most]. `most` is a cap on what a contract may ask for
    // (docs/contracts.md, "Limits"); above it is an error at the value, not an allocation
    // that fails later with no place.
    int64_t integer(const Entry& entry, int64_t least, int64_t most = kMaxContractCount) const;
    uint64_t unsignedInteger(const Entry& entry) const;
    // The string items of a list (or of a lone scalar when scalarOk), with their nodes.
    std::vector<YAML::Node> stringNodes(const Entry& entry, bool scalarOk) const;
    std::vector<std::string> strings(const Entry& entry, bool scalarOk) const;
    SliceFilter filter(const Entry& entry) const;
    nlohmann::json scalarValue(const Entry& entry) const;             // null, bool, number or string

    template <class E, class Parse>
    E name(const Entry& entry, const char* what, Parse parse, const Names& valid) const {
        const std::string s = string(entry);
        if (const auto v = parse(s))
            return *v;
        fail(entry, "unknown " + std::string(what) + " '" + s + "'" + suggestion(s, valid));
    }
    template <class E, class Parse>
    std::vector<E> names(const Entry& entry, const char* what, Parse parse, const Names& valid) const {
        std::vector<E> out;
        for (const auto& n : stringNodes(entry, true)) {
            const auto v = parse(n.Scalar());
            if (!v)
                fail(n, "unknown " + std::string(what) + " '" + n.Scalar() + "'" + suggestion(n.Scalar(), valid));
            out.push_back(*v);
        }
        return out;
    }

    // "'x' must be a number, found 'abc'" — the found part.
    static std::string describe(const YAML::Node& node);

    // What yaml-cpp reads: the text, or a rewrite of it (JSON surrogate pairs, which yaml-cpp
    // cannot decode, as \UXXXXXXXX) with, for each edit, (its end in the rewrite, bytes
    // removed up to there). Marks are mapped back to the original text.
    void setRewrite(std::string yaml, std::vector<std::pair<size_t, size_t>> shifts);
    const std::string& yamlText() const { return shifts_.empty() ? text_ : yaml_; }
    YAML::Mark original(const YAML::Mark& mark) const;

    const std::string& text() const { return text_; }
    const std::string& file() const { return name_; }

private:
    const std::string& text_;
    const std::string& name_;
    size_t bom_ = 0;   // yaml-cpp does not count a UTF-8 byte order mark in positions
    std::string yaml_;
    std::vector<std::pair<size_t, size_t>> shifts_;
    double parseNumber(const Entry& entry, const char* expected) const;
};

extern const Names kSeverityNames, kActionNames, kStatusNames, kFamilyNames;

// Parses one clause of `family` (a mapping) into `out`; checks its keys and shape.
void parseClause(const Doc& doc, const YAML::Node& node, Family family, Clause& out);

}  // namespace kcx::contract_parse
