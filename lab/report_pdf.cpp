// The PDF report: the rich-text HTML in a QTextDocument, charts painted as images, QPdfWriter.
#include "lab/report_pdf.h"

#include "lab/atomic_file.h"
#include "lab/report_chart.h"
#include "lab/report_render.h"

#include <QBuffer>
#include <QFont>
#include <QFontMetricsF>
#include <QGuiApplication>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QPolygonF>
#include <QTextDocument>
#include <QUrl>
#include <QtGlobal>

#include <memory>
#include <stdexcept>

namespace mb::lab {

namespace {

// Charts are painted at twice their layout size so they stay sharp in print.
constexpr double kScale = 2.0;

// In a process that had no application (the CLI), Qt's notes about its own runtime
// ("QStandardPaths: XDG_RUNTIME_DIR not set ...") are not the user's business; other
// messages pass through.
void quietQtSetupNotes(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (message.startsWith("QStandardPaths:")) return;
    qt_message_output(type, context, message);
}

QImage paintChart(const ChartLayout& l) {
    QImage img(static_cast<int>(l.width * kScale), static_cast<int>(l.height * kScale), QImage::Format_ARGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    p.scale(kScale, kScale);
    for (const auto& g : l.lines) {
        p.setPen(QPen(QColor(g.grid ? "#e4e4e4" : "#444444"), 1));
        p.drawLine(QPointF(g.x1, g.y1), QPointF(g.x2, g.y2));
    }
    p.setPen(Qt::NoPen);
    for (const auto& r : l.rects) {
        p.setBrush(QColor(chartColour(r.colour)));
        p.drawRect(QRectF(r.x, r.y, r.w, r.h));
    }
    p.setBrush(Qt::NoBrush);
    for (const auto& line : l.polylines) {
        p.setPen(QPen(QColor(chartColour(line.colour)), 1.5));
        QPolygonF poly;
        for (const auto& [x, y] : line.points) poly << QPointF(x, y);
        p.drawPolyline(poly);
    }
    p.setPen(QColor("#222222"));
    for (const auto& t : l.texts) {
        QFont f("DejaVu Sans");
        f.setPixelSize(static_cast<int>(t.size));
        p.setFont(f);
        const QString text = QString::fromStdString(t.text);
        const double w = QFontMetricsF(f).horizontalAdvance(text);
        const double dx = t.anchor == ChartLayout::Text::Anchor::Start ? 0 : t.anchor == ChartLayout::Text::Anchor::Middle ? -w / 2 : -w;
        p.save();
        p.translate(t.x, t.y);
        if (t.vertical) p.rotate(-90);
        p.drawText(QPointF(dx, 0), text);
        p.restore();
    }
    return img;
}

} // namespace

void fillReportDocument(QTextDocument& doc, const Report& report) {
    QFont base("DejaVu Sans");
    base.setPointSizeF(8.5);
    doc.setDefaultFont(base);
    for (const auto& c : report.charts)
        doc.addResource(QTextDocument::ImageResource, QUrl(QString::fromStdString("chart:" + c.id)),
                        paintChart(layoutChart(c)));
    doc.setHtml(QString::fromStdString(renderHtml(report, {.inlineSvg = false, .richTextSubset = true})));
}

void writeReportPdf(const Report& report, const std::string& path) {
    std::unique_ptr<QGuiApplication> app;
    if (!QCoreApplication::instance()) {
        if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        static int argc = 1;
        static char name[] = "modebench-report";
        static char* argv[] = {name, nullptr};
        qInstallMessageHandler(quietQtSetupNotes);
        app = std::make_unique<QGuiApplication>(argc, argv);
    } else if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance())) {
        throw std::runtime_error("PDF reports need a QGuiApplication, and this process runs a plain QCoreApplication");
    }
    QTextDocument doc;
    fillReportDocument(doc, report);

    // Printed into memory, then written beside the target and renamed: QPdfWriter reports no
    // write errors, so writing the file ourselves is what lets a failed write (disk full, a
    // size limit) be an error that leaves no truncated PDF behind.
    QBuffer pdf;
    pdf.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&pdf);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
        writer.setTitle(QString::fromStdString(report.title));
        writer.setCreator("ModeBench");
        doc.print(&writer);
    }
    const QByteArray& bytes = pdf.data();
    if (bytes.isEmpty()) throw std::runtime_error("writing " + path + " produced no PDF");
    writeFileAtomically(path, std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
}

} // namespace mb::lab
