#include "ui/drilldown/token_context.h"

#include <QTextBlock>
#include <QTextCharFormat>
#include <QTextCursor>

#include <algorithm>

#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {

constexpr qsizetype kContextMaxChars = 3000;   // per side: a huge token must not flood the view

// Decoded text with control characters (other than newline and tab) made visible.
QString contextVisibleText(std::string_view bytes) {
    QString s = QString::fromUtf8(bytes.data(), qsizetype(bytes.size()));
    for (QChar& c : s) {
        const char16_t u = c.unicode();
        if (u == '\n' || u == '\t')
            continue;
        if (u < 0x20)
            c = QChar(char16_t(0x2400 + u));
        else if (u == 0x7F)
            c = QChar(0x2421);
    }
    return s;
}

QString contextIds(const Run& run, size_t from, size_t to) {
    QStringList ids;
    for (size_t i = from; i < to; ++i)
        ids << QStringLiteral("#%1").arg(run.tokens[i]);
    return ids.join(QLatin1Char(' '));
}

}  // namespace

TokenContextParts tokenContextParts(const Run& run, size_t seq, size_t position, int span) {
    TokenContextParts p;
    if (seq >= run.sequenceCount() || position >= run.seqLength(seq))
        return p;
    const size_t begin = run.seqBegin(seq), end = run.seqEnd(seq), at = begin + position;
    const size_t from = at - std::min(position, size_t(std::max(span, 0)));
    const size_t to = std::min(end, at + 1 + size_t(std::max(span, 0)));
    p.cutBefore = from > begin;
    p.cutAfter = to < end;
    if (run.hasText()) {
        std::string before, after;
        for (size_t i = from; i < at; ++i)
            before += run.tokenText(i);
        for (size_t i = at + 1; i < to; ++i)
            after += run.tokenText(i);
        p.before = contextVisibleText(before);
        p.token = escapeTokenText(run.tokenText(at));
        p.after = contextVisibleText(after);
    } else {
        p.before = contextIds(run, from, at);
        if (!p.before.isEmpty())
            p.before += QLatin1Char(' ');
        p.token = QStringLiteral("#%1").arg(run.tokens[at]);
        p.after = contextIds(run, at + 1, to);
        if (!p.after.isEmpty())
            p.after.prepend(QLatin1Char(' '));
    }
    if (p.before.size() > kContextMaxChars) {
        p.before = p.before.right(kContextMaxChars);
        p.cutBefore = true;
    }
    if (p.after.size() > kContextMaxChars) {
        p.after.truncate(kContextMaxChars);
        p.cutAfter = true;
    }
    if (p.token.size() > kContextMaxChars)
        p.token = p.token.left(kContextMaxChars) + QChar(0x2026);
    return p;
}

TokenContext::TokenContext(QWidget* parent) : QPlainTextEdit(parent) {
    setReadOnly(true);
    setUndoRedoEnabled(false);
    setLineWrapMode(QPlainTextEdit::WidgetWidth);
    setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    setFocusPolicy(Qt::ClickFocus);
    setToolTip(tr("The sequence's text around the selected token (highlighted)"));
}

void TokenContext::showMessage(const QString& message) {
    highlighted_.clear();
    setPlainText(message);
}

void TokenContext::showToken(const Run& run, size_t seq, size_t position) {
    const TokenContextParts p = tokenContextParts(run, seq, position, span_);
    clear();
    QTextCursor c(document());
    QTextCharFormat plain;
    QTextCharFormat mark;
    mark.setBackground(palette().color(QPalette::Highlight));
    mark.setForeground(palette().color(QPalette::HighlightedText));
    mark.setFontWeight(QFont::Bold);
    QTextCharFormat cut;
    cut.setForeground(palette().color(QPalette::PlaceholderText));
    if (p.cutBefore)
        c.insertText(QStringLiteral("\u2026"), cut);
    c.insertText(p.before, plain);
    const int start = c.position();
    c.insertText(p.token, mark);
    const int stop = c.position();
    c.insertText(p.after, plain);
    if (p.cutAfter)
        c.insertText(QStringLiteral("\u2026"), cut);
    highlighted_ = p.token;
    // Put the token in view (and in the middle when there is more text than room).
    QTextCursor at(document());
    at.setPosition(stop);
    at.setPosition(start, QTextCursor::KeepAnchor);
    setTextCursor(at);
    centerCursor();
    at.clearSelection();
    at.setPosition(start);
    setTextCursor(at);
}

QSize TokenContext::sizeHint() const {
    return {400, fontMetrics().lineSpacing() * 5 + 2 * frameWidth() + 8};
}

}  // namespace kcx::ui
