// The report's identity tables (run, kernels, model, contract), the bound chain and the
// sign-off records, as HTML.
#include <QFileInfo>
#include <QStringList>

#include <cmath>
#include <set>

#include "ui/contract/bounds_model.h"
#include "ui/report/report_internal.h"
#include "ui/style/status_style.h"
#include "ui/style/value_text.h"

namespace kcx::ui {

namespace {

QString jsonText(const nlohmann::json& j) {
    if (j.is_string())
        return QString::fromStdString(j.get<std::string>());
    return QString::fromStdString(j.dump());
}

// A value that is a hash (or another long unbroken token) gets the monospace style; the
// PDF breaks it into lines of 32 characters (QTextDocument would widen the column instead).
QString valueHtml(const QString& v, const HtmlFlavour& f) {
    if (v.size() < 32 || v.contains(QLatin1Char(' ')))
        return esc(v);
    QString text;
    for (qsizetype i = 0; i < v.size(); i += 32)
        text += (i && f.document ? QStringLiteral("<br>") : QString()) + esc(v.mid(i, 32));
    return QStringLiteral("<span class=\"hash\">%1</span>").arg(text);
}

// Escaped text whose words longer than 32 characters (hashes in a check's text, long file
// names) the PDF breaks into lines: QTextDocument would widen the table past the page.
QString breakable(const QString& text, const HtmlFlavour& f) {
    if (!f.document)
        return esc(text);
    QStringList words = text.split(QLatin1Char(' '));
    for (QString& w : words) {
        QString out;
        for (qsizetype i = 0; i < w.size(); i += 32) {
            const bool last = w.size() - i <= 34;   // a trailing comma or bracket stays on the line
            out += (i ? QStringLiteral("<br>") : QString()) + esc(w.mid(i, last ? -1 : 32));
            if (last)
                break;
        }
        w = out;
    }
    return words.join(QLatin1Char(' '));
}

QString row(const QString& key, const QString& valueHtmlText) {
    return QStringLiteral("<tr><th>%1</th><td>%2</td></tr>").arg(esc(key), valueHtmlText);
}

// A summary's identity: its file, what it reduces (inputs with their hashes), its size.
QString summaryTable(const ReportInput& in, const ReportData& data, const HtmlFlavour& f) {
    const RunSummary& s = *in.summary;
    QString h = tableOpen(f, QStringLiteral("kv"));
    h += row(QStringLiteral("file"), esc(QString::fromStdString(in.runPath)) + QStringLiteral(" (a summary, SPEC 10)"));
    h += row(QStringLiteral("sha256"), data.runSha256.empty() ? QStringLiteral("&#8212;") : valueHtml(QString::fromStdString(data.runSha256), f));
    h += row(QStringLiteral("sequences"), QString::number(s.sequences()));
    h += row(QStringLiteral("tokens"), QString::number(s.tokens()));
    h += row(QStringLiteral("steps"), QString::number(s.steps().size()));
    QStringList has{QStringLiteral("log-probs of both kernels")};
    if (s.hasTopK)
        has << QStringLiteral("top-k of both kernels");
    if (s.hasLogits)
        has << QStringLiteral("full logits");
    if (s.hasRewards)
        has << QStringLiteral("rewards");
    h += row(QStringLiteral("data"), esc(has.join(QStringLiteral(", "))));
    h += row(QStringLiteral("resolution"), esc(QStringLiteral("counts, sums, means, minima and maxima exact; quantiles from a "
                                                             "sketch with 1 % relative accuracy")));
    QString inputs;
    for (const SummaryInput& i : s.inputs)
        inputs += QStringLiteral("%1 (%2 sequences, %3 tokens) sha256 %4<br>")
                      .arg(esc(i.path))
                      .arg(i.sequences)
                      .arg(i.tokens)
                      .arg(valueHtml(QString::fromStdString(i.sha256), f));
    h += row(QStringLiteral("inputs"), inputs.isEmpty() ? QStringLiteral("none recorded") : inputs);
    return h + QStringLiteral("</table>");
}

QString runTable(const ReportInput& in, const ReportData& data, const HtmlFlavour& f) {
    if (in.summary)
        return summaryTable(in, data, f);
    const Run& run = *in.run;
    QString h = tableOpen(f, QStringLiteral("kv"));
    h += row(QStringLiteral("file"), esc(in.runPath.empty() ? QStringLiteral("(generated in memory: the built-in demo run)")
                                                            : QString::fromStdString(in.runPath)));
    h += row(QStringLiteral("sha256"), data.runSha256.empty() ? QStringLiteral("&#8212;") : valueHtml(QString::fromStdString(data.runSha256), f));
    h += row(QStringLiteral("sequences"), QString::number(run.sequenceCount()));
    h += row(QStringLiteral("tokens"), QStringLiteral("%1 (longest sequence %2)").arg(run.tokenCount()).arg(run.maxLength()));
    QStringList slices;
    for (size_t k = 0; k < run.slices.keys.size(); ++k) {
        QStringList values;
        for (const auto& v : run.slices.values[k])
            values << QString::fromStdString(v);
        slices << QStringLiteral("%1: %2").arg(QString::fromStdString(run.slices.keys[k]), values.join(QStringLiteral(", ")));
    }
    h += row(QStringLiteral("slices"), esc(slices.isEmpty() ? QStringLiteral("none") : slices.join(QStringLiteral("; "))));
    QStringList has{QStringLiteral("log-probs of both kernels")};
    if (run.hasTopK())
        has << QStringLiteral("top-%1 of both kernels").arg(run.topkTrain.k);
    if (run.hasLogits())
        has << QStringLiteral("full logits at %1 positions (vocabulary %2)").arg(run.logits.rows.size()).arg(run.logits.vocab);
    if (run.hasRewards())
        has << QStringLiteral("rewards of both kernels");
    if (!run.runtime.empty())
        has << QStringLiteral("runtime facts per sequence");
    if (run.hasText())
        has << QStringLiteral("token text");
    h += row(QStringLiteral("data"), esc(has.join(QStringLiteral(", "))));
    return h + QStringLiteral("</table>");
}

// train and inf side by side; rows where they differ are marked.
QString kernelsTable(const nlohmann::json& header, const HtmlFlavour& f) {
    if (!header.is_object() || !header.contains("kernels") || !header["kernels"].is_object())
        return QStringLiteral("<p>The run's header names no kernels.</p>");
    const nlohmann::json& k = header["kernels"];
    const nlohmann::json train = k.value("train", nlohmann::json::object());
    const nlohmann::json inf = k.value("inf", nlohmann::json::object());
    std::vector<std::string> keys;
    std::set<std::string> seen;
    for (const nlohmann::json* side : {&train, &inf})
        if (side->is_object())
            for (auto it = side->begin(); it != side->end(); ++it)
                if (seen.insert(it.key()).second)
                    keys.push_back(it.key());
    QString h = tableOpen(f, QStringLiteral("kernels"), true) +
                QStringLiteral("<thead><tr><th></th><th>training kernel</th><th>inference kernel</th></tr></thead>");
    for (const std::string& key : keys) {
        const bool inT = train.is_object() && train.contains(key), inI = inf.is_object() && inf.contains(key);
        const QString t = inT ? jsonText(train[key]) : QStringLiteral("—");
        const QString i = inI ? jsonText(inf[key]) : QStringLiteral("—");
        const bool same = inT && inI && train[key] == inf[key];
        const QString bg = same ? QString() : QStringLiteral(" style=\"background-color:%1\"").arg(tint(statusColour(Status::Inconclusive), 0.18));
        h += QStringLiteral("<tr><th>%1</th><td%2>%3</td><td%2>%4</td></tr>").arg(esc(key), bg, valueHtml(t, f), valueHtml(i, f));
    }
    return h + QStringLiteral("</table><p class=\"meta\">Shaded rows differ between the kernels.</p>");
}

QString objectTable(const nlohmann::json& obj, const HtmlFlavour& f) {
    QString h = tableOpen(f, QStringLiteral("kv"));
    for (auto it = obj.begin(); it != obj.end(); ++it)
        h += row(QString::fromStdString(it.key()), valueHtml(jsonText(it.value()), f));
    return h + QStringLiteral("</table>");
}

QString describe(const SignoffRecord& r) { return QString::fromStdString(describeSignoff(r)); }

}  // namespace

QString identitiesHtml(const ReportInput& in, const ReportData& data, const HtmlFlavour& f) {
    QString h = QStringLiteral("<h2 id=\"identities\">Run, kernels and contract</h2><h3>Run</h3>") + runTable(in, data, f);
    static const nlohmann::json noHeader;
    const nlohmann::json& header = in.run ? in.run->header : noHeader;
    h += QStringLiteral("<h3>Kernels</h3>") +
         (in.summary ? QStringLiteral("<p>A summary keeps no run header: the kernels are described in the headers of "
                                      "its inputs, listed above with their hashes.</p>")
                     : kernelsTable(header, f));
    if (header.is_object() && header.contains("model") && header["model"].is_object())
        h += QStringLiteral("<h3>Model</h3>") + objectTable(header["model"], f);
    if (header.is_object()) {
        nlohmann::json other = nlohmann::json::object();
        for (auto it = header.begin(); it != header.end(); ++it)
            if (it.key() != "kernels" && it.key() != "model")
                other[it.key()] = it.value();
        if (!other.empty())
            h += QStringLiteral("<h3>Other header fields</h3>") + objectTable(other, f);
    }
    if (in.contract) {
        const Contract& c = *in.contract;
        h += QStringLiteral("<h3>Contract</h3>") + tableOpen(f, QStringLiteral("kv"));
        h += row(QStringLiteral("name"), esc(c.name)) + row(QStringLiteral("version"), esc(c.version));
        if (!c.owner.empty())
            h += row(QStringLiteral("owner"), esc(c.owner));
        if (!c.description.empty())
            h += row(QStringLiteral("description"), esc(c.description));
        h += row(QStringLiteral("file"), esc(in.contractPath.empty() ? std::string("(no file)") : in.contractPath));
        h += row(QStringLiteral("sha256"), valueHtml(QString::fromStdString(data.contractSha256), f));
        int families[4] = {0, 0, 0, 0};
        for (const Clause& cl : c.clauses)
            ++families[int(cl.family)];
        QStringList fam;
        for (Family fa : {Family::Numerical, Family::Statistical, Family::Runtime, Family::Observability})
            fam << QStringLiteral("%1 %2").arg(families[int(fa)]).arg(QString(familyName(fa)));
        h += row(QStringLiteral("clauses"), esc(fam.join(QStringLiteral(", "))));
        QStringList stages;
        for (const auto& s : c.stages)
            stages << QString::fromStdString(s);
        h += row(QStringLiteral("stages"), esc(stages.join(QStringLiteral(" → "))));
        h += QStringLiteral("</table>");
    }
    return h;
}

QString boundsHtml(const ReportInput& in, const HtmlFlavour& f) {
    QString h = QStringLiteral("<h2 id=\"bounds\">Bound chain</h2>");
    if (in.evaluation.bounds.empty())
        return h + QStringLiteral("<p>No bound chain: the contract and the run supply none of its inputs.</p>");
    h += tableOpen(f, QStringLiteral("bounds"), true) +
         (f.document ? QStringLiteral("<thead><tr><th width=\"19%\">step</th><th width=\"17%\">input</th><th width=\"30%\">"
                                      "assumption</th><th width=\"9%\">bound</th><th width=\"16%\">observed</th>"
                                      "<th width=\"9%\">flag</th></tr></thead>")
                     : QStringLiteral("<thead><tr><th>step</th><th>input</th><th>assumption</th><th>bound</th><th>observed</th>"
                                      "<th>flag</th></tr></thead>"));
    bool anyAbove = false;
    for (const BoundStep& s : in.evaluation.bounds) {
        const bool above = BoundsModel::observedAboveBound(s);
        anyAbove = anyAbove || above;
        const QString flag = BoundsModel::flagText(s);
        QString flagBg;
        if (s.vacuous || s.exceedsLimit)
            flagBg = QStringLiteral(" style=\"background-color:%1\"").arg(tint(statusColour(Status::Inconclusive), 0.3));
        h += QStringLiteral("<tr><td><b>%1</b><br><span class=\"meta\">%2</span></td><td class=\"val\">%3<br><span class=\"meta\">%4</span></td>"
                            "<td>%5</td><td class=\"val\">%6</td><td class=\"val\"%7>%8<br><span class=\"meta\">%9</span></td>")
                 .arg(esc(boundStepName(s.step)), esc(s.title), esc(formatOptional(s.input)), esc(s.inputName),
                      esc(s.assumption), esc(BoundsModel::boundText(s)),
                      above ? QStringLiteral(" style=\"color:%1\"").arg(statusColour(Status::Fail).darker(120).name()) : QString(),
                      esc(formatOptional(s.observed) + (above ? QStringLiteral(" *") : QString())), esc(s.observedName));
        h += QStringLiteral("<td%1>%2</td></tr>").arg(flagBg, esc(flag));
    }
    h += QStringLiteral("</table>");
    h += QStringLiteral("<p class=\"meta\">Each step bounds what the step below it needs (docs/bounds.md); the observed value "
                        "stands beside its bound. <b>vacuous</b>: the bound is at least the trivial maximum of what it bounds.");
    if (anyAbove)
        h += QStringLiteral(" *: the observed value lies above the bound: the step's assumption does not hold for this run "
                            "(or the observed value is a proxy).");
    return h + QStringLiteral("</p>");
}

QString signoffsHtml(const ReportInput& in, const ReportData& data, const HtmlFlavour& f) {
    QString h = QStringLiteral("<h2 id=\"signoffs\">Sign-off records</h2>");
    if (data.signoffs.empty()) {
        QString where;
        if (!in.contractPath.empty()) {
            const QFileInfo info(QString::fromStdString(in.contractPath));
            where = QStringLiteral(" none beside the contract (%1.signoff.json, %1.*.signoff.json) and none given")
                        .arg(info.completeBaseName());
        }
        return h + QStringLiteral("<p>No sign-off records:%1.</p>").arg(esc(where.isEmpty() ? QStringLiteral(" none given") : where));
    }
    h += QStringLiteral("<p class=\"meta\">Each record is checked against this report: its signature, the contract text "
                        "and run file above (sha256), and the results of evaluating them at the record's stage. A valid "
                        "signature shows that the record is unchanged, not whose key made it: compare the key fingerprint "
                        "with the reviewer's (kcx verify --pub KEY.pub).</p>");
    h += tableOpen(f, QStringLiteral("signoffs"), true) +
         QStringLiteral("<thead><tr><th>record</th><th>sign-off</th><th>status</th><th>checks</th></tr></thead>");
    for (const ReportSignoff& s : data.signoffs) {
        const QString name = QFileInfo(QString::fromStdString(s.path)).fileName();
        QString what, checks;
        Status look = Status::Error;
        if (s.record) {
            const SignoffRecord& r = *s.record;
            what = esc(describe(r));
            if (!r.comment.empty())
                what += QStringLiteral("<br>comment: &#8220;%1&#8221;").arg(esc(r.comment));
            what += QStringLiteral("<br><span class=\"meta\">key %1, kcx %2</span>").arg(esc(r.keyFingerprint), esc(r.kcxVersion));
            look = s.verified() ? Status::Pass : Status::Fail;
            checks = QStringLiteral("<ul class=\"checks\">");
            for (const SignoffCheck& c : s.verification.checks)
                checks += QStringLiteral("<li><b>%1</b> %2: %3</li>")
                              .arg(c.ok ? QStringLiteral("ok") : QStringLiteral("DIFFERS"), esc(c.what),
                                   breakable(QString::fromStdString(c.text), f));
            checks += QStringLiteral("</ul>");
        } else {
            checks = breakable(QString::fromStdString(s.error), f);
        }
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td style=\"background-color:%3\"><b>%4</b></td><td>%5</td></tr>")
                 .arg(breakable(name, f), what, tint(statusColour(look), 0.3), esc(s.statusText()), checks);
    }
    return h + QStringLiteral("</table>");
}

QString summaryHtml(const ReportInput& in, const ReportData& data, const HtmlFlavour& f) {
    if (!in.summary || data.steps.empty())
        return {};
    const QString stat = QString::fromStdString(cellStatName(data.stepsStat));
    const QString metric = QString::fromStdString(data.metric);
    QString h = QStringLiteral("<h2 id=\"steps\">%1 over steps</h2>").arg(esc(metric));
    const bool mean = data.stepsStat.stat == CellStat::Mean;
    h += QStringLiteral("<p class=\"meta\">%1 of %2 over every token of each step, from the summary%3.</p>")
             .arg(esc(stat), esc(metric), mean ? QStringLiteral("; the interval is the mean &#177; 1.96 standard errors "
                                                                "with sequences as the unit")
                                               : QString());
    h += tableOpen(f, QStringLiteral("steps")) + QStringLiteral("<thead><tr><th>step</th><th>values</th><th>sequences</th><th>%1</th>%2</tr></thead>")
                                                     .arg(esc(stat), mean ? QStringLiteral("<th>95 % interval</th>") : QString());
    // A long run: the first and last 100 steps, and a note for those left out.
    const size_t n = data.steps.size(), keep = 100;
    for (size_t i = 0; i < n; ++i) {
        if (n > 2 * keep && i == keep) {
            h += QStringLiteral("<tr><td colspan=\"%1\">… %2 steps not shown …</td></tr>").arg(mean ? 5 : 4).arg(n - 2 * keep);
            i = n - keep;
        }
        const StepPoint& p = data.steps[i];
        h += QStringLiteral("<tr><td class=\"num\">%1</td><td class=\"num\">%2</td><td class=\"num\">%3</td><td class=\"num\">%4</td>")
                 .arg(p.step < 0 ? QStringLiteral("none") : QString::number(p.step))
                 .arg(p.count)
                 .arg(p.sequences)
                 .arg(std::isnan(p.value) ? QStringLiteral("&#8212;") : reportNumber(p.value));
        if (mean)
            h += QStringLiteral("<td class=\"num\">%1</td>")
                     .arg(std::isnan(p.lo) ? QStringLiteral("&#8212;")
                                           : QStringLiteral("[%1, %2]").arg(reportNumber(p.lo), reportNumber(p.hi)));
        h += QStringLiteral("</tr>");
    }
    h += QStringLiteral("</table>");
    h += QStringLiteral("<h3>Worst tokens the summary kept</h3>");
    if (data.worst.empty())
        return h + QStringLiteral("<p>None.</p>");
    h += tableOpen(f, QStringLiteral("worst")) +
         QStringLiteral("<thead><tr><th>%1</th><th>sequence id</th><th>position</th><th>step</th></tr></thead>").arg(esc(metric));
    for (const WorstEntry& w : data.worst)
        h += QStringLiteral("<tr><td class=\"num\">%1</td><td>%2</td><td class=\"num\">%3</td><td class=\"num\">%4</td></tr>")
                 .arg(reportNumber(w.value), esc(w.id), w.position >= 0 ? QString::number(w.position) : QStringLiteral("(sequence)"),
                      w.step >= 0 ? QString::number(w.step) : QStringLiteral("&#8212;"));
    h += QStringLiteral("</table><p class=\"meta\">The tokens themselves are not in the summary: they are in its inputs "
                        "(listed under Run), where the window's drill-down shows them.</p>");
    return h;
}

}  // namespace kcx::ui
