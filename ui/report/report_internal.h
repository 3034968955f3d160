// Shared by the report's source files (ui/report_*.cpp); not part of the report's API.
#pragma once

#include <QString>

#include <memory>
#include <string>

#include "core/heatmap/heatmap.h"
#include "ui/report/report.h"

QT_BEGIN_NAMESPACE
class QChart;
class QGraphicsScene;
QT_END_NAMESPACE

namespace kcx::ui {

struct ClauseLens;

// The divergence heatmap as a kFigureWidth x kFigureHeight picture with row labels, a
// position axis and a colour bar. With a clause's lens (clause_lens.h), cells are the
// clause's own statistic over its scope, rows its slice key, and cells breaking its limit
// are outlined; without one, cells are the mean of `metric` by the run's first slice key
// (every sequence when it has none), unmarked. Any thread (QPainter on a QImage).
ReportFigure heatmapFigure(std::shared_ptr<const Run> run, std::shared_ptr<const MetricValues> values,
                           const std::string& metric, const ClauseLens* lens, const DerivedLookup& derived,
                           const Progress& progress);

// Renders a chart that lives in `scene` into a size.width() x size.height() image
// (device pixel ratio 1). GUI thread.
QImage renderChartImage(QGraphicsScene* scene, QChart* chart, QSize size);

// Text for people: 4 significant digits (as the window's results table).
QString reportNumber(double v);
// "<= 0.3", "[-0.02, 0.02]", "share <= 0.005 above level 0.15": what a result is compared
// with, taken from its clause when the result carries no threshold (too few samples).
QString reportThreshold(const Result& r, const Contract& contract);
QString reportSlice(const Result& r);   // "task=math" or ""

// ---- HTML pieces (report_html*.cpp) ------------------------------------------------------
// The browser file and the QTextDocument of the PDF share the text; they differ in how
// tables, images and a few styles are written.
struct HtmlFlavour {
    bool document = false;          // QTextDocument (PDF) rather than a browser
    int imageWidth = kFigureWidth;  // display width of a figure, in CSS pixels
};
QString esc(const std::string& s);
QString esc(const QString& s);
// <table ...> with the class; QTextDocument gets border and padding attributes.
QString tableOpen(const HtmlFlavour& f, const QString& cls, bool fullWidth = false);
// `colour` mixed with white: 0 = white, 1 = the colour. "#rrggbb".
QString tint(const QColor& colour, double strength);
QString identitiesHtml(const ReportInput& in, const ReportData& data, const HtmlFlavour& f);
QString boundsHtml(const ReportInput& in, const HtmlFlavour& f);
QString signoffsHtml(const ReportInput& in, const ReportData& data, const HtmlFlavour& f);
// A summary's metric over steps and its worst tokens ("" without a summary).
QString summaryHtml(const ReportInput& in, const ReportData& data, const HtmlFlavour& f);

}  // namespace kcx::ui
