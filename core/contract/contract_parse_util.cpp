// The checked walk over yaml-cpp nodes used by the contract parser.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/base/errors.h"
#include "core/contract/contract_parse.h"

namespace kcx::contract_parse {

const Names kSeverityNames = {"info", "warn", "error", "critical"};
const Names kActionNames = {"pass", "warn", "hold", "shadow_only", "route_to_reference", "block_promotion",
                            "rollback"};
const Names kStatusNames = {"pass", "fail", "inconclusive", "error"};
const Names kFamilyNames = {"numerical", "statistical", "runtime", "observability"};

namespace {

// Optimal string alignment distance (Levenshtein with adjacent transpositions).
size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

bool isPlain(const YAML::Node& n) { return n.Tag() == "?"; }

// 1000000 -> "1,000,000"
std::string groupedDigits(int64_t v) {
    std::string s = std::to_string(v);
    for (int i = int(s.size()) - 3; i > (s[0] == '-' ? 1 : 0); i -= 3)
        s.insert(size_t(i), 1, ',');
    return s;
}

}  // namespace

std::string nearest(std::string_view word, const Names& known) {
    if (word.size() > 200)
        return "";
    // A prefix (an abbreviation, or a word that goes on: 'maximum' for 'max') ranks first.
    std::string best;
    std::pair<bool, size_t> bestRank{true, SIZE_MAX};
    for (const auto k : known) {
        const size_t d = distance(word, k);
        const size_t shorter = std::min(word.size(), k.size());
        const bool prefix = shorter >= 3 && (word.substr(0, shorter) == k.substr(0, shorter));
        const std::pair<bool, size_t> rank{!prefix, d};
        if (((d <= 3 && d < shorter) || prefix) && rank < bestRank) {
            bestRank = rank;
            best = std::string(k);
        }
    }
    return best;
}

std::string joinNames(const Names& names) {
    std::string s;
    for (const auto n : names)
        s.append(s.empty() ? "" : ", ").append(n);
    return s;
}

std::string suggestion(std::string_view word, const Names& known) {
    const std::string n = nearest(word, known);
    if (!n.empty())
        return " — did you mean '" + n + "'?";
    return " (expected one of: " + joinNames(known) + ")";
}

const Entry* Fields::get(std::string_view key) const {
    for (const auto& e : list)
        if (e.key == key)
            return &e;
    return nullptr;
}

Doc::Doc(const std::string& text, const std::string& name) : text_(text), name_(name) {
    if (text.rfind("\xEF\xBB\xBF", 0) == 0)
        bom_ = 3;
}

void Doc::setRewrite(std::string yaml, std::vector<std::pair<size_t, size_t>> shifts) {
    yaml_ = std::move(yaml);
    shifts_ = std::move(shifts);
}

YAML::Mark Doc::original(const YAML::Mark& mark) const {
    if (shifts_.empty() || mark.is_null() || mark.pos < 0)
        return mark;
    size_t removed = 0;
    for (const auto& [at, total] : shifts_)
        if (size_t(mark.pos) >= at)
            removed = total;
    YAML::Mark m = mark;
    m.pos = int(size_t(mark.pos) + removed);
    const size_t pos = std::min(size_t(m.pos) + bom_, text_.size());
    const size_t nl = pos == 0 ? std::string::npos : text_.rfind('\n', pos - 1);
    m.column = int(pos - (nl == std::string::npos ? bom_ : nl + 1));
    return m;
}

void Doc::fail(const YAML::Mark& raw, const std::string& message) const {
    if (raw.is_null())
        throw InputError::atText(name_, 1, 1, message);
    const YAML::Mark mark = original(raw);
    throw InputError::atText(name_, mark.line + 1, mark.column + 1, message);
}

void Doc::fail(const YAML::Node& node, const std::string& message) const { fail(node.Mark(), message); }

void Doc::fail(const Entry& entry, const std::string& message) const {
    if (!entry.value || entry.value.IsNull() || entry.value.Mark().is_null())
        fail(entry.keyNode, message);
    fail(entry.value, message);
}

void Doc::failAtStart(const std::string& message) const { throw InputError::atText(name_, 1, 1, message); }

std::string Doc::describe(const YAML::Node& node) {
    if (!node || node.IsNull())
        return "nothing";
    if (node.IsSequence())
        return "a list";
    if (node.IsMap())
        return "a mapping";
    std::string s = node.Scalar();
    if (s.size() > 60)
        s = s.substr(0, 57) + "...";
    for (char& ch : s)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
            ch = '?';
    return "'" + s + "'";
}

SourceSpan Doc::span(const YAML::Mark& raw) const {
    SourceSpan s;
    if (raw.is_null())
        return s;
    const YAML::Mark mark = original(raw);
    s.line = mark.line + 1;
    s.column = mark.column + 1;
    s.offset = size_t(mark.pos) + bom_;
    return s;
}

SourceSpan Doc::span(const YAML::Node& scalar) const {
    SourceSpan s = span(scalar.Mark());
    if (!s.known() || !scalar.IsScalar() || s.offset >= text_.size())
        return s;
    const std::string& t = text_;
    size_t p = s.offset;
    // Skip an anchor (&a) or a tag (!!float) written before the value.
    while (p < t.size() && (t[p] == '&' || t[p] == '!')) {
        while (p < t.size() && !std::isspace(static_cast<unsigned char>(t[p])))
            ++p;
        while (p < t.size() && (t[p] == ' ' || t[p] == '\t'))
            ++p;
    }
    if (p >= t.size())
        return s;
    size_t end = p;
    if (t[p] == '"') {
        for (end = p + 1; end < t.size() && t[end] != '"'; ++end)
            if (t[end] == '\\')
                ++end;
        end = std::min(end + 1, t.size());
    } else if (t[p] == '\'') {
        for (end = p + 1; end < t.size(); ++end)
            if (t[end] == '\'') {
                if (end + 1 < t.size() && t[end + 1] == '\'')
                    ++end;
                else
                    break;
            }
        end = std::min(end + 1, t.size());
    } else if (t[p] == '|' || t[p] == '>') {
        return SourceSpan{};   // a block scalar: no single place to write a number back
    } else if (t.compare(p, scalar.Scalar().size(), scalar.Scalar()) == 0) {
        end = p + scalar.Scalar().size();
    } else {
        while (end < t.size() && t[end] != '\n' && t[end] != '\r' && t[end] != '#')
            ++end;
        while (end > p && (t[end - 1] == ' ' || t[end - 1] == '\t'))
            --end;
    }
    s.column += int(p - s.offset);
    s.offset = p;
    s.length = end - p;
    return s;
}

Fields Doc::mapping(const YAML::Node& node, const std::string& what, const Names& known) const {
    if (!node.IsMap())
        fail(node, what + " must be a mapping (key: value), found " + describe(node));
    Fields f;
    for (const auto& kv : node) {
        const YAML::Node key = kv.first;
        if (!key.IsScalar())
            fail(key, "a key in " + what + " must be a name, found " + describe(key));
        Entry e{key.Scalar(), key, kv.second};
        if (const Entry* first = f.get(e.key)) {
            const SourceSpan m = span(first->keyNode.Mark());
            fail(key, "duplicate key '" + e.key + "' in " + what + " (first at line " + std::to_string(m.line) +
                          ", column " + std::to_string(m.column) + ")");
        }
        if (!known.empty() && std::find(known.begin(), known.end(), std::string_view(e.key)) == known.end()) {
            const std::string n = nearest(e.key, known);
            if (!n.empty())
                fail(key, "unknown key '" + e.key + "' — did you mean '" + n + "'?");
            fail(key, "unknown key '" + e.key + "' in " + what + " (expected one of: " + joinNames(known) + ")");
        }
        f.list.push_back(std::move(e));
    }
    return f;
}

Fields Doc::mapping(const Entry& entry, const Names& known) const {
    if (!entry.value.IsMap())
        fail(entry, "'" + entry.key + "' must be a mapping (key: value), found " + describe(entry.value));
    return mapping(entry.value, "'" + entry.key + "'", known);
}

std::vector<YAML::Node> Doc::list(const Entry& entry) const {
    if (!entry.value.IsSequence())
        fail(entry, "'" + entry.key + "' must be a list, found " + describe(entry.value));
    std::vector<YAML::Node> out;
    for (const auto& n : entry.value)
        out.push_back(n);
    return out;
}

std::string Doc::string(const Entry& entry) const {
    if (!entry.value.IsScalar())
        fail(entry, "'" + entry.key + "' must be a string, found " + describe(entry.value));
    return entry.value.Scalar();
}

double Doc::parseNumber(const Entry& entry, const char* expected) const {
    if (!entry.value.IsScalar())
        fail(entry, "'" + entry.key + "' must be " + expected + ", found " + describe(entry.value));
    std::string_view s = entry.value.Scalar();
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    if (s.size() > 1 && s.front() == '+')
        s.remove_prefix(1);
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
        fail(entry, "'" + entry.key + "' must be " + expected + ", found " + describe(entry.value));
    return v;
}

double Doc::number(const Entry& entry) const { return parseNumber(entry, "a number"); }

Threshold Doc::threshold(const Entry& entry) const {
    Threshold t;
    t.value = number(entry);
    t.span = span(entry.value);
    return t;
}

int64_t Doc::integer(const Entry& entry, int64_t least, int64_t most) const {
    const char* expected = least == 0 ? "a whole number ≥ 0" : least == 1 ? "a whole number ≥ 1" : "a whole number";
    const double v = parseNumber(entry, expected);
    if (v > double(most))   // 1e13 included: the cap is the clearer message
        fail(entry, "'" + entry.key + "' must be at most " + groupedDigits(most) + " (the cap on this count), found " +
                        describe(entry.value));
    std::string_view s = entry.value.Scalar();
    if (!s.empty() && s.front() == '+')
        s.remove_prefix(1);
    int64_t i = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), i);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < double(least))
        fail(entry, "'" + entry.key + "' must be " + expected + ", found " + describe(entry.value));
    return i;
}

uint64_t Doc::unsignedInteger(const Entry& entry) const {
    std::string_view s = entry.value.IsScalar() ? std::string_view(entry.value.Scalar()) : std::string_view();
    if (!s.empty() && s.front() == '+')
        s.remove_prefix(1);
    uint64_t u = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), u);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
        fail(entry, "'" + entry.key + "' must be a whole number ≥ 0, found " + describe(entry.value));
    return u;
}

std::vector<YAML::Node> Doc::stringNodes(const Entry& entry, bool scalarOk) const {
    if (scalarOk && entry.value.IsScalar())
        return {entry.value};
    if (!entry.value.IsSequence())
        fail(entry, "'" + entry.key + "' must be " + (scalarOk ? "a string or a list of strings" : "a list of strings") +
                        ", found " + describe(entry.value));
    std::vector<YAML::Node> out;
    for (const auto& n : entry.value) {
        if (!n.IsScalar())
            fail(n, "'" + entry.key + "' must list strings, found " + describe(n));
        out.push_back(n);
    }
    if (out.empty())
        fail(entry, "'" + entry.key + "' must not be an empty list");
    return out;
}

std::vector<std::string> Doc::strings(const Entry& entry, bool scalarOk) const {
    std::vector<std::string> out;
    for (const auto& n : stringNodes(entry, scalarOk))
        out.push_back(n.Scalar());
    return out;
}

SliceFilter Doc::filter(const Entry& entry) const {
    SliceFilter f;
    for (const auto& e : mapping(entry, {}).list)
        f.anyOf[e.key] = strings(e, true);
    return f;
}

nlohmann::json Doc::scalarValue(const Entry& entry) const {
    const YAML::Node& v = entry.value;
    if (!v || v.IsNull())
        return nullptr;
    if (!v.IsScalar())
        fail(entry, "'" + entry.key + "' must be a single value (string, number, true/false or null), found " +
                        describe(v));
    const std::string& s = v.Scalar();
    if (!isPlain(v))
        return s;
    if (s == "true" || s == "True" || s == "TRUE")
        return true;
    if (s == "false" || s == "False" || s == "FALSE")
        return false;
    int64_t i = 0;
    std::string_view sv = s;
    if (sv.size() > 1 && sv.front() == '+')
        sv.remove_prefix(1);
    if (auto r = std::from_chars(sv.data(), sv.data() + sv.size(), i); r.ec == std::errc() && r.ptr == sv.data() + sv.size())
        return i;
    double d = 0;
    if (auto r = std::from_chars(sv.data(), sv.data() + sv.size(), d);
        r.ec == std::errc() && r.ptr == sv.data() + sv.size() && std::isfinite(d))
        return d;
    return s;
}

}  // namespace kcx::contract_parse
