// `kcx calibrate`: propose a contract from a trusted run, then check it both ways
// (docs/slices.md). Exit 0 when it passes the good run and fails every bad run, 1 when it
// cannot tell some bad run from the good one (or the good run does not pass), 2 on input
// or usage errors.
#include <QCommandLineParser>

#include <cstdio>

#include "core/base/printable.h"
#include "app/commands.h"
#include "app/common.h"
#include "app/table.h"
#include "core/discover/calibrate.h"

namespace kcx::app {

int runCalibrate(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        "Propose contract thresholds from a run you trust (each metric's tail quantile and mean,\n"
        "widened by a safety margin), write the contract, and check it both ways: it must pass\n"
        "the good run and fail each bad run.\n"
        "Exit codes: 0 the contract separates them, 1 it cannot tell some bad run from the good\n"
        "one, 2 input or usage error.");
    p.addHelpOption();
    const QCommandLineOption goodOpt("good", "The trusted run.", "RUN");
    const QCommandLineOption badOpt("bad", "A run the contract must fail (repeatable).", "RUN");
    const QCommandLineOption outOpt("out", "Where to write the contract (YAML), or '-' for stdout.", "C.yaml");
    const QCommandLineOption quantileOpt("quantile", "The tail quantile, in (0.5, 1) (default 0.999).", "Q");
    const QCommandLineOption marginOpt("margin", "Safety margin, a share of the observed value (default 0.1).", "M");
    const QCommandLineOption sliceOpt("per-slice", "Bound every slice of this key (labeled or derived.*).", "KEY");
    const QCommandLineOption metricsOpt("metrics", "Comma-separated metrics to bound (default: all that apply).",
                                        "M1,M2");
    const QCommandLineOption nameOpt("name", "The contract's name (default: calibrated).", "NAME");
    const QCommandLineOption quietOpt("quiet", "Print nothing but errors; the exit code says the outcome.");
    p.addOptions({goodOpt, badOpt, outOpt, quantileOpt, marginOpt, sliceOpt, metricsOpt, nameOpt, quietOpt});
    if (!p.parse(args))
        return usageError(p.errorText() + " (see kcx calibrate --help)");
    if (p.isSet("help")) {
        std::printf("%s", qPrintable(p.helpText()));
        return 0;
    }
    if (!p.isSet(goodOpt) || !p.isSet(outOpt))
        return usageError("calibrate needs --good RUN and --out C.yaml (see kcx calibrate --help)");
    if (!p.positionalArguments().isEmpty())
        return usageError("unexpected argument '" + p.positionalArguments().first() + "'");
    CalibrateOptions o;
    auto number = [&](const QCommandLineOption& opt, double& out) {
        if (!p.isSet(opt))
            return true;
        bool ok = false;
        out = p.value(opt).toDouble(&ok);
        if (!ok)
            usageError("--" + opt.names().first() + " needs a number, found '" + p.value(opt) + "'");
        return ok;
    };
    if (!number(quantileOpt, o.quantile) || !number(marginOpt, o.margin))
        return 2;
    o.perSlice = p.value(sliceOpt).toStdString();
    for (const QString& m : p.value(metricsOpt).split(',', Qt::SkipEmptyParts))
        o.metrics.push_back(m.trimmed().toStdString());
    if (p.isSet(nameOpt))
        o.name = p.value(nameOpt).toStdString();
    const bool quiet = p.isSet(quietOpt);
    const bool toStdout = p.value(outOpt) == "-";
    std::vector<NamedInput> inputs = {{"run (--good)", p.value(goodOpt).toStdString()}};
    for (const QString& b : p.values(badOpt))
        inputs.push_back({"run (--bad)", b.toStdString()});
    if (refuseOutputOverInput(p.value(outOpt), inputs))
        return 2;

    const auto good = openRun(p.value(goodOpt), quiet);
    if (!good)
        return 2;
    o.source = good->path;
    std::vector<std::shared_ptr<const Run>> bad;
    const QStringList badPaths = p.values(badOpt);
    for (const QString& b : badPaths) {
        auto r = openRun(b, quiet);
        if (!r)
            return 2;
        bad.push_back(std::move(r));
    }
    Calibration cal;
    try {
        cal = calibrate(good, bad, o, terminalProgress("calibrating", quiet || toStdout));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kcx: %s\n", kcx::printable(e.what()).c_str());
        return 2;
    }
    if (!writeOutput(p.value(outOpt), cal.yaml))
        return 2;
    const int code = cal.separates() ? 0 : 1;
    if (quiet || toStdout)
        return code;

    std::printf("wrote %s: %zu clauses from %s (p%g tail and mean, margin %g%%)\n",
                qPrintable(p.value(outOpt)), cal.contract.clauses.size(), good->path.c_str(), 100 * o.quantile,
                100 * o.margin);
    for (const auto& n : cal.notes)
        std::printf("  left out %s\n", n.c_str());
    std::vector<std::string> header = {"clause", "metric", "aggregate", "threshold", "slice", "good"};
    for (size_t i = 0; i < bad.size(); ++i)
        header.push_back("bad " + std::to_string(i + 1));
    TextTable t(header);
    for (const auto& row : cal.table) {
        const Clause* c = cal.contract.find(row.clause);
        std::string threshold = "-";
        if (c && c->max)
            threshold = "<= " + human(c->max->value);
        else if (c && c->min)
            threshold = ">= " + human(c->min->value);
        else if (c && c->maxNonfiniteFraction)
            threshold = "<= " + human(c->maxNonfiniteFraction->value);
        std::vector<std::string> cells = {row.clause, c ? c->metric : "", c && c->aggregate ? c->aggregate->text
                                                                                         : "nonfinite_fraction",
                                          threshold, row.slice.empty() ? "-" : row.slice, statusName(row.good)};
        for (Status s : row.bad)
            cells.push_back(s == Status::Fail ? "caught" : statusName(s));
        t.addRow(cells);
    }
    std::printf("\n%s\n", t.render().c_str());
    std::printf("good run %s: %s\n", good->path.c_str(),
                cal.goodPasses() ? "passes" : (std::string("does not pass (verdict ") + statusName(cal.good.verdict) + ")").c_str());
    for (size_t i = 0; i < bad.size(); ++i) {
        std::string by;
        std::string last;
        for (const auto& row : cal.table)
            if (row.bad[i] == Status::Fail && row.clause != last) {   // rows of one clause are adjacent
                by += (by.empty() ? "" : ", ") + row.clause + (row.slice.empty() ? "" : " [" + row.slice + "]");
                last = row.clause;
            }
        if (cal.badFails(i))
            std::printf("bad run %zu %s: fails (caught by %s)\n", i + 1, bad[i]->path.c_str(), by.c_str());
        else
            std::printf("bad run %zu %s: NOT told apart from the good run (verdict %s): no clause fails on it\n", i + 1,
                        bad[i]->path.c_str(), statusName(cal.bad[i].verdict));
    }
    std::printf("%s\n", code == 0 ? (bad.empty() ? "the contract passes its good run (give --bad runs to check that it "
                                                   "catches them)"
                                                 : "the contract separates the good run from every bad run")
                                  : "the contract cannot tell them apart");
    return code;
}

}  // namespace kcx::app
