// MigrationPage: node steps run on the engine thread or computed here, the state saved with the selection.
#include "gui/migration_page.h"

#include "gui/bar_chart.h"
#include "gui/benchmark_charts.h"
#include "gui/flowchart_widget.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
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

#include <algorithm>
#include <cmath>
#include <map>

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
        transition([this] { lab::applyBatching(*m_state); });
    });
    connect(m_rollback, &QPushButton::clicked, this, [this] {
        if (!m_state) return;
        transition([this] { lab::rollBack(*m_state, "rolled back by the user"); });
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
        m_loadRequest = 0;
        m_run = std::make_shared<const lab::StoredRun>(run);
        // The fast candidate: its model and profile; the run itself is replayed in D and F.
        for (const auto& c : run.candidates)
            if (lab::modeOfProfile(c.info.profileJson) == lab::Mode::Fast) {
                m_modelPath = QString::fromStdString(c.info.modelPath);
                m_fastProfileJson = QString::fromStdString(c.info.profileJson);
            }
        m_status->setText(m_abandoned ? tr("The step that was running was abandoned; the walk-through starts again at A.")
                                      : QString());
        try {
            m_state = lab::startMigration(m_result, m_requirements, m_fastProfileJson.toStdString());
        } catch (const std::exception& e) {
            return fail(QString::fromUtf8(e.what()));
        }
        save();
        refresh();
    });
    connect(m_store, &StoreClient::failed, this, [this](qint64 id, const QString& message) {
        if (id == m_loadRequest) {
            m_loadRequest = 0;
            fail(tr("cannot load run %1: %2").arg(m_runId).arg(message));
        } else if (std::erase(m_saves, id)) {
            fail(tr("the walk-through was not saved with selection %1: %2").arg(m_selectionId).arg(message));
        }
    });
    connect(m_store, &StoreClient::migrationSaved, this, [this](qint64 id, qint64) { std::erase(m_saves, id); });
    connect(m_store, &StoreClient::runDeleted, this, [this](qint64, qint64 runId, const SelectionList& deleted) {
        const bool ours = std::any_of(deleted.begin(), deleted.end(),
                                      [this](const db::StoredSelection& s) { return s.id == m_selectionId; });
        if (!ours || m_selectionId <= 0) return;
        // The walk-through went with its selection: stop following it (nothing left to save to).
        m_status->setText(tr("Selection %1 was deleted with run %2; decide again on the Selection page.")
                              .arg(m_selectionId)
                              .arg(runId));
        m_job = m_loadRequest = 0;
        if (m_monitorJob != 0) m_monitor.stop();
        m_monitorJob = 0;
        m_selectionId = m_runId = 0;
        m_state.reset();
        m_run.reset();
        refresh();
    });
    connect(m_engine, &EngineBackend::promptsScanned, this, [this](qint64 id, const std::vector<int64_t>& lengths) {
        if (id != m_job || !m_state) return;
        m_job = 0;
        assessPrompts(lengths);
    });
    connect(m_engine, &EngineBackend::warmupFinished, this, [this](qint64 id, const lab::WarmupResult& w) {
        if (id != m_job || !m_state) return;
        m_job = 0;
        m_status->setText(tr("Warm-up finished: %n prompt(s) primed.", nullptr, static_cast<int>(w.primedPrompts)));
        transition([&] { lab::recordWarmup(*m_state, w); });
    });
    connect(m_engine, &EngineBackend::jobFailed, this, [this](qint64 id, const QString& message) {
        if (id != m_job) return;
        m_job = 0;
        fail(message);
        refresh();
    });
    connect(&m_monitor, &BenchmarkController::dataChanged, this, [this] {
        if (m_monitorJob == 0 || m_monitor.jobId() != m_monitorJob) return;
        m_charts->setInputs(m_monitor.inputs(), {{"a", tr("fast (monitoring)")}});
    });
    connect(&m_monitor, &BenchmarkController::finished, this, [this](const JobOutcome& o) {
        if (m_monitorJob == 0 || m_monitor.jobId() != m_monitorJob) return refresh(); // an abandoned pass
        m_monitorJob = 0;
        m_charts->setInputs(m_monitor.inputs(), {{"a", tr("fast (monitoring)")}});
        if (!m_state || o.summaries.empty()) return refresh();
        if (o.cancelled) {
            fail(tr("the monitoring run was stopped"));
            return refresh();
        }
        m_status->setText(o.storedRunId > 0 ? tr("Monitoring pass stored as run %1.").arg(o.storedRunId)
                                            : tr("Monitoring pass finished (not stored: %1).").arg(o.saveError));
        transition([&] {
            lab::recordMonitoring(*m_state,
                                  lab::monitorFromSummary(o.summaries.front().second, m_requirements, o.storedRunId),
                                  m_requirements);
        });
    });
    connect(&m_monitor, &BenchmarkController::failed, this, [this](const QString& m) {
        if (m_monitorJob == 0 || m_monitor.jobId() != m_monitorJob) return refresh();
        m_monitorJob = 0;
        fail(m);
        refresh();
    });
    refresh();
}

template <typename F> void MigrationPage::transition(F&& step) {
    try {
        step();
    } catch (const std::exception& e) {
        fail(QString::fromUtf8(e.what()));
        refresh();
        return;
    }
    save();
    refresh();
}

void MigrationPage::assessPrompts(const std::vector<int64_t>& lengths) {
    const lab::PromptHistogram h = lab::promptLengthHistogram(lengths, m_state ? m_state->contextCap : lab::kFastContextCap);
    try {
        lab::assessContext(*m_state, h);
    } catch (const std::exception& e) {
        fail(QString::fromUtf8(e.what()));
        return refresh();
    }
    {
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
    }
    save();
    refresh();
}

void MigrationPage::follow(qint64 selectionId, qint64 runId, const lab::SelectionResult& result,
                           const lab::Requirements& requirements) {
    // A step still running belongs to the walk-through being replaced: forget its job (its
    // result is dropped by id when it arrives) and stop a monitoring pass. The engine
    // thread finishes a warm-up it has begun; the next D queues behind it.
    m_abandoned = m_job != 0 || m_monitorJob != 0;
    m_job = 0;
    if (m_monitorJob != 0) m_monitor.stop();
    m_monitorJob = 0;
    m_selectionId = selectionId;
    m_runId = runId;
    m_result = result;
    m_requirements = requirements;
    m_state.reset();
    m_run.reset();
    m_modelPath.clear();
    m_status->setText(m_abandoned ? tr("Loading run %1… (the step that was running was abandoned)").arg(runId)
                                : tr("Loading run %1…").arg(runId));
    m_loadRequest = m_store->loadRun(runId);
    refresh();
}

QString MigrationPage::fastProfileText() const {
    return QString::fromStdString(lab::profileWithBatching(m_fastProfileJson.toStdString(),
                                                           m_state ? m_state->batching : lab::batchingOfProfile(m_fastProfileJson.toStdString())));
}

void MigrationPage::runStep(const QString& promptFile) {
    if (!m_state || m_job != 0 || m_monitorJob != 0 || m_monitor.running()) return;
    m_status->clear();
    try {
        switch (m_state->node) {
        case N::A: {
            QString file = promptFile;
            if (file.isEmpty()) file = QString::fromStdString(m_requirements.inputs.promptFile);
            if (file.isEmpty()) { // the run's own prompts: per workload index, the longest any candidate saw
                std::map<uint64_t, int64_t> byIndex; // (truncation undone; once per prompt, not per candidate)
                for (const auto& c : m_run->candidates)
                    for (const auto& r : c.requests) {
                        int64_t& l = byIndex[r.id];
                        l = std::max(l, r.promptTokens + r.truncatedTokens);
                    }
                std::vector<int64_t> lengths;
                for (const auto& [index, l] : byIndex) lengths.push_back(l);
                if (lengths.empty()) return fail(tr("run %1 has no requests to assess; give a prompt file").arg(m_runId));
                return assessPrompts(lengths);
            }
            m_job = m_engine->newJobId();
            m_engine->scanPrompts(m_job, file, m_modelPath);
            m_status->setText(tr("Tokenizing %1…").arg(file));
            break;
        }
        case N::D: {
            WarmupJob job;
            job.jobId = m_job = m_engine->newJobId();
            job.modelPath = m_modelPath;
            job.profile = fastProfileText();
            job.primeFile = QString::fromStdString(m_requirements.inputs.promptFile);
            job.run = m_run; // without a prompt file: the run's own prefixes (or prompts)
            job.threads = m_threads;
            m_engine->runWarmup(job);
            m_status->setText(tr("Warming a fast session up and trying a model update meanwhile…"));
            break;
        }
        case N::E:
            return transition([this] { lab::enableFast(*m_state); });
        case N::F: {
            BenchmarkJob job;
            job.onlyA = true;
            job.replayOf = m_run; // the run's own requests, replayed on the engine thread
            job.replayPromptFile = QString::fromStdString(m_requirements.inputs.promptFile);
            job.a.label = QStringLiteral("a");
            job.a.modelPath = m_modelPath;
            job.a.profile = fastProfileText();
            job.a.threads = m_threads;
            job.runName = tr("migration monitoring, selection %1, pass %2")
                              .arg(m_selectionId)
                              .arg(m_state->monitoring.size() + 1);
            job.dbPath = m_store->path();
            m_charts->clear();
            m_monitorJob = m_monitor.start(job);
            m_status->setText(tr("Monitoring: the run's own requests replayed on the fast candidate…"));
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
    const bool busy = m_job != 0 || m_monitorJob != 0 || m_monitor.running();
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
    m_saves.push_back(m_store->saveMigration(m_selectionId, QString::fromStdString(lab::toJson(*m_state).dump())));
}

void MigrationPage::fail(const QString& message) {
    m_status->setText(tr("Step failed: %1").arg(message));
}

} // namespace mb::gui
