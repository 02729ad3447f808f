// SelectionPage: the requirements form in, the decision trace, score and cost charts out.
#include "gui/selection_page.h"

#include "gui/bar_chart.h"
#include "gui/executive_summary_view.h"
#include "gui/requirements_form.h"
#include "lab/atomic_file.h"
#include "lab/deploy_export.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace mb::gui {

namespace {

QChartView* chartView(const QString& name, const QString& title) {
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignBottom);
    auto* v = new QChartView(chart);
    v->setObjectName(name);
    v->setRenderHint(QPainter::Antialiasing);
    v->setMinimumHeight(220);
    return v;
}

} // namespace

SelectionPage::SelectionPage(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    setObjectName(QStringLiteral("page.selection"));
    auto* outer = new QHBoxLayout(this);

    auto* left = new QWidget;
    auto* l = new QVBoxLayout(left);
    auto* runs = new QFormLayout;
    m_run = new QComboBox;
    m_run->setObjectName(QStringLiteral("selection.run"));
    m_run->setToolTip(tr("A run with one fast and one regular candidate (Benchmark or modebench-cli compare)"));
    runs->addRow(tr("Run"), m_run);
    m_repeats = new QLineEdit;
    m_repeats->setObjectName(QStringLiteral("selection.repeats"));
    m_repeats->setPlaceholderText(tr("more run ids of the same two candidates, e.g. 12, 15"));
    m_repeats->setToolTip(tr("Repeats of the comparison, and the runs of a load sweep of the same two candidates "
                             "(Benchmark's Sweep, or modebench-cli compare --sweep): the sweep sizes the capacity"));
    runs->addRow(tr("Repeats"), m_repeats);
    m_prices = new QLineEdit;
    m_prices->setObjectName(QStringLiteral("selection.prices"));
    m_prices->setPlaceholderText(tr("price sheet JSON (optional; see resources/prices/)"));
    auto* browse = new QPushButton(tr("…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Price sheet"), QString(), tr("Price sheets (*.json)"));
        if (!f.isEmpty()) m_prices->setText(f);
    });
    auto* pricesRow = new QHBoxLayout;
    pricesRow->addWidget(m_prices, 1);
    pricesRow->addWidget(browse);
    runs->addRow(tr("Prices"), pricesRow);
    l->addLayout(runs);
    m_form = new RequirementsForm;
    l->addWidget(m_form);
    m_decide = new QPushButton(tr("Decide"));
    m_decide->setObjectName(QStringLiteral("selection.decide"));
    l->addWidget(m_decide);
    m_exportDeploy = new QPushButton(tr("Export deployment…"));
    m_exportDeploy->setObjectName(QStringLiteral("selection.export_deploy"));
    m_exportDeploy->setToolTip(tr("Launch settings of the chosen candidate for vLLM, SGLang, llama-server and "
                                  "modebench-cli serve, its profile, and a Kubernetes autoscaler manifest"));
    m_exportDeploy->setEnabled(false);
    l->addWidget(m_exportDeploy);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("selection.status"));
    m_status->setWordWrap(true);
    l->addWidget(m_status);
    l->addStretch(1);
    auto* scroll = new QScrollArea;
    scroll->setWidget(left);
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(580);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    auto* right = new QWidget;
    auto* r = new QVBoxLayout(right);
    m_summary = new ExecutiveSummaryView;
    m_summary->setObjectName(QStringLiteral("selection.summary"));
    r->addWidget(m_summary);
    m_recommendation = new QLabel;
    m_recommendation->setObjectName(QStringLiteral("selection.recommendation"));
    m_recommendation->setWordWrap(true);
    r->addWidget(m_recommendation);
    m_warnings = new QLabel;
    m_warnings->setObjectName(QStringLiteral("selection.warnings"));
    m_warnings->setWordWrap(true);
    r->addWidget(m_warnings);
    m_capacity = new QLabel;
    m_capacity->setObjectName(QStringLiteral("selection.capacity"));
    m_capacity->setWordWrap(true);
    m_capacity->setTextInteractionFlags(Qt::TextSelectableByMouse);
    r->addWidget(m_capacity);
    m_trace = new QTableWidget(0, 3);
    m_trace->setObjectName(QStringLiteral("selection.trace"));
    m_trace->setHorizontalHeaderLabels({tr("rule"), tr("fired"), tr("measured")});
    m_trace->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_trace->verticalHeader()->hide();
    m_trace->setWordWrap(true);
    m_trace->setEditTriggers(QAbstractItemView::NoEditTriggers);
    r->addWidget(m_trace, 2);
    auto* charts = new QHBoxLayout;
    m_scores = chartView(QStringLiteral("selection.scores_chart"), tr("Scores (0 to 1)"));
    m_cost = chartView(QStringLiteral("selection.cost_chart"), tr("Monthly cost"));
    charts->addWidget(m_scores);
    charts->addWidget(m_cost);
    r->addLayout(charts, 2);
    m_monitoring = new QLabel;
    m_monitoring->setObjectName(QStringLiteral("selection.monitoring"));
    m_monitoring->setWordWrap(true);
    r->addWidget(m_monitoring);

    auto* split = new QSplitter;
    split->addWidget(scroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    outer->addWidget(split);

    connect(m_decide, &QPushButton::clicked, this, [this] { decide(); });
    connect(m_exportDeploy, &QPushButton::clicked, this, [this] { askAndExportDeployment(); });
    connect(m_store, &StoreClient::runLoaded, this, [this](qint64 id, const db::StoredRun& run) {
        if (id == m_exportRequest) writeDeployment(run);
    });
    connect(m_store, &StoreClient::runsListed, this, [this](qint64 id, const RunListingList& list) {
        if (id != m_listRequest) return;
        const qint64 current = m_run->currentData().toLongLong();
        m_run->clear();
        for (const auto& run : list) {
            if (run.candidates.size() < 2) continue;
            QStringList profiles;
            for (const auto& c : run.candidates) profiles << QString::fromStdString(c.profileName);
            m_run->addItem(QStringLiteral("#%1 %2 (%3)").arg(run.id).arg(QString::fromStdString(run.name),
                                                                          profiles.join(QStringLiteral(" vs "))),
                           QVariant::fromValue<qint64>(run.id));
        }
        const int keep = m_run->findData(QVariant::fromValue<qint64>(current));
        if (keep >= 0) m_run->setCurrentIndex(keep);
        if (m_run->count() == 0) m_status->setText(tr("No run with two candidates yet: run a Benchmark first."));
    });
    connect(m_store, &StoreClient::selected, this, [this](qint64 id, const lab::SelectionResult& result, qint64 selectionId) {
        if (id != m_selectRequest) return;
        m_decide->setEnabled(true);
        m_selectionId = selectionId;
        m_result = result;
        m_resultRunId = m_runId;
        m_exportDeploy->setEnabled(true);
        show(result);
        m_status->setText(tr("Saved as selection %1 with run %2.").arg(selectionId).arg(m_runId));
        emit selectionSaved(selectionId, m_runId);
    });
    connect(m_store, &StoreClient::failed, this, [this](qint64 id, const QString& message) {
        if (id == m_exportRequest) return failExport(message);
        if (id != m_selectRequest && id != m_listRequest) return;
        m_decide->setEnabled(true);
        m_status->setText(tr("Cannot decide: %1").arg(message));
    });
    connect(m_store, &StoreClient::opened, this, [this] { refreshRuns(); });
}

void SelectionPage::setPriceSheet(const QString& path) {
    if (m_prices->text().isEmpty()) m_prices->setText(path);
}

void SelectionPage::setRepeats(const QString& ids) {
    m_repeats->setText(ids);
}

void SelectionPage::refreshRuns() {
    m_listRequest = m_store->listRuns();
}

void SelectionPage::decide(qint64 runId) {
    SelectionRequest req;
    m_runId = runId > 0 ? runId : m_run->currentData().toLongLong();
    if (m_runId <= 0) {
        m_status->setText(tr("Choose a run first."));
        return;
    }
    req.runIds.push_back(m_runId);
    for (const QString& part : m_repeats->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const qint64 id = part.trimmed().toLongLong(&ok);
        if (!ok || id <= 0) {
            m_status->setText(tr("Repeats: '%1' is not a run id.").arg(part.trimmed()));
            return;
        }
        req.runIds.push_back(id);
    }
    try {
        req.requirements = m_form->requirements();
        if (!m_prices->text().trimmed().isEmpty())
            req.prices = lab::loadPriceSheet(m_prices->text().trimmed().toStdString());
    } catch (const std::exception& e) {
        m_status->setText(QString::fromUtf8(e.what()));
        return;
    }
    req.baseDirectory = m_form->baseDirectory();
    m_decide->setEnabled(false);
    m_exportDeploy->setEnabled(false); // until this decision arrives: no export of the one shown before
    m_status->setText(tr("Deciding (feasibility, rules, score, bootstrap over the runs)…"));
    m_selectRequest = m_store->select(req);
}

void SelectionPage::askAndExportDeployment() {
    if (!m_result) return;
    std::optional<lab::Mode> candidate;
    if (m_result->verdict != lab::Verdict::Recommended) {
        bool ok = false;
        const QString mode = QInputDialog::getItem(
            this, tr("Export deployment"),
            tr("The selection recommends no candidate (%1). Export which?")
                .arg(QString::fromUtf8(lab::verdictName(m_result->verdict))),
            {QStringLiteral("fast"), QStringLiteral("regular")}, 0, false, &ok);
        if (!ok) return;
        candidate = mode == QLatin1String("fast") ? lab::Mode::Fast : lab::Mode::Regular;
    }
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export deployment into"));
    if (!dir.isEmpty()) exportDeployment(dir, candidate);
}

void SelectionPage::exportDeployment(const QString& dir, std::optional<lab::Mode> candidate) {
    if (!m_result) return failExport(tr("no decision yet (press Decide first)"));
    try {
        lab::deployMode(*m_result, candidate); // refuses before anything is read or written
    } catch (const lab::DeployExportError& e) {
        return failExport(QString::fromUtf8(e.what()) + tr("; choose the fast or regular candidate"));
    }
    m_exportDir = dir;
    m_exportCandidate = candidate;
    m_status->setText(tr("Exporting the deployment into %1…").arg(dir));
    m_exportRequest = m_store->loadRun(m_resultRunId);
}

void SelectionPage::writeDeployment(const lab::StoredRun& run) {
    m_exportRequest = 0;
    QStringList paths;
    try {
        const lab::DeployTarget target = lab::deployTargetOf(run, *m_result, m_exportCandidate);
        // The sweep's replicas and thresholds when the selection had one; else the manifest says "not measured".
        const auto capacity = lab::deployCapacityOf(*m_result, target.mode);
        for (const auto& p : lab::writeDeploymentFiles(m_exportDir.toStdString(), lab::deploymentFiles(target, capacity)))
            paths << QString::fromStdString(p);
        m_status->setText(tr("Wrote the %1 candidate's deployment (%2 files) into %3.")
                              .arg(QString::fromUtf8(lab::modeName(target.mode)))
                              .arg(paths.size())
                              .arg(m_exportDir));
    } catch (const std::exception& e) { // DeployExportError, AtomicFileError
        return failExport(QString::fromUtf8(e.what()));
    }
    emit deploymentExported(m_exportDir, paths);
}

void SelectionPage::failExport(const QString& message) {
    m_exportRequest = 0;
    m_status->setText(tr("Export failed: %1").arg(message));
    emit deploymentExportFailed(message);
}

void SelectionPage::show(const lab::SelectionResult& r) {
    // The summary, headline and warnings are lab's sentences, the same the CLI and the report print.
    m_summary->setSummary(lab::executiveSummary(r));
    m_recommendation->setText(tr("Headline: %1").arg(QString::fromStdString(r.headline)));
    QStringList warnings;
    for (const auto& w : r.warnings) warnings << tr("Warning: %1.").arg(QString::fromStdString(w));
    m_warnings->setText(warnings.join(QLatin1Char(' ')));
    QStringList capacity;
    for (const auto& c : r.capacity) capacity << QString::fromStdString(lab::capacitySentence(c)).toHtmlEscaped();
    m_capacity->setText(capacity.isEmpty()
                            ? tr("Capacity: not measured (add a load sweep's runs to the repeats).")
                            : tr("<b>Capacity:</b> ") + capacity.join(QStringLiteral("<br>")));
    m_trace->setRowCount(static_cast<int>(r.trace.size() + r.conflicts.size()));
    int row = 0;
    for (const auto& t : r.trace) {
        m_trace->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(t.rule)));
        m_trace->setItem(row, 1, new QTableWidgetItem(t.fired ? tr("fired") : tr("–")));
        m_trace->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(t.detail)));
        ++row;
    }
    for (const auto& c : r.conflicts) {
        m_trace->setItem(row, 0, new QTableWidgetItem(tr("conflict")));
        m_trace->setItem(row, 1, new QTableWidgetItem(QString()));
        m_trace->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(c)));
        ++row;
    }
    m_trace->resizeRowsToContents();
    std::vector<std::pair<QString, QList<qreal>>> scores, cost;
    QString currency;
    for (const auto& s : r.scores) {
        const QString name = QString::fromUtf8(lab::modeName(s.mode));
        scores.push_back({name, {s.latency, s.costScore, s.features, s.total}});
        if (s.cost) {
            cost.push_back({name, {s.cost->total, s.cost->perMillionTokens}});
            currency = QString::fromStdString(s.cost->currency);
        }
    }
    setBarChart(m_scores->chart(), {tr("latency"), tr("cost"), tr("features"), tr("total")}, scores, tr("score"));
    if (cost.empty()) {
        setBarChart(m_cost->chart(), {}, {}, QString());
        m_cost->chart()->setTitle(tr("Monthly cost (give a price sheet)"));
    } else {
        setBarChart(m_cost->chart(), {tr("per month"), tr("per million tokens")}, cost, currency);
        m_cost->chart()->setTitle(tr("Cost (%1)").arg(currency));
    }
    QStringList monitor;
    for (const auto& m : r.monitoring) monitor << QString::fromStdString(m).toHtmlEscaped();
    m_monitoring->setText(monitor.isEmpty() ? QString()
                                            : tr("<b>With fast mode, monitor:</b> ") + monitor.join(QStringLiteral("; ")));
}

} // namespace mb::gui
