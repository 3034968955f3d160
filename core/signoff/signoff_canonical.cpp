// Canonical JSON and the results hash of a sign-off record (docs/signoff.md).
#include <charconv>
#include <cmath>

#include "core/base/sha256.h"
#include "core/evaluate/evaluation_json.h"
#include "core/signoff/signoff.h"

namespace kcx {

namespace {

void putString(std::string& out, const std::string& s) {
    static const char* hex = "0123456789abcdef";
    out += '"';
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 15];
            } else {
                out += ch;   // everything else, UTF-8 included, as is
            }
        }
    }
    out += '"';
}

void putDouble(std::string& out, double v) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    if (v == 0) {   // -0 reads back as the integer 0: write both as 0
        out += '0';
        return;
    }
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);   // shortest round-trip form
    out.append(buf, res.ptr);
}

void put(std::string& out, const nlohmann::json& j) {
    using T = nlohmann::json::value_t;
    switch (j.type()) {
    case T::null: out += "null"; break;
    case T::boolean: out += j.get<bool>() ? "true" : "false"; break;
    case T::number_integer: out += std::to_string(j.get<int64_t>()); break;
    case T::number_unsigned: out += std::to_string(j.get<uint64_t>()); break;
    case T::number_float: putDouble(out, j.get<double>()); break;
    case T::string: putString(out, j.get_ref<const std::string&>()); break;
    case T::array: {
        out += '[';
        bool first = true;
        for (const auto& e : j) {
            if (!first)
                out += ',';
            first = false;
            put(out, e);
        }
        out += ']';
        break;
    }
    case T::object: {
        // nlohmann's object is a std::map<std::string, ...>: keys come in byte order.
        out += '{';
        bool first = true;
        for (const auto& [k, v] : j.items()) {
            if (!first)
                out += ',';
            first = false;
            putString(out, k);
            out += ':';
            put(out, v);
        }
        out += '}';
        break;
    }
    case T::binary:
    case T::discarded: throw std::invalid_argument("canonical JSON: binary or discarded value");
    }
}

}  // namespace

std::string canonicalJson(const nlohmann::json& j) {
    std::string out;
    put(out, j);
    return out;
}

nlohmann::json signedResultsJson(const Evaluation& ev) {
    nlohmann::json j = evaluationJson(ev);
    for (auto& r : j["results"]) {
        r.erase("message");
        // A numerical quantile's interval and its count beyond the thresholds are shown for
        // the reviewer and decide nothing; records signed before KCX wrote them must verify.
        if (r["family"] == "numerical") {
            r.erase("ci");
            r.erase("confidence");
            r.erase("beyond");
        }
    }
    for (auto& b : j["bounds"]) {
        b.erase("title");
        b.erase("assumption");
        b.erase("input_name");
        b.erase("observed_name");
    }
    return j;
}

std::string resultsSha256(const Evaluation& ev) { return sha256Hex(canonicalJson(signedResultsJson(ev))); }

}  // namespace kcx
