// prepareReport(): everything the report needs that takes time, on any thread.
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <map>

#include "core/base/sha256.h"
#include "core/heatmap/heatmap.h"
#include "core/metrics/derived_slices.h"
#include "core/evaluate/evaluator_summary.h"
#include "ui/heatmap/clause_lens.h"
#include "ui/heatmap/summary_grid_paint.h"
#include "ui/report/report.h"
#include "ui/report/report_internal.h"

namespace kcx::ui {

std::string ReportSignoff::statusText() const {
    if (!record)
        return "unreadable";
    if (verification.verified())
        return "verified";
    if (verification.untrustedSigner()) {
        std::string also;
        for (const auto& d : verification.differing())
            if (d != "key")
                also += (also.empty() ? "; " : ", ") + d;
        return "untrusted signer" + (also.empty() ? std::string() : also + " changed");
    }
    std::string text = verification.differingText();
    return "stale: " + text + (verification.differing().size() == 1 ? " differs" : " differ");
}

std::string reportMetric(const Contract& contract) {
    for (const Clause& c : contract.clauses) {
        if (c.family != Family::Numerical && c.family != Family::Statistical)
            continue;
        const MetricInfo* m = findMetric(c.metric);
        if (m && m->level == MetricLevel::Token)
            return c.metric;
    }
    return "abs_log_ratio";
}

std::vector<std::string> signoffsBesideContract(const std::string& contractPath) {
    if (contractPath.empty())
        return {};
    const QFileInfo info(QString::fromStdString(contractPath));
    const QString suffix = info.suffix().toLower();
    if (suffix != QLatin1String("yaml") && suffix != QLatin1String("yml") && suffix != QLatin1String("json"))
        return {};
    const QString name = info.completeBaseName();   // NAME of NAME.yaml
    QDir dir = info.absoluteDir();
    QStringList found;
    const QString exact = name + QStringLiteral(".signoff.json");
    for (const QString& f : dir.entryList({exact, name + QStringLiteral(".*.signoff.json")}, QDir::Files, QDir::Name))
        found << f;
    std::sort(found.begin(), found.end());
    found.removeDuplicates();
    std::vector<std::string> out;
    const QString prefix = info.path();   // as the user wrote it (relative stays relative)
    for (const QString& f : found)
        out.push_back(QDir(prefix).filePath(f).toStdString());
    return out;
}

namespace {

// Checks each record against the report's contract text, run file and results; a record
// of another stage is compared with an evaluation at its stage.
std::vector<ReportSignoff> verifySignoffs(const ReportInput& in,
                                          const std::function<Evaluation(const EvaluateOptions&)>& evaluate,
                                          const std::string& contractSha, const std::string& runSha) {
    std::vector<ReportSignoff> out;
    std::map<std::string, EvaluatedNow> byStage;   // stage -> what evaluating there says
    std::map<std::string, std::string> stageError;
    byStage[in.evaluation.stage] = evaluatedNow(in.evaluation);
    for (const std::string& path : in.signoffPaths) {
        ReportSignoff s;
        s.path = path;
        try {
            s.record = readSignoff(path);
        } catch (const std::exception& e) {
            s.error = e.what();
            out.push_back(std::move(s));
            continue;
        }
        const SignoffRecord& r = *s.record;
        SignoffNow now;
        try {
            now.trust = loadTrust();   // a record by an unknown key is not "verified" in the report either
        } catch (const std::exception& e) {
            now.trust.note = e.what();
        }
        now.contractSha256 = contractSha;
        now.contractName = in.contractPath.empty() ? std::string("the contract") : in.contractPath;
        if (!runSha.empty()) {
            now.runSha256 = runSha;
            now.runName = in.runPath;
        }
        if (!byStage.count(r.stage) && !stageError.count(r.stage) && in.contract) {
            try {
                EvaluateOptions options;
                options.stage = r.stage;
                byStage[r.stage] = evaluatedNow(evaluate(options));
            } catch (const std::invalid_argument& e) {
                stageError[r.stage] = e.what();
            }
        }
        if (stageError.count(r.stage)) {
            now.resultsError = stageError[r.stage];
        } else if (byStage.count(r.stage)) {
            applyEvaluated(now, byStage[r.stage]);
        }
        s.verification = verifySignoff(r, now);
        out.push_back(std::move(s));
    }
    return out;
}

// The thresholds of every clause on `metric` that are values of it (at most four).
std::vector<ValueLine> linesOn(const Contract& contract, const std::string& metric) {
    std::vector<ValueLine> lines;
    for (const Clause& c : contract.clauses)
        if ((c.family == Family::Numerical || c.family == Family::Statistical) && c.metric == metric)
            for (ValueLine& l : valueLines(c))
                if (lines.size() < 4)
                    lines.push_back(std::move(l));
    return lines;
}

// The clause the heatmap shows: the first failing numerical or statistical clause on the
// metric, else the first on it (nullptr when none).
const Clause* lensClauseOf(const ReportInput& in, const std::string& metric) {
    auto fails = [&](const Clause& c) {
        return std::any_of(in.evaluation.results.begin(), in.evaluation.results.end(),
                           [&](const Result& r) { return r.clause == c.id && r.status == Status::Fail; });
    };
    const Clause* lensClause = nullptr;
    for (const Clause& c : in.contract->clauses)
        if (c.metric == metric && (c.family == Family::Numerical || c.family == Family::Statistical) &&
            (!lensClause || (fails(c) && !fails(*lensClause))))
            lensClause = &c;
    return lensClause;
}

void barClausesOf(const ReportInput& in, ReportData& data) {
    for (const Clause& c : in.contract->clauses) {
        if (c.perSlice.empty() || (c.family != Family::Numerical && c.family != Family::Statistical))
            continue;
        const bool hasResults = std::any_of(in.evaluation.results.begin(), in.evaluation.results.end(),
                                            [&](const Result& r) { return r.clause == c.id; });
        if (hasResults)
            data.barClauses.push_back(c.id);
    }
}

std::string hashRun(const ReportInput& in, ReportData& data) {
    std::string runSha = in.runSha256;
    if (runSha.empty() && !in.runPath.empty()) {
        try {
            runSha = sha256File(in.runPath);
        } catch (const std::exception& e) {
            data.notes.push_back("The run file could not be hashed: " + std::string(e.what()));
        }
    }
    return runSha;
}

// A summary's report: its grid as the heatmap, with the clause's statistic and limit.
ReportData prepareSummaryReport(const ReportInput& in, ReportData data, const Progress& progress) {
    const RunSummary& s = *in.summary;
    const std::vector<std::string> metrics = summaryMetrics(s);
    if (std::find(metrics.begin(), metrics.end(), data.metric) == metrics.end()) {
        data.notes.push_back("No heatmap or series over steps: the summary has no value of " + data.metric + ".");
    } else {
        const Clause* lens = lensClauseOf(in, data.metric);
        CellStatSpec stat;
        SummaryGridStyle style;
        if (lens && lens->family == Family::Numerical && lens->aggregate) {
            if (lens->aggregate->kind == Aggregate::Kind::Max)
                stat.stat = CellStat::Max;
            else if (lens->aggregate->kind == Aggregate::Kind::Quantile)
                stat = {CellStat::Quantile, lens->aggregate->q};
        }
        const bool ownStatistic = lens && ((lens->family == Family::Numerical && lens->aggregate &&
                                            (lens->aggregate->kind == Aggregate::Kind::Max ||
                                             lens->aggregate->kind == Aggregate::Kind::Quantile ||
                                             lens->aggregate->kind == Aggregate::Kind::Mean)) ||
                                           (lens->family == Family::Statistical && lens->test == Clause::Test::Mean));
        if (ownStatistic) {
            if (lens->max)
                style.markAbove = lens->max->value;
            if (lens->min)
                style.markBelow = lens->min->value;
        }
        const std::vector<std::string> keys = summaryRowKeys(s);
        std::string rowKey;
        if (lens && std::find(keys.begin(), keys.end(), lens->perSlice) != keys.end())
            rowKey = lens->perSlice;
        else if (!keys.empty())
            rowKey = keys.front();   // "step" when there are several
        const SummaryGrid grid = summaryGrid(s, data.metric, rowKey, std::nullopt, stat);
        ReportFigure fig;
        fig.id = "heatmap";
        fig.title = summaryGridTitle(grid);
        fig.caption = QStringLiteral("From the summary's cells over every step: counts, means and maxima exact, quantiles "
                                     "from its sketch (within 1 %%). The first column is every position; the others are "
                                     "the position buckets.%1")
                          .arg(style.markAbove || style.markBelow
                                   ? QStringLiteral(" Outlined: cells beyond the limit of %1.").arg(QString::fromStdString(lens->id))
                                   : QString());
        fig.caption.replace(QStringLiteral("%%"), QStringLiteral("%"));
        fig.image = summaryGridImage(grid, QSize(kFigureWidth, std::clamp(70 + kSummaryRowHeight * int(grid.rowCount() + 1), 160, 2 * kFigureHeight)),
                                     fig.title, style);
        data.figures.push_back(std::move(fig));
        data.stepsStat = stat;
        data.steps = summarySteps(s, data.metric, "", "", -1, stat);
        data.worst = summaryWorst(s, data.metric, "", "", -1, std::nullopt);
    }
    report(progress, 0.6);
    barClausesOf(in, data);
    const std::string runSha = hashRun(in, data);
    report(progress, 0.85);
    data.runSha256 = runSha;
    data.contractSha256 = in.contractSha256.empty() ? sha256Hex(in.contractText) : in.contractSha256;
    data.signoffs = verifySignoffs(in, [&](const EvaluateOptions& o) { return evaluateContractOnSummary(*in.contract, s, o); },
                                   data.contractSha256, runSha);
    report(progress, 1.0);
    return data;
}

}  // namespace

ReportData prepareReport(const ReportInput& in, const Progress& progress) {
    ReportData data;
    data.generatedAt = utcNow();
    if ((!in.run && !in.summary) || !in.contract)
        throw std::invalid_argument("a report needs a run (or a summary) and a contract");
    if (in.summary) {
        data.metric = in.metric.empty() ? reportMetric(*in.contract) : in.metric;
        return prepareSummaryReport(in, std::move(data), progress);
    }
    auto stage = [&](double from, double to) -> Progress {
        if (!progress)
            return {};
        return [=](double f) { return progress(from + (to - from) * f); };
    };
    MetricOptions options;
    options.ppoClip = in.contract->bounds.ppoClip;
    const std::shared_ptr<MetricEngine> engine = in.engine ? in.engine : std::make_shared<MetricEngine>(in.run, options);

    data.metric = in.metric.empty() ? reportMetric(*in.contract) : in.metric;
    const MetricInfo* info = findMetric(data.metric);
    std::shared_ptr<const MetricValues> values;
    if (!info || info->level != MetricLevel::Token) {
        data.notes.push_back("No heatmap, histogram or position chart: " + data.metric + " is not a per-token metric.");
    } else {
        values = engine->get(data.metric, stage(0.0, 0.4));
        if (!values->supported()) {
            data.notes.push_back("No heatmap, histogram or position chart: the run lacks what " + data.metric +
                                 " needs (" + info->needs + ").");
            values.reset();
        }
    }
    report(progress, 0.4);
    if (values) {
        const std::vector<ValueLine> lines = linesOn(*in.contract, data.metric);
        // The heatmap shows the clause the metric was chosen for as the window shows a
        // selected clause: its own statistic over its scope, marked against its limit. The
        // first failing clause on the metric, else the first clause on it.
        const Clause* lensClause = lensClauseOf(in, data.metric);
        std::optional<ClauseLens> lens;
        if (lensClause)
            lens = clauseLens(*lensClause, *engine);
        const DerivedLookup derived = [engine](const std::string& key) { return engine->derived().get(key); };
        data.figures.push_back(heatmapFigure(in.run, values, data.metric, lens ? &*lens : nullptr, derived, stage(0.4, 0.6)));
        data.histogram = computeHistogram(values->values, 80, false, stage(0.6, 0.7));
        data.histogramLines = lines;
        const int key = in.run->slices.keys.empty() ? -1 : 0;
        data.positions = computePositionMeans(*in.run, values->values, key, 120, stage(0.7, 0.8));
        data.positionsKey = key >= 0 ? in.run->slices.keys[0] : std::string();
    }
    barClausesOf(in, data);
    const std::string runSha = hashRun(in, data);
    report(progress, 0.85);
    data.runSha256 = runSha;
    data.contractSha256 = in.contractSha256.empty() ? sha256Hex(in.contractText) : in.contractSha256;
    data.signoffs = verifySignoffs(
        in,
        [&](const EvaluateOptions& o) {
            Evaluator evaluator(engine, *in.contract);
            return evaluator.evaluate(o);
        },
        data.contractSha256, runSha);
    report(progress, 1.0);
    return data;
}

}  // namespace kcx::ui
