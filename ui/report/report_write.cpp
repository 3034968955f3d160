// Writing the report: the HTML file as it is, the PDF through QTextDocument on a
// QPdfWriter (A4, our own pagination with a footer on every page). Both are written
// atomically (QSaveFile: a temporary file in the same directory, renamed at the end).
#include <QAbstractTextDocumentLayout>
#include <QFileInfo>
#include <QFont>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextDocument>
#include <QUrl>

#include "core/base/safe_write.h"
#include "ui/report/report_internal.h"

namespace kcx::ui {

namespace {

constexpr int kPdfDpi = 96;   // document units are CSS pixels

QString saveError(const QString& path, const QSaveFile& file) {
    return QStringLiteral("%1: cannot write the report (%2)").arg(path, file.errorString());
}

QString writeHtml(const QString& path, const ReportInput& in, const ReportData& data) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return saveError(path, file);
    const std::string html = reportHtml(in, data);
    if (file.write(html.data(), qint64(html.size())) != qint64(html.size()) || !file.commit())
        return saveError(path, file);
    return {};
}

QString writePdf(const QString& path, const ReportInput& in, const ReportData& data, int* pages) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return saveError(path, file);
    const QString name = in.contract ? QString::fromStdString(in.contract->name + " " + in.contract->version).trimmed() : QString();
    {
        QPdfWriter writer(&file);
        writer.setResolution(kPdfDpi);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setPageMargins(QMarginsF(12, 10, 12, 10), QPageLayout::Millimeter);
        writer.setTitle(QStringLiteral("KCX report: %1").arg(name));
        writer.setCreator(QStringLiteral("KCX " KCX_VERSION));
        const QRectF page = writer.pageLayout().paintRectPixels(kPdfDpi);
        const qreal footer = 22;
        const QSizeF body(page.width(), page.height() - footer);

        QTextDocument doc;
        doc.documentLayout()->setPaintDevice(&writer);
        QFont font(QStringLiteral("DejaVu Sans"));
        font.setPointSizeF(8);
        doc.setDefaultFont(font);
        QTextOption option = doc.defaultTextOption();   // break lines between words only
        option.setWrapMode(QTextOption::WordWrap);
        doc.setDefaultTextOption(option);
        doc.setDocumentMargin(6);
        for (const ReportFigure& fig : data.figures)
            doc.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("kcx-figure:") + QString::fromStdString(fig.id)),
                            fig.image);
        doc.setHtml(QString::fromStdString(reportDocumentHtml(in, data)));
        doc.setPageSize(body);
        const int count = doc.pageCount();

        QPainter painter;
        if (!painter.begin(&writer))
            return QStringLiteral("%1: cannot write the report (the PDF could not be started)").arg(path);
        QFont small(QStringLiteral("DejaVu Sans"));
        small.setPointSizeF(7);
        for (int i = 0; i < count; ++i) {
            if (i > 0)
                writer.newPage();
            painter.save();
            painter.translate(0, -i * body.height());
            doc.drawContents(&painter, QRectF(QPointF(0, i * body.height()), body));
            painter.restore();
            painter.setFont(small);
            painter.setPen(QColor(0x66, 0x66, 0x66));
            const QRectF foot(0, body.height() + 6, body.width(), footer - 6);
            painter.drawLine(QPointF(0, body.height() + 3), QPointF(body.width(), body.height() + 3));
            painter.drawText(foot, Qt::AlignLeft | Qt::AlignVCenter,
                             QStringLiteral("KCX report: %1, stage %2, verdict %3")
                                 .arg(name, QString::fromStdString(in.evaluation.stage), QString(statusName(in.evaluation.verdict))));
            painter.drawText(foot, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("page %1 of %2").arg(i + 1).arg(count));
        }
        painter.end();
        if (pages)
            *pages = count;
    }
    if (!file.commit())
        return saveError(path, file);
    return {};
}

}  // namespace

bool isReportPath(const QString& path) {
    const QString s = QFileInfo(path).suffix().toLower();
    return s == QLatin1String("html") || s == QLatin1String("htm") || s == QLatin1String("pdf");
}

QString writeReportFile(const QString& path, const ReportInput& in, const ReportData& data, int* pages) {
    // A report written over the run, the contract or a record it lists would destroy the
    // very files it describes (issue 16): refused, as `kcx report` refuses it.
    std::vector<NamedInput> inputs{{"run", in.runPath}, {"contract", in.contractPath}};
    for (const auto& r : in.signoffPaths)
        inputs.push_back({"sign-off record", r});
    if (const std::string why = sameFileRefusal(path.toStdString(), inputs); !why.empty())
        return QString::fromStdString(why);
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("pdf"))
        return writePdf(path, in, data, pages);
    if (suffix == QLatin1String("html") || suffix == QLatin1String("htm"))
        return writeHtml(path, in, data);
    return QStringLiteral("%1: a report is .html or .pdf").arg(path);
}

QString writeReport(const QString& path, const ReportInput& in, int* pages) {
    if (!isReportPath(path))
        return QStringLiteral("%1: a report is .html or .pdf").arg(path);
    try {
        ReportData data = prepareReport(in);
        renderReportFigures(in, data);
        return writeReportFile(path, in, data, pages);
    } catch (const std::exception& e) {
        return QStringLiteral("%1: cannot make the report: %2").arg(path, QString::fromUtf8(e.what()));
    }
}

}  // namespace kcx::ui
