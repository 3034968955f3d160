// The header line of the sequence view, as plain text (ids and slice labels come from the
// run file). The runtime record has its own table (runtime_table.h).
#include <QStringList>

#include <cmath>

#include "ui/drilldown/sequence_view.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

QString sequenceSummary(const Run& run, size_t seq) {
    if (seq >= run.sequenceCount())
        return QObject::tr("No sequence");
    QStringList parts;
    parts << QObject::tr("%1 (sequence %2 of %3)").arg(QString::fromStdString(run.ids[seq])).arg(seq).arg(run.sequenceCount());
    QStringList slices;
    for (size_t k = 0; k < run.slices.keys.size(); ++k)
        if (const std::string* label = run.slices.label(seq, k))
            slices << QString::fromStdString(run.slices.keys[k]) + QLatin1Char('=') + QString::fromStdString(*label);
    parts << (slices.isEmpty() ? QObject::tr("no slices") : slices.join(QLatin1String(", ")));
    parts << QObject::tr("%n token(s)", nullptr, int(run.seqLength(seq)));
    if (run.hasRewards()) {
        const double a = run.rewardTrain[seq], b = run.rewardInf[seq];
        QString r = QObject::tr("reward train %1, inf %2").arg(formatValue(a, 4), formatValue(b, 4));
        if (std::isfinite(a) && std::isfinite(b))
            r += QObject::tr(" (diff %1)").arg(formatValue(b - a, 4));
        parts << r;
    }
    return parts.join(QStringLiteral(" \u00B7 "));
}

}  // namespace kcx::ui
