// Helpers the window tests share: whole files read and written, the demo contract's text,
// and one result of an evaluation found by clause and slice value.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QtGlobal>

#include <string>

#include "core/evaluate/evaluator.h"

namespace kcx::test {

// The whole file; empty when it cannot be read.
inline QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Replaces the file with `bytes`; a test that cannot write its own input stops at once.
inline void writeAll(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

// resources/contracts/demo.yaml, the built-in demo's contract.
inline QByteArray demoContract() {
    const QByteArray text = readAll(QStringLiteral(KCX_SOURCE_DIR "/resources/contracts/demo.yaml"));
    if (text.isEmpty())
        qFatal("cannot read the demo contract");
    return text;
}

// The first result of `clause` (in the slice whose value is `sliceValue`, when given).
inline const Result* findResult(const Evaluation& ev, const std::string& clause, const std::string& sliceValue = {}) {
    for (const Result& r : ev.results)
        if (r.clause == clause && (sliceValue.empty() || (r.slice && r.slice->begin()->second == sliceValue)))
            return &r;
    return nullptr;
}

}  // namespace kcx::test
