// ReportPage: pick, build on the store thread, preview as a QTextDocument, export in five formats.
#include "gui/report_page.h"

#include "lab/report_pdf.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>

namespace mb::gui {

ReportPage::ReportPage(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    setObjectName(QStringLiteral("page.report"));
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_run = new QComboBox;
    m_run->setObjectName(QStringLiteral("report.run"));
    m_selection = new QComboBox;
    m_selection->setObjectName(QStringLiteral("report.selection"));
    auto* buildButton = new QPushButton(tr("Build"));
    buildButton->setObjectName(QStringLiteral("report.build"));
    bar->addWidget(new QLabel(tr("Run")));
    bar->addWidget(m_run, 2);
    bar->addWidget(new QLabel(tr("Selection")));
    bar->addWidget(m_selection, 1);
    bar->addWidget(buildButton);
    bar->addSpacing(20);
    const std::pair<const char*, const char*> formats[] = {
        {"html", "HTML"}, {"pdf", "PDF"}, {"md", "Markdown"}, {"json", "JSON"}, {"csv", "CSV"}};
    for (const auto& [key, title] : formats) {
        auto* b = new QPushButton(tr("%1…").arg(QString::fromLatin1(title)));
        b->setObjectName(QStringLiteral("report.export_") + QLatin1String(key));
        b->setEnabled(false);
        bar->addWidget(b);
        m_exports.push_back(b);
        const QString format = QString::fromLatin1(key);
        connect(b, &QPushButton::clicked, this, [this, format, title] {
            const QString f = QFileDialog::getSaveFileName(this, tr("Export %1").arg(QString::fromLatin1(title)),
                                                           QStringLiteral("report.%1").arg(format));
            if (f.isEmpty()) return;
            exportTo(format, f);
        });
    }
    layout->addLayout(bar);
    m_preview = new QTextBrowser;
    m_preview->setObjectName(QStringLiteral("report.preview"));
    m_preview->setPlaceholderText(tr("Choose a run (and a saved selection, for the recommendation, its trace and the "
                                     "migration state) and press Build."));
    layout->addWidget(m_preview, 1);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("report.status"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(buildButton, &QPushButton::clicked, this, [this] {
        build(m_run->currentData().toLongLong(), m_selection->currentData().toLongLong());
    });
    connect(m_store, &StoreClient::runsListed, this, [this](qint64 id, const RunListingList& runs) {
        if (id != m_runsRequest) return;
        m_run->clear();
        for (const auto& r : runs)
            m_run->addItem(QStringLiteral("#%1 %2").arg(r.id).arg(QString::fromStdString(r.name)),
                           QVariant::fromValue<qint64>(r.id));
    });
    connect(m_store, &StoreClient::selectionsListed, this, [this](qint64 id, const SelectionList& list) {
        if (id != m_selectionsRequest) return;
        m_selection->clear();
        m_selection->addItem(tr("none"), QVariant::fromValue<qint64>(0));
        for (const auto& s : list)
            m_selection->addItem(QStringLiteral("#%1 (run %2, %3)")
                                     .arg(s.id)
                                     .arg(s.runIds.empty() ? 0 : s.runIds.front())
                                     .arg(QString::fromStdString(s.createdAt)),
                                 QVariant::fromValue<qint64>(s.id));
    });
    connect(m_store, &StoreClient::reportBuilt, this, [this](qint64 id, const lab::Report& report) {
        if (id != m_buildRequest) return;
        m_report = report;
        // The preview is the PDF's own document: the same text and the same painted charts.
        auto* doc = new QTextDocument(m_preview);
        lab::fillReportDocument(*doc, report);
        m_preview->setDocument(doc);
        for (auto* b : m_exports) b->setEnabled(true);
        m_status->setText(tr("%1 (%2 section(s), %3 chart(s)).")
                              .arg(QString::fromStdString(report.title))
                              .arg(report.sections.size())
                              .arg(report.charts.size()));
        emit reportReady();
    });
    connect(m_store, &StoreClient::reportExported, this, [this](qint64 id, const QString& path) {
        if (!std::erase(m_exportRequests, id)) return;
        m_status->setText(tr("Wrote %1.").arg(path));
        emit exported(path);
    });
    connect(m_store, &StoreClient::failed, this, [this](qint64 id, const QString& message) {
        if (std::erase(m_exportRequests, id)) {
            m_status->setText(tr("Export failed: %1").arg(message));
            emit exportFailed(message);
        } else if (id == m_buildRequest || id == m_runsRequest || id == m_selectionsRequest) {
            m_status->setText(tr("Cannot build the report: %1").arg(message));
        }
    });
    connect(m_store, &StoreClient::opened, this, [this] { refreshLists(); });
}

void ReportPage::refreshLists() {
    m_runsRequest = m_store->listRuns();
    m_selectionsRequest = m_store->listSelections();
}

void ReportPage::build(qint64 runId, qint64 selectionId) {
    if (runId <= 0 && selectionId <= 0) {
        m_status->setText(tr("Choose a run first."));
        return;
    }
    // The report shown so far is not the one asked for: nothing to export until this build succeeds.
    m_report.reset();
    for (auto* b : m_exports) b->setEnabled(false);
    m_preview->clear();
    m_status->setText(tr("Building…"));
    m_buildRequest = m_store->buildReport(runId, selectionId);
}

void ReportPage::exportTo(const QString& format, const QString& path) {
    auto failNow = [this](const QString& message) {
        m_status->setText(tr("Export failed: %1").arg(message));
        emit exportFailed(message);
    };
    if (!m_report) return failNow(tr("no report built yet (build one first)"));
    if (format != QLatin1String("pdf")) {
        m_status->setText(tr("Writing %1…").arg(path));
        m_exportRequests.push_back(m_store->exportReport(*m_report, format, path));
        return;
    }
    try {
        lab::writeReportPdf(*m_report, path.toStdString()); // atomic; throws with the OS's reason
    } catch (const std::exception& e) {
        return failNow(QString::fromUtf8(e.what()));
    }
    m_status->setText(tr("Wrote %1.").arg(path));
    emit exported(path);
}

} // namespace mb::gui
