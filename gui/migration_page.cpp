// MigrationPage: node steps run on the engine thread or computed here, the state saved with the selection.
#include "gui/migration_page.h"

#include "gui/bar_chart.h"
#include "gui/benchmark_charts.h"
#include "gui/flowchart_widget.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QValueAxis>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include <cmath>

namespace mb::gui {

namespace {
using N = lab::MigrationNode;
} // namespace

MigrationPage::MigrationPage(EngineBackend* engine, StoreClient* store, QWidget* parent)
    : QWidget(parent), m_engine(engine), m_store(store), m_monitor(engine) {
    setObjectName(QStringLiteral("page.migration"));
    auto* layout = new QVBoxLayout(this);
    m_flowchart = new FlowchartWidget;
    layout->addWidget(m_flowchart);

    auto* stepBox = new QGroupBox(tr("Current step"));
    auto* step = new QVBoxLayout(stepBox);
    m_step = new QLabel(tr("Decide on the Selection page first; the walk-through follows that selection."));
    m_step->setObjectName(QStringLiteral("migration.step"));
    m_step->setWordWrap(true);
    step->addWidget(m_step);
    auto* buttons = new QHBoxLayout;
    m_action = new QPushButton(tr("Run step"));
    m_action->setObjectName(QStringLiteral("migration.action"));
    m_apply = new QPushButton(tr("Apply the proposed batching and monitor again"));
    m_apply->setObjectName(QStringLiteral("migration.apply"));
    m_rollback = new QPushButton(tr("Roll back to regular mode"));
    m_rollback->setObjectName(QStringLiteral("migration.rollback"));
    buttons->addWidget(m_action);
    buttons->addWidget(m_apply);
    buttons->addStretch(1);
    buttons->addWidget(m_rollback);
    step->addLayout(buttons);
    m_note = new QLabel;
    m_note->setObjectName(QStringLiteral("migration.note"));
    m_note->setWordWrap(true);
    step->addWidget(m_note);

    auto* checklist = new QGroupBox(tr("Checklist"));
    auto* form = new QFormLayout(checklist);
    m_streams = new QCheckBox(tr("the client streams (server-sent events)"));
    m_streams->setObjectName(QStringLiteral("migration.streams"));
    m_streams->setTristate(true);
    m_streams->setCheckState(Qt::PartiallyChecked);
    form->addRow(tr("Interface"), m_streams);
    m_warmupPlan = new QLineEdit;
    m_warmupPlan->setObjectName(QStringLiteral("migration.warmup_plan"));
    form->addRow(tr("Warm-up plan"), m_warmupPlan);
    m_monitoringMetrics = new QLabel;
    m_monitoringMetrics->setWordWrap(true);
    form->addRow(tr("Monitoring"), m_monitoringMetrics);
    m_rollbackPlan = new QLineEdit;
    m_rollbackPlan->setObjectName(QStringLiteral("migration.rollback_plan"));
    form->addRow(tr("Rollback plan"), m_rollbackPlan);

    auto* top = new QHBoxLayout;
    top->addWidget(stepBox, 3);
    top->addWidget(checklist, 2);
    layout->addLayout(top);

    auto* charts = new QSplitter;
    auto* histChart = new QChart;
    histChart->setTitle(tr("A: prompt lengths (tokens)"));
    histChart->legend()->hide();
    m_histogram = new QChartView(histChart);
    m_histogram->setObjectName(QStringLiteral("migration.histogram"));
    m_histogram->setMinimumWidth(300);
    charts->addWidget(m_histogram);
    m_charts = new BenchmarkCharts;
    m_charts->setObjectName(QStringLiteral("migration.charts"));
    charts->addWidget(m_charts);
    charts->setStretchFactor(1, 3);
    layout->addWidget(charts, 1);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("migration.status"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(m_action, &QPushButton::clicked, this, [this] { runStep(); });
    connect(m_apply, &QPushButton::clicked, this, [this] {
        if (!m_state || m_state->node != N::I) return;
        lab::applyBatching(*m_state);
        save();
        refresh();
    });
    connect(m_rollback, &QPushButton::clicked, this, [this] {
        if (!m_state) return;
        try {
            lab::rollBack(*m_state, "rolled back by the user");
        } catch (const std::exception& e) {
            return fail(QString::fromUtf8(e.what()));
        }
        save();
        refresh();
    });
    auto checklistEdited = [this] {
        if (!m_state) return;
        const auto s = m_streams->checkState();
        m_state->checklist.clientStreams = s == Qt::PartiallyChecked ? std::nullopt : std::optional<bool>(s == Qt::Checked);
        m_state->checklist.warmupPlan = m_warmupPlan->text().toStdString();
        m_state->checklist.rollbackPlan = m_rollbackPlan->text().toStdString();
        save();
    };
    connect(m_streams, &QCheckBox::stateChanged, this, checklistEdited);
    connect(m_warmupPlan, &QLineEdit::editingFinished, this, checklistEdited);
    connect(m_rollbackPlan, &QLineEdit::editingFinished, this, checklistEdited);

    connect(m_store, &StoreClient::runLoaded, this, [this](qint64 id, const db::StoredRun& run) {
        if (id != m_loadRequest) return;
        m_run = run;
        // The fast candidate: its model, profile and the run's workload drive D and F.
        for (const auto& c : run.candidates)
            if (lab::modeOfProfile(c.info.profileJson) == lab::Mode::Fast) {
                m_modelPath = QString::fromStdString(c.info.modelPath);
                m_fastProfileJson = QString::fromStdString(c.info.profileJson);
            }
        try {
            m_workload = lab::parseWorkloadSpec(nlohmann::json::parse(run.info.workloadJson));
        } catch (const std::exception&) {
            m_workload = *lab::builtinWorkload("shared-prefix");
        }
        m_state = lab::startMigration(m_result, m_requirements, m_fastProfileJson.toStdString());
        save();
        refresh();
    });
    connect(m_engine, &EngineBackend::promptsScanned, this, [this](qint64 id, const std::vector<int64_t>& lengths) {
        if (id != m_job || !m_state) return;
        const lab::PromptHistogram h = lab::promptLengthHistogram(lengths);
        lab::assessContext(*m_state, h);
        QList<qreal> counts;
        QStringList labels;
        qreal top = 0;
        for (const auto& b : h.bins) {
            counts << static_cast<qreal>(b.count);
            labels << (b.upTo >= 1024 ? QStringLiteral("≤%1K").arg(b.upTo / 1024) : QStringLiteral("≤%1").arg(b.upTo));
            top = std::max<qreal>(top, static_cast<qreal>(b.count));
        }
        QValueAxis* y = setBarChart(m_histogram->chart(), labels, {{tr("prompts"), counts}}, QString());
        const int topCount = static_cast<int>(std::ceil(top));
        y->setRange(0, topCount + 1);
        y->setTickCount(std::min(topCount + 2, 11));
        y->setLabelFormat(QStringLiteral("%.0f"));
        m_job = 0;
        save();
        refresh();
    });
    connect(m_engine, &EngineBackend::warmupFinished, this, [this](qint64 id, const lab::WarmupResult& w) {
        if (id != m_job || !m_state) return;
        m_job = 0;
        lab::recordWarmup(*m_state, w);
        save();
        refresh();
    });
    connect(m_engine, &EngineBackend::jobFailed, this, [this](qint64 id, const QString& message) {
        if (id != m_job) return;
        m_job = 0;
        fail(message);
        refresh();
    });
    connect(&m_monitor, &BenchmarkController::dataChanged, this, [this] {
        m_charts->setInputs(m_monitor.inputs(), {{"a", tr("fast (monitoring)")}});
    });
    connect(&m_monitor, &BenchmarkController::finished, this, [this](const JobOutcome& o) {
        m_charts->setInputs(m_monitor.inputs(), {{"a", tr("fast (monitoring)")}});
        if (!m_state || o.summaries.empty()) return;
        if (o.cancelled) return fail(tr("the monitoring run was stopped"));
        lab::recordMonitoring(*m_state, lab::monitorFromSummary(o.summaries.front().second, m_requirements, o.storedRunId),
                              m_requirements);
        save();
        refresh();
    });
    connect(&m_monitor, &BenchmarkController::failed, this, [this](const QString& m) {
        fail(m);
        refresh();
    });
    refresh();
}

void MigrationPage::follow(qint64 selectionId, qint64 runId, const lab::SelectionResult& result,
                           const lab::Requirements& requirements) {
    m_selectionId = selectionId;
    m_runId = runId;
    m_result = result;
    m_requirements = requirements;
    m_state.reset();
    m_run.reset();
    m_modelPath.clear();
    m_status->setText(tr("Loading run %1…").arg(runId));
    m_loadRequest = m_store->loadRun(runId);
}

QString MigrationPage::fastProfileText() const {
    return QString::fromStdString(lab::profileWithBatching(m_fastProfileJson.toStdString(),
                                                           m_state ? m_state->batching : lab::batchingOfProfile(m_fastProfileJson.toStdString())));
}

void MigrationPage::runStep(const QString& promptFile) {
    if (!m_state || m_job != 0 || m_monitor.running()) return;
    m_status->clear();
    try {
        switch (m_state->node) {
        case N::A: {
            QString file = promptFile;
            if (file.isEmpty()) file = QString::fromStdString(m_requirements.inputs.promptFile);
            if (file.isEmpty())
                file = QFileDialog::getOpenFileName(this, tr("Prompt corpus"), QString(),
                                                    tr("Prompts (*.jsonl *.txt);;All files (*)"));
            if (file.isEmpty()) return;
            m_job = m_engine->newJobId();
            m_engine->scanPrompts(m_job, file, m_modelPath);
            m_status->setText(tr("Tokenizing %1…").arg(file));
            break;
        }
        case N::D:
            m_job = m_engine->newJobId();
            m_engine->runWarmup(m_job, m_modelPath, fastProfileText(),
                                QString::fromStdString(m_requirements.inputs.promptFile), m_threads);
            m_status->setText(tr("Warming a fast session up and trying a model update meanwhile…"));
            break;
        case N::E:
            lab::enableFast(*m_state);
            save();
            break;
        case N::F: {
            BenchmarkJob job;
            job.onlyA = true;
            job.workload = m_workload;
            job.a.label = QStringLiteral("a");
            job.a.modelPath = m_modelPath;
            job.a.profile = fastProfileText();
            job.a.threads = m_threads;
            job.runName = tr("migration monitoring, selection %1, pass %2")
                              .arg(m_selectionId)
                              .arg(m_state->monitoring.size() + 1);
            job.dbPath = m_store->path();
            m_charts->clear();
            m_monitor.start(job);
            m_status->setText(tr("Monitoring: the run's workload on the fast candidate…"));
            break;
        }
        default: break;
        }
    } catch (const std::exception& e) {
        fail(QString::fromUtf8(e.what()));
    }
    refresh();
}

void MigrationPage::refresh() {
    const bool ready = m_state.has_value();
    if (ready) m_flowchart->setState(*m_state);
    const bool busy = m_job != 0 || m_monitor.running();
    const N node = ready ? m_state->node : N::A;
    static const char* const kActions[] = {"Scan a prompt file (A)", "", "", "Run the warm-up (D)", "Enable fast mode (E)",
                                           "Run the monitoring workload (F)", "", "", ""};
    const char* action = ready ? kActions[static_cast<int>(node)] : "";
    m_action->setText(tr(action));
    m_action->setVisible(ready && *action);
    m_action->setEnabled(!busy);
    m_apply->setVisible(ready && node == N::I);
    m_apply->setEnabled(!busy);
    m_rollback->setEnabled(ready && !busy && (node == N::F || node == N::G || node == N::I));
    if (!ready) return;
    QString text = tr("<b>%1 — %2.</b> ").arg(QString::fromLatin1(lab::nodeName(node)),
                                               QString::fromUtf8(lab::nodeTitle(node)));
    if (node == N::H) text += tr("Migration done: fast mode meets the SLOs.");
    if (node == N::C) text += m_state->rolledBack ? tr("Rolled back: %1.").arg(QString::fromStdString(m_state->rollbackReason))
                                                  : tr("Regular mode stays.");
    if (node == N::I && !m_state->proposals.empty())
        text += tr("Proposed: %1").arg(QString::fromStdString(m_state->proposals.back().reason));
    text += tr(" Selection %1, run %2; %3 batching adjustment(s).")
                .arg(m_selectionId)
                .arg(m_runId)
                .arg(m_state->adjustments);
    m_step->setText(text);
    m_note->setText(QString::fromStdString(m_state->lastNote));
    QStringList metrics;
    for (const auto& m : m_state->checklist.monitoringMetrics) metrics << QString::fromStdString(m);
    m_monitoringMetrics->setText(metrics.join(QStringLiteral("; ")));
    if (m_warmupPlan->text().isEmpty()) m_warmupPlan->setText(QString::fromStdString(m_state->checklist.warmupPlan));
    if (m_rollbackPlan->text().isEmpty())
        m_rollbackPlan->setText(QString::fromStdString(m_state->checklist.rollbackPlan));
    emit stateChanged();
}

void MigrationPage::save() {
    if (!m_state || m_selectionId <= 0) return;
    m_store->saveMigration(m_selectionId, QString::fromStdString(lab::toJson(*m_state).dump()));
}

void MigrationPage::fail(const QString& message) {
    m_status->setText(tr("Step failed: %1").arg(message));
}

} // namespace mb::gui
