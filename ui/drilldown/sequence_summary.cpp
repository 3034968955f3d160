// The header line of the sequence view.
#include <QStringList>

#include <cmath>

#include "ui/drilldown/sequence_view.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {
constexpr int kRuntimeChars = 240;   // longer runtime records are cut (the tooltip has them whole)

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
}  // namespace

QString sequenceSummary(const Run& run, size_t seq) {
    if (seq >= run.sequenceCount())
        return QObject::tr("No sequence");
    QStringList parts;
    parts << QObject::tr("<b>%1</b> (sequence %2 of %3)").arg(esc(run.ids[seq])).arg(seq).arg(run.sequenceCount());
    QStringList slices;
    for (size_t k = 0; k < run.slices.keys.size(); ++k)
        if (const std::string* label = run.slices.label(seq, k))
            slices << esc(run.slices.keys[k]) + QLatin1Char('=') + esc(*label);
    parts << (slices.isEmpty() ? QObject::tr("no slices") : slices.join(QLatin1String(", ")));
    parts << QObject::tr("%n token(s)", nullptr, int(run.seqLength(seq)));
    if (run.hasRewards()) {
        const double a = run.rewardTrain[seq], b = run.rewardInf[seq];
        QString r = QObject::tr("reward train %1, inf %2").arg(formatValue(a, 4), formatValue(b, 4));
        if (std::isfinite(a) && std::isfinite(b))
            r += QObject::tr(" (diff %1)").arg(formatValue(b - a, 4));
        parts << r;
    }
    if (seq < run.runtime.size() && !run.runtime[seq].is_null()) {
        QString rt = QString::fromStdString(run.runtime[seq].dump());
        if (rt.size() > kRuntimeChars)
            rt = rt.left(kRuntimeChars) + QChar(0x2026);
        parts << QObject::tr("runtime %1").arg(rt.toHtmlEscaped());
    }
    return parts.join(QLatin1String(" &middot; "));
}

}  // namespace kcx::ui
