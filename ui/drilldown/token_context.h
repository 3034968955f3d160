// The selected token in its running text: the decoded text of up to `span` tokens before
// and after it, with the token itself highlighted (and its invisible characters made
// visible, as in the strip). Runs without token text show the ids instead ("#17 #4 …").
//
// Token text is data from the run file and is only ever inserted as plain text into the
// document (QTextCursor::insertText): "<b>x</b>" or "<img src=…>" appear literally.
#pragma once

#include <QPlainTextEdit>

#include "core/formats/run.h"

namespace kcx::ui {

struct TokenContextParts {
    QString before, token, after;
    bool cutBefore = false, cutAfter = false;   // the sequence goes on beyond the span
};

// The parts around `position` of sequence `seq`; empty when out of range. Control
// characters other than newline and tab show as their Unicode control pictures.
TokenContextParts tokenContextParts(const Run& run, size_t seq, size_t position, int span);

class TokenContext : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit TokenContext(QWidget* parent = nullptr);

    void showToken(const Run& run, size_t seq, size_t position);
    void showMessage(const QString& message);   // no token selected
    QString highlightedText() const { return highlighted_; }
    int span() const { return span_; }

    QSize sizeHint() const override;

private:
    int span_ = 60;
    QString highlighted_;
};

}  // namespace kcx::ui
