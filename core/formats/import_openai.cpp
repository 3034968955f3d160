// Reading one side of an import (core/formats/importers.h): what the file is (JSON Lines, one
// JSON document, a server-sent-event stream, or a binary format KCX does not read), then each
// response through its shape's reader (core/formats/import_shapes.h).
#include <unordered_map>

#include "core/base/errors.h"
#include "core/formats/import_shapes.h"
#include "core/formats/importers.h"
#include "core/formats/sniff.h"

namespace kcx {
namespace {

using importjson::Place;

std::string_view lineAt(std::string_view text, size_t pos, size_t& next) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
        end = text.size();
    next = end + 1;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    return line;
}

bool blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

// One JSON document over several lines (an HTTP body saved as it came, pretty-printed or
// not): the first line alone is no complete value, and it opens the document ("{" or "[")
// or the whole text is one.
bool isDocument(std::string_view text, size_t& begin, int64_t& line) {
    line = 1;
    size_t pos = 0, next = 0;
    while (pos < text.size()) {
        const std::string_view l = lineAt(text, pos, next);
        if (!blank(l)) {
            begin = pos;
            if (importjson::isCompleteValue(l))
                return false;
            const size_t a = l.find_first_not_of(" \t"), b = l.find_last_not_of(" \t");
            return a == b || importjson::isCompleteValue(text.substr(pos));
        }
        pos = next;
        ++line;
    }
    return false;
}

// Ids are unique within a side: a repeat is an error at the later record.
void checkIds(const ImportedSide& side) {
    std::unordered_map<std::string, int64_t> seen;
    for (const ImportedRecord& r : side.records)
        if (const auto [it, fresh] = seen.emplace(r.id, r.line); !fresh)
            throw InputError::atText(side.path, r.line, 0,
                                     "duplicate id '" + r.id + "' (first at line " + std::to_string(it->second) + ")");
}

}  // namespace

ImportedSide parseLogprobJsonl(std::string_view text, const std::string& name) {
    ImportedSide side;
    side.path = name;
    size_t begin = 0;
    int64_t firstLine = 1;
    if (importshapes::looksLikeSse(text)) {
        importshapes::readSse(text, name, side);
    } else if (isDocument(text, begin, firstLine)) {
        const std::string_view doc = text.substr(begin);
        const Place at{name, firstLine};
        importshapes::readValue(importjson::parse(doc, at), doc, at, side);
    } else {
        int64_t lineNo = 0;
        size_t pos = 0, next = 0;
        while (pos < text.size()) {
            const std::string_view line = lineAt(text, pos, next);
            pos = next;
            ++lineNo;
            if (blank(line))
                continue;
            const Place at{name, lineNo};
            importshapes::readValue(importjson::parse(line, at), line, at, side);
        }
    }
    checkIds(side);
    return side;
}

ImportedSide readLogprobFile(const std::string& path) {
    const std::string bytes = readPlainOrGzip(path);
    if (const std::string what = foreignFormat(bytes, bytes); !what.empty())
        throw InputError::inFile(path, foreignFormatMessage(what));
    return parseLogprobJsonl(bytes, path);
}

}  // namespace kcx
