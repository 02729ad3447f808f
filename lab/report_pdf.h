// The PDF report, through Qt 6 Gui (QTextDocument + QPdfWriter); built only with Qt 6 Gui.
#pragma once

#include "lab/report.h"

#include <string>

class QTextDocument;

namespace mb::lab {

// Writes `report` to `path` as an A4 PDF: the same sections as the HTML report, charts
// painted from the same layout (report_chart.h). Needs a QGuiApplication: when the
// process has none (the CLI) it creates one for the call, on the offscreen platform
// unless QT_QPA_PLATFORM says otherwise. Call from the thread that owns (or may create)
// the application object. Throws std::runtime_error when the file cannot be written
// (AtomicFileError, with the OS's reason); the file is written whole or not at all.
void writeReportPdf(const Report& report, const std::string& path);

// The PDF's document: the rich-text report with its charts painted as image resources
// (the GUI's preview shows exactly this). Needs a QGuiApplication.
void fillReportDocument(QTextDocument& doc, const Report& report);

} // namespace mb::lab
