// The report as HTML: the document, the verdict, the stages, the results, the figures and
// the contract text (identities, bound chain and sign-off records: report_html_sections.cpp).
#include <QBuffer>
#include <QByteArray>
#include <QStringList>

#include <algorithm>
#include <cmath>

#include "ui/contract/results_model.h"
#include "ui/report/report_internal.h"
#include "ui/style/status_style.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

QString reportNumber(double v) { return formatValue(v, 4); }

QString reportSlice(const Result& r) { return ResultsModel::sliceText(r); }

QString reportThreshold(const Result& r, const Contract& contract) {
    const auto [lo, hi] = comparedBounds(r, contract);
    const Clause* c = contract.find(r.clause);
    QString t;
    if (lo && hi)
        t = QStringLiteral("[%1, %2]").arg(reportNumber(*lo), reportNumber(*hi));
    else if (hi)
        t = QStringLiteral("≤\u00a0%1").arg(reportNumber(*hi));
    else if (lo)
        t = QStringLiteral("≥\u00a0%1").arg(reportNumber(*lo));
    if (c && r.family == Family::Statistical && r.aggregate == "exceedance" && c->level && !t.isEmpty())
        t = QStringLiteral("%1 (level\u00a0%2)").arg(t, reportNumber(c->level->value));
    return t;
}

QString esc(const QString& s) { return s.toHtmlEscaped(); }
QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString tableOpen(const HtmlFlavour& f, const QString& cls, bool fullWidth) {
    if (f.document)
        return QStringLiteral("<table class=\"%1\" border=\"1\" cellspacing=\"0\" cellpadding=\"3\"%2>")
            .arg(cls, fullWidth ? QStringLiteral(" width=\"100%\"") : QString());
    return QStringLiteral("<table class=\"%1\">").arg(cls);
}

QString tint(const QColor& c, double s) {
    auto mix = [s](int v) { return int(std::lround(255 - (255 - v) * s)); };
    return QColor(mix(c.red()), mix(c.green()), mix(c.blue())).name();
}

namespace {

QString cell(const QString& html, const QString& cls = {}, const QString& bg = {}) {
    QString attrs;
    if (!cls.isEmpty())
        attrs += QStringLiteral(" class=\"%1\"").arg(cls);
    if (!bg.isEmpty())
        attrs += QStringLiteral(" style=\"background-color:%1\"").arg(bg);
    return QStringLiteral("<td%1>%2</td>").arg(attrs, html);
}

// Column widths (percent) steer QTextDocument's table layout; browsers lay out by content.
QString head(const QStringList& names, const HtmlFlavour& f, const std::vector<int>& widths = {}) {
    QString h = QStringLiteral("<thead><tr>");
    for (qsizetype i = 0; i < names.size(); ++i) {
        const bool w = f.document && size_t(i) < widths.size();
        h += QStringLiteral("<th%1>%2</th>").arg(w ? QStringLiteral(" width=\"%1%\"").arg(widths[size_t(i)]) : QString(), esc(names[i]));
    }
    return h + QStringLiteral("</tr></thead>");
}

QString resultLabel(const Result& r) {
    const QString slice = reportSlice(r);
    return QString::fromStdString(r.clause) + (slice.isEmpty() ? QString() : QStringLiteral(" [%1]").arg(slice));
}

QString verdictHtml(const ReportInput& in, const HtmlFlavour& f) {
    const Evaluation& ev = in.evaluation;
    int counts[4] = {0, 0, 0, 0};
    for (const Result& r : ev.results)
        ++counts[int(r.status)];
    QStringList parts;
    for (Status s : {Status::Pass, Status::Fail, Status::Inconclusive, Status::Error})
        if (counts[int(s)])
            parts << QStringLiteral("%1 %2").arg(counts[int(s)]).arg(QString(statusName(s)));
    const QColor c = statusColour(ev.verdict);
    QString h = QStringLiteral("<h2 id=\"verdict\">Verdict</h2>") + tableOpen(f, QStringLiteral("verdict"), true) +
                QStringLiteral("<tr><td style=\"background-color:%1;border-color:%2\"><span class=\"big\">%3</span>"
                               " &#8212; action at %4: <b>%5</b><br>%6 results: %7</td></tr></table>")
                    .arg(tint(c, 0.25), c.name(), esc(QString(statusName(ev.verdict)).toUpper()), esc(ev.stage),
                         esc(std::string(actionName(ev.action))), QString::number(ev.results.size()),
                         esc(parts.join(QStringLiteral(", "))));
    // Each stage's action, and the results that set it (escalation at that stage).
    h += QStringLiteral("<h3>Action at each stage</h3>") + tableOpen(f, QStringLiteral("stages")) +
         head({QStringLiteral("stage"), QStringLiteral("action"), QStringLiteral("set by")}, f);
    const std::vector<std::string> stages = in.contract ? in.contract->stages : std::vector<std::string>{ev.stage};
    for (const std::string& stage : stages) {
        const auto it = ev.stageActions.find(stage);
        const Action a = it != ev.stageActions.end() ? it->second : Action::Pass;
        QStringList by;
        if (a != Action::Pass && in.contract)
            for (const Result& r : ev.results)
                if (r.status != Status::Pass && escalate(*in.contract, r, stage) == a)
                    by << resultLabel(r);
        if (by.size() > 8)
            by = by.mid(0, 8) << QStringLiteral("and %1 more").arg(by.size() - 8);
        h += QStringLiteral("<tr>") + cell(esc(stage) + (stage == ev.stage ? QStringLiteral(" (evaluated)") : QString())) +
             cell(QStringLiteral("<b>%1</b>").arg(esc(std::string(actionName(a)))), {}, tint(actionColour(a), 0.3)) +
             cell(esc(by.isEmpty() ? QStringLiteral("no result asks for more than pass") : by.join(QStringLiteral(", ")))) +
             QStringLiteral("</tr>");
    }
    return h + QStringLiteral("</table>");
}

// Under a numerical quantile's observed value: its interval and how many values lie beyond
// the thresholds, for the reviewer (the status compares the observed value alone).
QString quantileMetaHtml(const Result& r) {
    if (r.family != Family::Numerical || !r.ci)
        return {};
    const auto [lo, hi] = *r.ci;
    const QString interval = (std::isfinite(lo) ? QStringLiteral("[") + reportNumber(lo) : QStringLiteral("(−∞")) +
                             QStringLiteral(",\u00a0") +
                             (std::isfinite(hi) ? reportNumber(hi) + QStringLiteral("]") : QStringLiteral("∞)"));
    QString h = QStringLiteral("<br><span class=\"meta\">%1\u00a0%\u00a0CI\u00a0%2")
                    .arg(reportNumber(100 * r.confidence.value_or(0.95)), esc(interval));
    if (r.beyond && (r.min || r.max))
        h += QStringLiteral("<br>%1\u00a0%2").arg(QString::number(*r.beyond),
                                                    r.min && r.max ? QStringLiteral("outside")
                                                    : r.max       ? QStringLiteral("above\u00a0max")
                                                                  : QStringLiteral("below\u00a0min"));
    return h + QStringLiteral("</span>");
}

// One row per result. The PDF's page is narrow: there the family goes under the clause and
// the aggregate before the metric, so that no column has to break a word.
QString resultsHtml(const ReportInput& in, const HtmlFlavour& f) {
    const QStringList columns = f.document ? QStringList{"clause", "slice", "metric", "observed", "threshold", "n",
                                                         "CI / bound", "status", "action"}
                                           : QStringList{"clause", "family", "slice", "metric", "aggregate", "observed",
                                                         "threshold", "n", "CI / bound", "status", "action"};
    QString h = QStringLiteral("<h2 id=\"results\">Results</h2>") + tableOpen(f, QStringLiteral("results"), true) +
                head(columns, f);
    const Contract empty;
    const Contract& contract = in.contract ? *in.contract : empty;
    for (const Result& r : in.evaluation.results) {
        const QColor sc = statusColour(r.status);
        QString ci = ResultsModel::boundText(r).replace(QStringLiteral("≤ "), QStringLiteral("≤\u00a0"));
        if (!ci.isEmpty() && r.confidence)
            ci += QStringLiteral(" (%1\u00a0%)").arg(reportNumber(100 * *r.confidence));
        const QString clause = QStringLiteral("<b>%1</b>").arg(esc(r.clause));
        const QString family = esc(std::string(familyName(r.family)));
        h += QStringLiteral("<tr class=\"r\">");
        if (f.document)
            h += cell(clause + QStringLiteral("<br><span class=\"meta\">%1</span>").arg(family)) + cell(esc(reportSlice(r))) +
                 cell(esc(r.aggregate.empty() ? r.metric : r.aggregate + " " + r.metric));
        else
            h += cell(clause) + cell(family) + cell(esc(reportSlice(r))) + cell(esc(r.metric)) + cell(esc(r.aggregate));
        h += cell(r.observed ? esc(reportNumber(*r.observed)) + quantileMetaHtml(r) : QStringLiteral("&#8211;"), "num") +
             cell(esc(reportThreshold(r, contract))) + cell(QString::number(r.n), "num") + cell(esc(ci)) +
             cell(QStringLiteral("<b>%1</b>").arg(esc(std::string(statusName(r.status)))), {}, tint(sc, 0.3)) +
             cell(r.status == Status::Pass ? QString() : esc(std::string(actionName(r.action))), {},
                  r.status == Status::Pass ? QString() : tint(actionColour(r.action), 0.3)) +
             QStringLiteral("</tr>");
        if (r.status != Status::Pass && !r.message.empty())
            h += QStringLiteral("<tr class=\"why\"><td colspan=\"%1\">%2: %3</td></tr>")
                     .arg(QString::number(columns.size()), esc(resultLabel(r)), esc(r.message));
    }
    return h + QStringLiteral("</table>");
}

QByteArray png(const QImage& image) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

QString figuresHtml(const ReportData& data, const HtmlFlavour& f) {
    // The PDF starts the pictures on a new page (a heading alone at the foot of a page helps nobody).
    QString h = f.document ? QStringLiteral("<h2 id=\"figures\" style=\"page-break-before:always\">Heatmap and charts</h2>")
                           : QStringLiteral("<h2 id=\"figures\">Heatmap and charts</h2>");
    for (const std::string& note : data.notes)
        h += QStringLiteral("<p class=\"note\">%1</p>").arg(esc(note));
    for (const ReportFigure& fig : data.figures) {
        const int w = f.imageWidth;
        const int hgt = fig.image.width() ? int(std::lround(double(w) * fig.image.height() / fig.image.width())) : 0;
        const QString src = f.document ? QStringLiteral("kcx-figure:%1").arg(QString::fromStdString(fig.id))
                                       : QStringLiteral("data:image/png;base64,") + QString::fromLatin1(png(fig.image).toBase64());
        // The pictures carry their titles; the PDF leaves out the heading, which could end a
        // page with the picture on the next.
        h += QStringLiteral("<div class=\"figure\" id=\"figure-%1\">%2<p><img src=\"%3\" width=\"%4\" height=\"%5\" "
                            "alt=\"%6\"></p><p class=\"caption\">%7</p></div>")
                 .arg(esc(fig.id), f.document ? QString() : QStringLiteral("<h3>%1</h3>").arg(esc(fig.title)), src,
                      QString::number(w), QString::number(hgt), esc(fig.title), esc(fig.caption));
    }
    return h;
}

const char* kBrowserCss = R"(
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;font-size:14px;line-height:1.4;color:#1d1d1f;max-width:1120px;margin:20px auto;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;border-bottom:2px solid #d8d8dc;padding-bottom:3px;margin:28px 0 8px;page-break-after:avoid}
h3{font-size:15px;margin:16px 0 6px;page-break-after:avoid}
table{border-collapse:collapse;margin:6px 0 12px}
th,td{border:1px solid #c8c8cc;padding:3px 7px;vertical-align:top;text-align:left}
th{background:#f0f0f3}
table.results,table.verdict,table.signoffs,table.bounds{width:100%}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.val{text-align:right}
tr.why td{font-size:12px;color:#444;border-top:none;padding-left:24px}
table.verdict td{padding:10px 14px;font-size:15px}
.big{font-size:20px;font-weight:bold}
.hash{font-family:"DejaVu Sans Mono",monospace;font-size:12px;word-break:break-all}
.meta{color:#555;font-size:12px}
.note{color:#8a5a00}
.figure{page-break-inside:avoid;margin:10px 0 18px}
img{max-width:100%;height:auto;border:1px solid #ddd}
.caption{font-size:12px;color:#444;margin:4px 0}
pre{font-family:"DejaVu Sans Mono",monospace;font-size:12px;background:#f7f7f9;border:1px solid #ddd;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere}
ul.checks{margin:2px 0;padding-left:18px;overflow-wrap:anywhere}
@media print{body{max-width:none;margin:0;padding:0;font-size:11px}pre{font-size:9px}a{color:inherit;text-decoration:none}}
)";

// QTextDocument reads a subset of CSS: no max-width, no page margins; sizes in points.
const char* kDocumentCss = R"(
body{font-family:"DejaVu Sans";font-size:8pt;color:#1d1d1f}
h1{font-size:15pt;margin-bottom:2px}
h2{font-size:12pt;margin-top:14px;margin-bottom:4px;color:#1d1d1f}
h3{font-size:9.5pt;margin-top:8px;margin-bottom:3px}
table{border-collapse:collapse;border-color:#b8b8bc;margin-bottom:6px}
th{background-color:#ececf0;font-weight:bold;text-align:left}
td.num{text-align:right;white-space:nowrap}
td.val{text-align:right}
table.results td{font-size:7pt}
table.results th{font-size:7pt}
tr.why td{font-size:7pt;color:#444444}
.big{font-size:13pt;font-weight:bold}
.hash{font-family:"DejaVu Sans Mono";font-size:7pt}
.meta{color:#555555;font-size:7pt}
.note{color:#8a5a00}
.caption{font-size:7pt;color:#444444}
pre{font-family:"DejaVu Sans Mono";font-size:6.5pt;white-space:pre-wrap;background-color:#f7f7f9}
)";

QString document(const ReportInput& in, const ReportData& data, const HtmlFlavour& f) {
    const QString name = in.contract ? QString::fromStdString(in.contract->name + " " + in.contract->version).trimmed() : QString();
    const QString runName = in.runPath.empty() ? QStringLiteral("the built-in demo run") : QString::fromStdString(in.runPath);
    const QString title = QStringLiteral("KCX report: %1 on %2").arg(name, runName);
    const QString generated = QStringLiteral("Generated by KCX %1 at %2 (UTC).").arg(QStringLiteral(KCX_VERSION),
                                                                                      QString::fromStdString(data.generatedAt));
    QString h = QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                               "<meta name=\"generator\" content=\"KCX %1\">\n<title>%2</title>\n<style>%3</style>\n</head>\n<body>\n")
                    .arg(QStringLiteral(KCX_VERSION), esc(title), QString::fromLatin1(f.document ? kDocumentCss : kBrowserCss));
    h += QStringLiteral("<h1>%1</h1>\n<p class=\"meta\">%2 Contract %3 (sha256 <span class=\"hash\">%4</span>), stage %5.</p>\n")
             .arg(esc(title), esc(generated), esc(in.contractPath.empty() ? std::string("(no file)") : in.contractPath),
                  esc(data.contractSha256), esc(in.evaluation.stage));
    h += verdictHtml(in, f) + QLatin1Char('\n');
    h += resultsHtml(in, f) + QLatin1Char('\n');
    h += identitiesHtml(in, data, f) + QLatin1Char('\n');
    h += figuresHtml(data, f) + QLatin1Char('\n');
    h += summaryHtml(in, data, f);
    h += boundsHtml(in, f) + QLatin1Char('\n');
    h += signoffsHtml(in, data, f) + QLatin1Char('\n');
    h += QStringLiteral("<h2 id=\"contract\">Contract text</h2>\n<p class=\"meta\">%1, verbatim (sha256 <span class=\"hash\">%2</span>).</p>\n"
                        "<pre>%3</pre>\n")
             .arg(esc(in.contractPath.empty() ? std::string("The contract") : in.contractPath), esc(data.contractSha256),
                  esc(in.contractText));
    h += QStringLiteral("<p class=\"meta\">%1</p>\n</body>\n</html>\n").arg(esc(generated));
    return h;
}

}  // namespace

std::string reportHtml(const ReportInput& in, const ReportData& data) { return document(in, data, {}).toStdString(); }

std::string reportDocumentHtml(const ReportInput& in, const ReportData& data) {
    HtmlFlavour f;
    f.document = true;
    f.imageWidth = 680;
    return document(in, data, f).toStdString();
}

}  // namespace kcx::ui
