// Text from files shown as text. Tooltips that show data (token texts, runtime values) as plain text. QToolTip guesses
// rich text from the string itself, so a token "<b>x</b>" would otherwise render bold (and
// "<img src=…>" would load an image): the text is escaped inside a rich-text paragraph
// that keeps its spaces and line breaks.
#pragma once

#include <QString>

namespace kcx::ui {

inline QString plainToolTip(const QString& text) {
    return QStringLiteral("<p style='white-space:pre-wrap'>%1</p>").arg(text.toHtmlEscaped());
}

// Qt Charts renders every title, legend name and axis label as HTML: text that came from a
// file (slice values, clause ids, slice keys) goes in escaped, so it reads as written.
inline QString chartText(const QString& text) { return text.toHtmlEscaped(); }

}  // namespace kcx::ui
