#include "ui/style/value_text.h"

#include <cmath>

namespace kcx::ui {

QString formatValue(double v, int precision) {
    if (std::isfinite(v))
        return QString::number(v, 'g', precision);
    if (isMissing(v))
        return QStringLiteral("missing");
    if (std::isnan(v))
        return QStringLiteral("NaN");
    return v > 0 ? QStringLiteral("+inf") : QStringLiteral("-inf");
}

QString formatOptional(const std::optional<double>& v, int precision) {
    return v ? formatValue(*v, precision) : QStringLiteral("\u2014");
}

QString escapeTokenText(std::string_view text) {
    if (text.empty())
        return QStringLiteral("\u2205");
    const QString s = QString::fromUtf8(text.data(), qsizetype(text.size()));
    QString out;
    out.reserve(s.size());
    for (const QChar c : s) {
        const char16_t u = c.unicode();
        if (u == ' ')
            out += QChar(0x00B7);
        else if (u == '\n')
            out += QChar(0x21B5);
        else if (u == '\t')
            out += QChar(0x21E5);
        else if (u == '\r')
            out += QChar(0x240D);
        else if (u < 0x20)
            out += QChar(char16_t(0x2400 + u));   // control pictures
        else if (u == 0x7F)
            out += QChar(0x2421);
        else if (u == 0x00A0)
            out += QChar(0x237D);   // no-break space: shouldered open box
        else
            out += c;
    }
    return out;
}

TokenVocab::TokenVocab(std::shared_ptr<const Run> run) : run_(std::move(run)) {
    if (!run_ || !run_->hasText())
        return;
    const size_t m = run_->tokenCount();
    for (size_t i = 0; i < m; ++i)
        first_.try_emplace(run_->tokens[i], i);
}

std::optional<std::string_view> TokenVocab::text(int32_t id) const {
    const auto it = first_.find(id);
    if (it == first_.end())
        return std::nullopt;
    return run_->tokenText(it->second);
}

}  // namespace kcx::ui
