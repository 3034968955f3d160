// The review report (docs/report.md): one self-contained HTML file, or a PDF, with the run
// and kernel identities, the contract text, the verdict and each stage's action, the
// results, the heatmap and the key charts as pictures, the bound chain, and the sign-off
// records with their status. `kcx report` and File > Export report write it.
//
// Three steps, so that the window can keep the slow ones off the GUI thread:
//   prepareReport()        any thread: metric values, the heatmap picture, histogram and
//                          position data, sign-off verification (may re-evaluate);
//   renderReportFigures()  GUI thread: the Qt Charts pictures (Qt Charts is not
//                          thread-safe), each a QImage of a fixed size;
//   reportHtml() / writeReportFile()  any thread: the documents.
// writeReport() does all three on the calling (GUI) thread.
#pragma once

#include <QImage>
#include <QString>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/evaluate/evaluator.h"
#include "core/formats/run.h"
#include "core/metrics/metrics.h"
#include "core/signoff/signoff.h"
#include "core/signoff/signoff_verify.h"
#include "core/summary/summary_views.h"
#include "ui/charts/chart_data.h"

namespace kcx::ui {

// What to report. The evaluation must be of `contract` against `run` (or `summary`).
struct ReportInput {
    std::shared_ptr<const Run> run;
    // A summary (SPEC 10) in place of the run: the heatmap is the summary's grid of slice
    // values (or steps) × position buckets, the charts give way to the metric over steps
    // and the worst tokens the summary kept.
    std::shared_ptr<const RunSummary> summary;
    std::string runPath;                    // "" for a generated run (the built-in demo)
    std::string runSha256;                  // of the run file; "" when there is no file
    std::string contractText;               // exactly the bytes the report shows and hashes
    std::string contractPath;               // "" when the contract has no file
    std::string contractSha256;             // sha256Hex(contractText) when empty
    std::shared_ptr<const Contract> contract;   // parsed from contractText (thresholds, stages)
    Evaluation evaluation;                  // at evaluation.stage
    std::vector<std::string> signoffPaths;  // records to list (see signoffsBesideContract)
    std::string metric;                     // heatmap and histogram metric; "" = chosen (reportMetric)
    std::shared_ptr<MetricEngine> engine;   // optional: reuses computed metrics
};

// One sign-off record and how it compares with this report's contract, run and results.
struct ReportSignoff {
    std::string path;
    std::optional<SignoffRecord> record;    // empty when the file could not be read
    std::string error;                      // why (names the file and the key)
    SignoffVerification verification;
    bool verified() const { return record && verification.verified(); }
    // "verified", "stale: contract, results differ", "unreadable"
    std::string statusText() const;
};

struct ReportFigure {
    std::string id;                         // file-name-safe: "heatmap", "histogram", ...
    QString title, caption;
    QImage image;
};

// What prepareReport() computed and renderReportFigures() drew.
struct ReportData {
    std::string metric;                     // the heatmap/histogram metric
    std::string generatedAt;                // UTC "YYYY-MM-DDTHH:MM:SSZ"
    std::string contractSha256, runSha256;  // as shown (the run's is "" without a file)
    std::vector<ReportSignoff> signoffs;
    std::vector<ReportFigure> figures;      // heatmap first, then the charts
    std::vector<std::string> notes;         // what could not be drawn, and why
    // Chart data (for renderReportFigures).
    std::optional<Histogram> histogram;
    std::vector<ValueLine> histogramLines;
    std::optional<PositionMeans> positions;
    std::string positionsKey;               // the slice key of the position lines
    std::vector<std::string> barClauses;    // per_slice clauses, in contract order
    // A summary's series over steps and worst tokens of `metric` over all tokens.
    CellStatSpec stepsStat;
    std::vector<StepPoint> steps;
    std::vector<WorstEntry> worst;
};

inline constexpr int kFigureWidth = 900;    // every figure is kFigureWidth x kFigureHeight
inline constexpr int kFigureHeight = 420;

// The metric the heatmap and histogram show: that of the first numerical or statistical
// clause on a per-token metric, else abs_log_ratio.
std::string reportMetric(const Contract& contract);

// The records kept beside a contract NAME.yaml (.yml, .json): NAME.signoff.json and
// NAME.*.signoff.json, sorted by file name.
std::vector<std::string> signoffsBesideContract(const std::string& contractPath);

// Any thread. Throws Cancelled when progress asks to stop.
ReportData prepareReport(const ReportInput& input, const Progress& progress = {});
// GUI thread (needs a QApplication): appends the chart figures to data.figures.
void renderReportFigures(const ReportInput& input, ReportData& data);

// The HTML report: valid HTML5, inline CSS, images as data: URIs, no external reference.
std::string reportHtml(const ReportInput& input, const ReportData& data);
// The same content laid out for QTextDocument (images as resources "kcx-figure:ID").
std::string reportDocumentHtml(const ReportInput& input, const ReportData& data);

// Writes FILE.html or FILE.pdf (by extension, case-insensitive) atomically. Any thread.
// Returns an error message naming the file, empty on success. pages (PDF) gets the count.
QString writeReportFile(const QString& path, const ReportInput& input, const ReportData& data,
                        int* pages = nullptr);
// prepareReport + renderReportFigures + writeReportFile on the calling (GUI) thread.
QString writeReport(const QString& path, const ReportInput& input, int* pages = nullptr);
// True for a path writeReportFile accepts (.html, .htm, .pdf).
bool isReportPath(const QString& path);

}  // namespace kcx::ui
