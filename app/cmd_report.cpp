// `kcx report --contract C --run RUN --out FILE.html|FILE.pdf` (SPEC 6, docs/report.md):
// the review report. Exit 0 when written, 2 on input or usage errors. Runs on a
// QApplication (fonts, painting, Qt Charts) on the offscreen platform unless
// QT_QPA_PLATFORM says otherwise (main.cpp), so it needs no display.
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFileInfo>

#include <cstdio>
#include <set>

#include "core/base/printable.h"
#include "app/commands.h"
#include "app/common.h"
#include "core/base/sha256.h"
#include "core/contract/contract.h"
#include "core/evaluate/evaluator.h"
#include "core/metrics/metrics.h"
#include "core/signoff/signoff.h"
#include "ui/report/report.h"

namespace kcx::app {

int runReport(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Write the review report of a contract evaluated against a run: one self-contained HTML file\n"
        "(images embedded) or a PDF, with the run and kernel identities, the contract text, the verdict\n"
        "and each stage's action, the results, the heatmap and key charts, the bound chain, and the\n"
        "sign-off records (NAME.signoff.json and NAME.*.signoff.json beside contract NAME.yaml, and\n"
        "every --signoff) with their status.\n"
        "Exit codes: 0 written, 2 input or usage error.");
    p.addHelpOption();
    const QCommandLineOption contractOpt("contract", "The contract (YAML or JSON).", "C");
    const QCommandLineOption runOpt("run", "The run: .jsonl, .jsonl.gz or .safetensors, or a summary (kcx summarize).", "RUN");
    const QCommandLineOption outOpt("out", "The report: FILE.html or FILE.pdf.", "FILE");
    const QCommandLineOption stageOpt("stage", "The stage to decide the action for (default: the contract's first).",
                                      "S");
    const QCommandLineOption signoffOpt("signoff", "A sign-off record to list and check (repeatable).", "SIGNOFF.json");
    const QCommandLineOption metricOpt("metric",
                                       "The per-token metric of the heatmap and histogram (default: that of the "
                                       "first clause on a per-token metric).",
                                       "M");
    const QCommandLineOption quietOpt("quiet", "Print nothing but errors.");
    p.addOptions({contractOpt, runOpt, outOpt, stageOpt, signoffOpt, metricOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx report --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    for (const auto* o : {&contractOpt, &runOpt, &outOpt})
        if (!p.isSet(*o))
            return usageError("report needs --" + o->names().first() + " (see kcx report --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    if (moreThanOneRun(p.values(runOpt), "report"))
        return 2;
    const QString out = p.value(outOpt);
    if (!ui::isReportPath(out))
        return usageError(out + ": a report is FILE.html or FILE.pdf");
    {
        std::vector<NamedInput> inputs = {{"contract", p.value(contractOpt).toStdString()},
                                          {"run", p.value(runOpt).toStdString()}};
        for (const QString& r : p.values(signoffOpt))
            inputs.push_back({"sign-off record", r.toStdString()});
        if (refuseOutputOverInput(out, inputs))
            return 2;
    }
    const bool quiet = p.isSet(quietOpt);
    std::string metric = p.value(metricOpt).toStdString();
    if (p.isSet(metricOpt)) {
        const MetricInfo* m = findMetric(metric);
        if (!m)
            return usageError("--metric: unknown metric '" + p.value(metricOpt) + "' (kcx metrics lists them)");
        if (m->level != MetricLevel::Token)
            return usageError("--metric: " + p.value(metricOpt) + " is not a per-token metric");
    }
    QElapsedTimer clock;
    clock.start();

    ui::ReportInput in;
    try {
        auto contract = std::make_shared<Contract>(loadContract(p.value(contractOpt).toStdString()));
        in.contractText = contract->text;
        in.contractPath = p.value(contractOpt).toStdString();
        in.contractSha256 = sha256Hex(contract->text);
        in.contract = std::move(contract);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    // Explicit records must be readable; malformed records found beside the contract are
    // listed in the report as unreadable instead.
    std::set<std::string> seen;
    for (const QString& path : p.values(signoffOpt)) {
        try {
            readSignoff(path.toStdString());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
            return 2;
        }
    }
    for (const std::string& path : ui::signoffsBesideContract(in.contractPath))
        if (seen.insert(QFileInfo(QString::fromStdString(path)).absoluteFilePath().toStdString()).second)
            in.signoffPaths.push_back(path);
    for (const QString& path : p.values(signoffOpt))
        if (seen.insert(QFileInfo(path).absoluteFilePath().toStdString()).second)
            in.signoffPaths.push_back(path.toStdString());

    const EvaluationData data = openRunOrSummary(p.value(runOpt), quiet);
    if (!data)
        return 2;
    in.run = data.run;
    in.summary = data.summary;
    in.runPath = p.value(runOpt).toStdString();
    try {
        in.runSha256 = sha256File(in.runPath);
        EvaluateOptions eo;
        eo.stage = p.value(stageOpt).toStdString();
        if (in.summary) {
            in.evaluation = evaluateContractOnSummary(*in.contract, *in.summary, eo);
        } else {
            MetricOptions options;
            options.ppoClip = in.contract->bounds.ppoClip;
            in.engine = std::make_shared<MetricEngine>(in.run, options);
            Evaluator evaluator(in.engine, *in.contract);
            in.evaluation = evaluator.evaluate(eo, terminalProgress("evaluating", quiet));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    in.metric = metric;

    int pages = 0;
    const QString error = ui::writeReport(out, in, &pages);
    if (!error.isEmpty()) {
        std::fprintf(stderr, "kcx: %s\n", qPrintable(error));
        return 2;
    }
    if (!quiet) {
        const QString what = pages ? QString(" (%1 pages)").arg(pages) : QString();
        std::printf("wrote %s%s in %.1f s: verdict %s, action at %s: %s; %zu results, %zu sign-off records\n",
                    qPrintable(out), qPrintable(what), double(clock.elapsed()) / 1000.0, statusName(in.evaluation.verdict),
                    in.evaluation.stage.c_str(), actionName(in.evaluation.action), in.evaluation.results.size(),
                    in.signoffPaths.size());
    }
    return 0;
}

}  // namespace kcx::app
