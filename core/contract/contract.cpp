// The contract language of SPEC 4: YAML (or JSON) text -> the typed Contract.
//
// yaml-cpp builds the node tree (with 0-based marks); contract_parse.h walks it with a check
// at every step, so that every mistake is an InputError naming the file, line and column.
// The clause families are read in contract_parse_clauses.cpp.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "core/contract/contract.h"
#include "core/base/errors.h"
#include "core/base/safe_open.h"
#include "core/base/json_depth.h"
#include "core/contract/contract_parse.h"
#include "core/formats/json_scan.h"

namespace kcx {

using namespace contract_parse;

namespace {

constexpr size_t kMaxVisits = 1'000'000;   // YAML aliases share nodes: count visits, not nodes
constexpr int kMaxDepth = 64;              // a contract needs about 5 levels
constexpr size_t kMaxBytes = size_t(16) << 20;

const Names kTopKeys = {"kcx_contract", "name",        "version",       "description", "owner",      "bounds",
                        "numerical",    "statistical", "runtime",       "observability", "escalation", "stages"};
const Names kBoundsKeys = {"ppo_clip", "reward_range", "seq_len", "grad_norm", "advantage_max"};
const Names kRuleKeys = {"when", "action", "default", "persist", "until"};
const Names kPersistKeys = {"failures", "window"};
const Names kUntilKeys = {"passes"};
const Names kWhenKeys = {"clause", "family", "severity", "status", "slice", "stage"};

// Stops documents that expand (through aliases) to a huge or cyclic tree before anything
// walks them for real.
// Errors name the top-level key and stand at its value.
void guard(const Doc& doc, const YAML::Node& n, int depth, size_t& visits, const Entry& top) {
    if (++visits > kMaxVisits)
        doc.fail(top, "'" + top.key + "' expands to more than " + std::to_string(kMaxVisits) +
                          " values (nested YAML aliases?); a contract is far smaller");
    if (depth > kMaxDepth)
        doc.fail(n, "'" + top.key + "' nests deeper than " + std::to_string(kMaxDepth) +
                        " levels (a contract needs about 5; a recursive YAML alias?)");
    if (n.IsMap()) {
        for (const auto& kv : n) {
            guard(doc, kv.first, depth + 1, visits, top);
            guard(doc, kv.second, depth + 1, visits, top);
        }
    } else if (n.IsSequence()) {
        for (const auto& x : n)
            guard(doc, x, depth + 1, visits, top);
    }
}

// The exact JSON syntax error, from nlohmann (a SAX pass: no tree is built).
struct SyntaxCheck : nlohmann::json_sax<nlohmann::json> {
    size_t position = 0;
    std::string message;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& ex) override {
        position = pos;
        message = ex.what();
        return false;
    }
};

void checkJson(const std::string& text, const std::string& name) {
    SyntaxCheck sax;
    if (nlohmann::json::sax_parse(text, &sax))
        return;
    // nlohmann counts the bytes read: the offending one is the last.
    const size_t at = std::min(sax.position > 0 ? sax.position - 1 : 0, text.size());
    int64_t line = 1, column = 1;
    for (size_t i = 0; i < at; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    std::string what = sax.message;
    if (const size_t col = what.find("column "); col != std::string::npos)
        if (const size_t colon = what.find(": ", col); colon != std::string::npos)
            what = what.substr(colon + 2);
    throw InputError::atText(name, line, column, "invalid JSON: " + what);
}

// yaml-cpp rejects the \uD83D\uDE00 surrogate pairs JSON writers emit for characters beyond
// U+FFFF: rewrite each (in a JSON that nlohmann accepted) as YAML's \U0001F600.
void rewriteSurrogates(Doc& doc) {
    const std::string& t = doc.text();
    auto hex4 = [&](size_t at, unsigned& out) {
        if (at + 4 > t.size())
            return false;
        out = 0;
        for (size_t i = at; i < at + 4; ++i) {
            const int c = std::tolower(static_cast<unsigned char>(t[i]));
            if (!std::isxdigit(c))
                return false;
            out = out * 16 + unsigned(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        return true;
    };
    std::string out;
    std::vector<std::pair<size_t, size_t>> shifts;
    size_t removed = 0, copied = 0;
    bool inString = false;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '"') {
            inString = !inString;
        } else if (inString && t[i] == '\\') {
            unsigned hi = 0, lo = 0;
            if (i + 12 <= t.size() && t[i + 1] == 'u' && hex4(i + 2, hi) && hi >= 0xD800 && hi < 0xDC00 &&
                t[i + 6] == '\\' && t[i + 7] == 'u' && hex4(i + 8, lo) && lo >= 0xDC00 && lo < 0xE000) {
                char buf[16];
                std::snprintf(buf, sizeof buf, "\\U%08X", 0x10000u + ((hi - 0xD800) << 10) + (lo - 0xDC00));
                out.append(t, copied, i - copied).append(buf);
                removed += 12 - 10;
                copied = i + 12;
                shifts.emplace_back(out.size(), removed);
                i += 11;
            } else {
                ++i;   // skip the escaped character
            }
        }
    }
    if (shifts.empty())
        return;
    out.append(t, copied, std::string::npos);
    doc.setRewrite(std::move(out), std::move(shifts));
}

// Counts the parser's events and stops past a limit. yaml-cpp 0.7 can emit events without
// end on some malformed flow collections (fuzz_contract: a 210-byte text ran out of
// memory building nodes), so the text is first parsed with this handler, which builds
// nothing.
class EventBudget : public YAML::EventHandler {
public:
    void OnDocumentStart(const YAML::Mark& m) override { bump(m); }
    void OnDocumentEnd() override { bump(last_); }
    void OnNull(const YAML::Mark& m, YAML::anchor_t) override { bump(m); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { bump(m); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { bump(m); }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { bump(m); }
    void OnSequenceEnd() override { bump(last_); }
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { bump(m); }
    void OnMapEnd() override { bump(last_); }

private:
    static constexpr size_t kMaxEvents = 1'000'000;   // a contract has a few thousand
    void bump(const YAML::Mark& m) {
        last_ = m;
        if (++events_ > kMaxEvents)
            throw YAML::ParserException(m, "the YAML parser did not come to an end (over a million values); "
                                           "the text is malformed near here");
    }
    size_t events_ = 0;
    YAML::Mark last_;
};

std::vector<YAML::Node> load(const Doc& doc) {
    try {
        {
            std::istringstream in(doc.yamlText());
            YAML::Parser parser(in);
            EventBudget budget;
            while (parser.HandleNextDocument(budget)) {
            }
        }
        return YAML::LoadAll(doc.yamlText());
    } catch (const YAML::DeepRecursion& e) {   // yaml-cpp says "bad file"
        // yaml-cpp's mark is where it gave up (often the end); name the first bracket past
        // the limit instead when flow brackets are what nests.
        const std::string& t = doc.yamlText();
        YAML::Mark at = e.mark;
        if (const size_t deep = jsonDepthExceeded(t, kMaxDepth); deep != std::string::npos) {
            at.pos = int(deep - (t.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0));   // marks skip a BOM
            at.line = int(std::count(t.begin(), t.begin() + std::ptrdiff_t(deep), '\n'));
            const size_t nl = deep == 0 ? std::string::npos : t.rfind('\n', deep - 1);
            at.column = int(deep - (nl == std::string::npos ? 0 : nl + 1));
        }
        doc.fail(at, "invalid YAML: nested deeper than " + std::to_string(kMaxDepth) +
                         " levels (a contract needs about 5)");
    } catch (const YAML::ParserException& e) {
        doc.fail(e.mark, "invalid YAML: " + e.msg);
    }
}

void parseBounds(const Doc& doc, const Entry& entry, ContractBounds& b) {
    const Fields f = doc.mapping(entry, kBoundsKeys);
    if (const Entry* e = f.get("ppo_clip")) {
        b.ppoClip = doc.number(*e);
        if (!(b.ppoClip > 0))
            doc.fail(*e, "'ppo_clip' must be above 0, found " + doc.string(*e));
    }
    if (const Entry* e = f.get("reward_range")) {
        const auto items = doc.list(*e);
        if (items.size() != 2)
            doc.fail(*e, "'reward_range' must be [min, max], two numbers with min < max");
        const double lo = doc.number(Entry{"reward_range", e->keyNode, items[0]});
        const double hi = doc.number(Entry{"reward_range", e->keyNode, items[1]});
        if (!(lo < hi))
            doc.fail(*e, "'reward_range' must be [min, max] with min < max, found [" + items[0].Scalar() + ", " +
                             items[1].Scalar() + "]");
        b.rewardRange = std::make_pair(lo, hi);
    }
    if (const Entry* e = f.get("seq_len"))
        b.seqLen = doc.integer(*e, 1);
    for (const char* key : {"grad_norm", "advantage_max"})
        if (const Entry* e = f.get(key)) {
            const double v = doc.number(*e);
            if (v < 0)
                doc.fail(*e, "'" + std::string(key) + "' must be at least 0, found " + doc.string(*e));
            (std::strcmp(key, "grad_norm") == 0 ? b.gradNorm : b.advantageMax) = v;
        }
}

void parseStages(const Doc& doc, const Entry& entry, Contract& c) {
    const auto nodes = doc.stringNodes(entry, false);
    c.stages.clear();
    for (const auto& n : nodes) {
        if (n.Scalar().empty())
            doc.fail(n, "a stage name must not be empty");
        if (std::find(c.stages.begin(), c.stages.end(), n.Scalar()) != c.stages.end())
            doc.fail(n, "stage '" + n.Scalar() + "' is listed twice");
        c.stages.push_back(n.Scalar());
    }
}

void parseClauses(const Doc& doc, const Fields& top, Contract& c) {
    std::map<std::string, SourceSpan> seen;
    for (const Family family : {Family::Numerical, Family::Statistical, Family::Runtime, Family::Observability}) {
        const Entry* e = top.get(familyName(family));
        if (!e || e->value.IsNull())
            continue;   // `numerical:` with nothing under it: no clauses
        for (const auto& node : doc.list(*e)) {
            Clause clause;
            parseClause(doc, node, family, clause);
            if (const auto it = seen.find(clause.id); it != seen.end())
                throw InputError::atText(doc.file(), clause.span.line, clause.span.column,
                                         "duplicate clause id '" + clause.id + "' (first at line " +
                                             std::to_string(it->second.line) + ", column " +
                                             std::to_string(it->second.column) + ")");
            seen.emplace(clause.id, clause.span);
            c.clauses.push_back(std::move(clause));
        }
    }
}

void parseEscalation(const Doc& doc, const Entry& entry, Contract& c) {
    Names ids, stages;
    for (const auto& cl : c.clauses)
        ids.push_back(cl.id);
    for (const auto& s : c.stages)
        stages.push_back(s);
    bool afterDefault = false;
    for (const auto& node : doc.list(entry)) {
        const Fields f = doc.mapping(node, "an escalation rule", kRuleKeys);
        if (afterDefault)
            doc.fail(node, "this escalation rule comes after '- default: ...' and can never match "
                           "(the default rule must be last)");
        EscalationRule r;
        if (const Entry* d = f.get("default")) {
            for (const char* k : {"when", "action", "persist", "until"})
                if (const Entry* e = f.get(k))
                    doc.fail(e->keyNode, std::string("a default rule is only '- default: ACTION'; '") + k +
                                             "' belongs in a rule of its own");
            r.isDefault = true;
            r.action = doc.name<Action>(*d, "action", parseAction, kActionNames);
            r.span = doc.span(d->value);
            afterDefault = true;
            c.escalation.push_back(std::move(r));
            continue;
        }
        const Entry* action = f.get("action");
        const Entry* when = f.get("when");
        if (!action || !when)
            doc.fail(node, std::string("an escalation rule needs ") + (!when ? "'when: {...}'" : "'action: ACTION'") +
                               " (a rule is '{when: {...}, action: ACTION}' or '{default: ACTION}')");
        r.action = doc.name<Action>(*action, "action", parseAction, kActionNames);
        r.span = doc.span(action->value);
        if (const Entry* e = f.get("persist")) {
            const Fields p = doc.mapping(*e, kPersistKeys);
            const Entry* k = p.get("failures");
            const Entry* w = p.get("window");
            if (!k || !w)
                doc.fail(e->value, "persist needs both 'failures: K' and 'window: W' (K of the last W steps)");
            EscalationRule::Persist ps;
            ps.failures = doc.integer(*k, 1);
            ps.window = doc.integer(*w, 1);
            if (ps.window < ps.failures)
                doc.fail(w->value, "persist: the window (" + std::to_string(ps.window) + " steps) is shorter than the " +
                                       std::to_string(ps.failures) + " failures it must hold");
            r.persist = ps;
        }
        if (const Entry* e = f.get("until")) {
            const Fields u = doc.mapping(*e, kUntilKeys);
            const Entry* passes = u.get("passes");
            if (!passes)
                doc.fail(e->value, "until needs 'passes: R' (R consecutive passing steps end the rule)");
            r.untilPasses = doc.integer(*passes, 1);
        }
        const Fields w = doc.mapping(*when, kWhenKeys);
        if (const Entry* e = w.get("clause"))
            for (const auto& n : doc.stringNodes(*e, true)) {
                if (!c.find(n.Scalar())) {
                    const std::string near = nearest(n.Scalar(), ids);
                    doc.fail(n, "escalation names clause '" + n.Scalar() + "', which the contract does not define" +
                                    (near.empty() ? " (clauses: " + joinNames(ids) + ")"
                                                  : " — did you mean '" + near + "'?"));
                }
                r.clauses.push_back(n.Scalar());
            }
        if (const Entry* e = w.get("family"))
            r.families = doc.names<Family>(*e, "family", parseFamily, kFamilyNames);
        if (const Entry* e = w.get("severity"))
            r.severities = doc.names<Severity>(*e, "severity", parseSeverity, kSeverityNames);
        if (const Entry* e = w.get("status"))
            r.statuses = doc.names<Status>(*e, "status", parseStatus, kStatusNames);
        if (const Entry* e = w.get("slice"))
            r.slice = doc.filter(*e);
        if (const Entry* e = w.get("stage"))
            for (const auto& n : doc.stringNodes(*e, true)) {
                if (std::find(c.stages.begin(), c.stages.end(), n.Scalar()) == c.stages.end())
                    doc.fail(n, "unknown stage '" + n.Scalar() + "'" + suggestion(n.Scalar(), stages) +
                                    " — stages come from the contract's 'stages'");
                r.stages.push_back(n.Scalar());
            }
        c.escalation.push_back(std::move(r));
    }
}

Contract parse(const std::string& text, const std::string& name) {
    // YAML and JSON are Unicode text; anything else would reach reports, JSON output and
    // sign-off records as bytes no UTF-8 reader accepts.
    if (const size_t bad = firstInvalidUtf8(text); bad != std::string::npos) {
        int64_t line = 0, column = 0;
        lineColumn(text, bad, line, column);
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", unsigned(static_cast<unsigned char>(text[bad])));
        throw InputError::atText(name, line, column, std::string("invalid UTF-8 (byte ") + hex +
                                                         "): a contract is UTF-8 text; save it as UTF-8");
    }
    // A NUL byte ends the text for many tools (and yaml-cpp reads it as the end of a scalar).
    if (const size_t nul = text.find('\0'); nul != std::string::npos) {
        int64_t line = 0, column = 0;
        lineColumn(text, nul, line, column);
        throw InputError::atText(name, line, column,
                                 "NUL byte at line " + std::to_string(line) + " column " + std::to_string(column) +
                                     ": a contract is text; remove it");
    }
    Doc doc(text, name);
    const size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    const size_t first = text.find_first_not_of(" \t\r\n", bom);
    if (first != std::string::npos && text[first] == '{') {
        if (const size_t deep = jsonDepthExceeded(text, kMaxDepth); deep != std::string::npos) {
            int64_t line = 0, column = 0;
            lineColumn(text, deep, line, column);
            throw InputError::atText(name, line, column,
                                     jsonDepthMessage(kMaxDepth) + " (a contract needs about 5)");
        }
        checkJson(text, name);
        rewriteSurrogates(doc);
    }
    const std::vector<YAML::Node> docs = load(doc);
    if (docs.empty() || docs[0].IsNull())
        doc.failAtStart("empty contract: expected a mapping with 'kcx_contract: 1' and 'name'");
    if (docs.size() > 1)
        doc.fail(docs[1], "a contract is one YAML document; found a second one (remove the '---')");
    const YAML::Node& root = docs[0];
    if (!root.IsMap())
        doc.fail(root, "a contract must be a mapping (kcx_contract: 1, name: ..., ...), found " + Doc::describe(root));
    size_t visits = 0;
    for (const auto& kv : root)
        guard(doc, kv.second, 1, visits, Entry{kv.first.IsScalar() ? kv.first.Scalar() : "?", kv.first, kv.second});

    const Fields top = doc.mapping(root, "the contract", kTopKeys);
    Contract c;
    c.text = text;
    const Entry* format = top.get("kcx_contract");
    if (!format)
        doc.failAtStart("missing 'kcx_contract: 1' (the format version every KCX contract starts with)");
    c.format = int(std::clamp<int64_t>(doc.integer(*format, 0), 0, 1000000));
    if (c.format != 1)
        doc.fail(*format, "unsupported kcx_contract " + doc.string(*format) + " (this KCX reads format 1)");
    const Entry* nameEntry = top.get("name");
    if (!nameEntry)
        doc.failAtStart("missing 'name' (every contract has a name)");
    c.name = doc.string(*nameEntry);
    if (c.name.empty())
        doc.fail(*nameEntry, "'name' must not be empty");
    if (const Entry* e = top.get("version"))
        c.version = doc.string(*e);
    if (const Entry* e = top.get("description"))
        c.description = doc.string(*e);
    if (const Entry* e = top.get("owner"))
        c.owner = doc.string(*e);
    if (const Entry* e = top.get("stages"))
        parseStages(doc, *e, c);
    if (const Entry* e = top.get("bounds"))
        parseBounds(doc, *e, c.bounds);
    parseClauses(doc, top, c);
    if (const Entry* e = top.get("escalation"); e && !e->value.IsNull())
        parseEscalation(doc, *e, c);
    return c;
}

}  // namespace

Contract parseContract(const std::string& text, const std::string& name) {
    try {
        return parse(text, name);
    } catch (const YAML::Exception& e) {   // a yaml-cpp check we did not anticipate
        if (e.mark.is_null())
            throw InputError::atText(name, 1, 1, e.msg);
        throw InputError::atText(name, e.mark.line + 1, e.mark.column + 1, e.msg);
    }
}

Contract loadContract(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError::inFile(path, "is a directory, not a contract file");
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw InputError::inFile(path, std::string("cannot read the contract: ") + std::strerror(errno));
    if (uint64_t(st.st_size) > kMaxBytes && S_ISREG(st.st_mode))
        throw InputError::inFile(path, "too large for a contract (" + std::to_string(st.st_size) +
                                           " bytes; the limit is " + std::to_string(kMaxBytes >> 20) + " MiB)");
    // A regular file only: a FIFO or a device is refused by name before reading, and the
    // size is checked again on what was opened.
    const std::string text = readRegularFile(path, kMaxBytes, "contract");
    Contract c = parseContract(text, path);
    c.path = path;
    return c;
}

}  // namespace kcx
