// The Report page: a run (and optionally a saved selection) as a selection report, previewed and exported.
#pragma once

#include "gui/store_client.h"

#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QPushButton;
class QTextBrowser;

namespace mb::gui {

// UI thread. The report model is built on the store thread (StoreClient::buildReport); the
// preview is the PDF's own document (same text, same painted charts); exports use the
// renderers the CLI uses (lab/report_render.h, lab/report_pdf.h). Widgets are named
// "report.<name>" (run, selection, build, preview, export_html, export_pdf, export_md,
// export_json, export_csv, status).
class ReportPage : public QWidget {
    Q_OBJECT
public:
    explicit ReportPage(StoreClient* store, QWidget* parent = nullptr);

    void refreshLists();
    // Builds the report of `runId` (or of the saved selection when > 0) and previews it.
    // Until that build succeeds there is no report to export (the buttons are disabled).
    void build(qint64 runId, qint64 selectionId = 0);
    const std::optional<lab::Report>& report() const { return m_report; }
    // Writes the current report; format "html", "pdf", "md", "json" or "csv". The text
    // formats are rendered and written on the store thread; the PDF here, as QPdfWriter
    // needs the application's thread. Either way the file is written whole or not at all
    // (an old file stays as it was), and exported(path) or exportFailed(message) follows,
    // also shown in the status line.
    void exportTo(const QString& format, const QString& path);

signals:
    void reportReady();
    void exported(const QString& path);
    void exportFailed(const QString& message);

private:
    StoreClient* m_store;
    QComboBox* m_run;
    QComboBox* m_selection;
    QTextBrowser* m_preview;
    QLabel* m_status;
    std::vector<QPushButton*> m_exports;
    qint64 m_runsRequest = 0, m_selectionsRequest = 0, m_buildRequest = 0;
    std::vector<qint64> m_exportRequests;
    std::optional<lab::Report> m_report;
};

} // namespace mb::gui
