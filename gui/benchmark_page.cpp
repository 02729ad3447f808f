// BenchmarkPage: the designer and editors feed a BenchmarkJob; the controller's data feeds the charts.
#include "gui/benchmark_page.h"

#include "gui/benchmark_charts.h"
#include "gui/candidate_editor.h"
#include "gui/job_candidates.h"
#include "gui/workload_designer.h"
#include "lab/sweep.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace mb::gui {

namespace {

// "1, 2, 4" (commas or spaces) into levels; false with `why` when a level is not a number.
bool parseLevels(const QString& text, std::vector<double>& levels, QString& why) {
    levels.clear();
    for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const double v = part.toDouble(&ok);
        if (!ok) {
            why = QObject::tr("sweep level '%1' is not a number").arg(part);
            return false;
        }
        levels.push_back(v);
    }
    return true;
}

} // namespace

BenchmarkPage::BenchmarkPage(EngineBackend* engine, QWidget* parent) : QWidget(parent), m_controller(engine) {
    setObjectName(QStringLiteral("page.benchmark"));
    auto* outer = new QHBoxLayout(this);

    // Left: what to run.
    auto* left = new QWidget;
    auto* form = new QVBoxLayout(left);
    m_designer = new WorkloadDesigner;
    form->addWidget(m_designer);
    m_a = new CandidateEditor(QStringLiteral("a"), tr("Candidate A"), false);
    m_a->setObjectName(QStringLiteral("benchmark.candidate.a"));
    m_a->setProfile(QStringLiteral("fast"));
    m_b = new CandidateEditor(QStringLiteral("b"), tr("Candidate B"), false);
    m_b->setObjectName(QStringLiteral("benchmark.candidate.b"));
    m_b->setProfile(QStringLiteral("regular"));
    form->addWidget(m_a);
    form->addWidget(m_b);
    auto* options = new QFormLayout;
    m_prime = new QCheckBox(tr("Prime each shared prefix once before measuring"));
    m_prime->setObjectName(QStringLiteral("benchmark.prime"));
    m_prime->setChecked(true);
    options->addRow(m_prime);
    m_sloTtft = new QDoubleSpinBox;
    m_sloTtft->setObjectName(QStringLiteral("benchmark.slo_ttft"));
    m_sloTtft->setRange(0, 1e7);
    m_sloTtft->setSpecialValueText(tr("none"));
    m_sloTtft->setSuffix(tr(" ms"));
    m_sloE2e = new QDoubleSpinBox;
    m_sloE2e->setObjectName(QStringLiteral("benchmark.slo_e2e"));
    m_sloE2e->setRange(0, 1e8);
    m_sloE2e->setSpecialValueText(tr("none"));
    m_sloE2e->setSuffix(tr(" ms"));
    auto* slo = new QHBoxLayout;
    slo->addWidget(m_sloTtft);
    slo->addWidget(m_sloE2e);
    options->addRow(tr("SLO TTFT / e2e"), slo);
    m_precisionPrompts = new QSpinBox;
    m_precisionPrompts->setObjectName(QStringLiteral("benchmark.precision_prompts"));
    m_precisionPrompts->setRange(0, 1000);
    m_precisionPrompts->setSpecialValueText(tr("off"));
    m_precisionPrompts->setSuffix(tr(" prompts"));
    m_precisionPrompts->setToolTip(tr("After the timed run, compare each candidate's precision with the same model in "
                                      "F32 on this many of the workload's prompts: greedy agreement, mean KL and "
                                      "perplexity appear beside the latency figures and are saved with the run."));
    options->addRow(tr("Precision A/B"), m_precisionPrompts);
    m_name = new QLineEdit;
    m_name->setObjectName(QStringLiteral("benchmark.name"));
    m_name->setPlaceholderText(tr("run name (optional)"));
    options->addRow(tr("Name"), m_name);
    m_sweep = new QComboBox;
    m_sweep->setObjectName(QStringLiteral("benchmark.sweep"));
    m_sweep->addItem(tr("off"), QString());
    m_sweep->addItem(tr("concurrency"), QStringLiteral("concurrency"));
    m_sweep->addItem(tr("rates"), QStringLiteral("rates"));
    m_sweep->setToolTip(tr("A capacity sweep: the same comparison at rising load levels, each stored as its own run; "
                           "the runs go into the Selection page's Repeats for the capacity and the HPA."));
    m_sweepLevels = new QLineEdit;
    m_sweepLevels->setObjectName(QStringLiteral("benchmark.sweep_levels"));
    m_sweepLevels->setPlaceholderText(tr("levels, e.g. 1, 2, 4, 8 (empty: the defaults)"));
    m_sweepLevels->setEnabled(false);
    connect(m_sweep, &QComboBox::currentIndexChanged, this, [this](int i) { m_sweepLevels->setEnabled(i > 0); });
    auto* sweep = new QHBoxLayout;
    sweep->addWidget(m_sweep);
    sweep->addWidget(m_sweepLevels, 1);
    options->addRow(tr("Sweep"), sweep);
    form->addLayout(options);
    auto* buttons = new QHBoxLayout;
    m_run = new QPushButton(tr("Run"));
    m_run->setObjectName(QStringLiteral("benchmark.run"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setObjectName(QStringLiteral("benchmark.stop"));
    m_stop->setEnabled(false);
    buttons->addWidget(m_run);
    buttons->addWidget(m_stop);
    form->addLayout(buttons);
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("benchmark.progress"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    form->addWidget(m_progress);
    m_eta = new QLabel;
    m_eta->setObjectName(QStringLiteral("benchmark.eta"));
    form->addWidget(m_eta);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("benchmark.status"));
    m_status->setWordWrap(true);
    form->addWidget(m_status);
    form->addStretch(1);
    auto* scroll = new QScrollArea;
    scroll->setWidget(left);
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(600);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    // Right: what happens.
    auto* right = new QSplitter(Qt::Vertical);
    m_charts = new BenchmarkCharts;
    right->addWidget(m_charts);
    auto* table = new QTableView;
    table->setObjectName(QStringLiteral("benchmark.summary"));
    table->setModel(&m_summary);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table->verticalHeader()->hide();
    right->addWidget(table);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 2);

    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(scroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    outer->addWidget(split);

    m_redraw.setInterval(200);
    connect(&m_redraw, &QTimer::timeout, this, [this] {
        if (m_dirty) redraw();
    });
    m_redraw.start();

    connect(m_run, &QPushButton::clicked, this, &BenchmarkPage::run);
    connect(m_stop, &QPushButton::clicked, this, [this] {
        m_controller.stop();
        m_status->setText(tr("Stopping: cancelling the requests in flight…"));
    });
    connect(&m_controller, &BenchmarkController::runningChanged, this, [this](bool running) {
        m_run->setEnabled(!running);
        m_stop->setEnabled(running);
    });
    connect(&m_controller, &BenchmarkController::dataChanged, this, [this] { m_dirty = true; });
    connect(&m_controller, &BenchmarkController::progressChanged, this, [this](qint64 done, qint64 total, double eta) {
        m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, total)));
        m_progress->setValue(static_cast<int>(done));
        m_eta->setText(done > 0 && done < total ? tr("%1 of %2 requests, about %3 s left").arg(done).arg(total).arg(eta, 0, 'f', 0)
                                                : tr("%1 of %2 requests").arg(done).arg(total));
    });
    connect(&m_controller, &BenchmarkController::precisionProgress, this,
            [this](const QString& label, qint64 done, qint64 total) {
                m_eta->setText(tr("Precision A/B of %1 against F32: %2 of %3 prompts").arg(label.toUpper()).arg(done).arg(total));
            });
    connect(&m_controller, &BenchmarkController::sweepLevelStarted, this, [this](const QString& line) {
        QString text = line;
        if (!text.isEmpty()) text[0] = text[0].toUpper();
        m_status->setText(text);
    });
    connect(&m_controller, &BenchmarkController::finished, this, [this](const JobOutcome& o) {
        redraw();
        std::vector<lab::RunSummary> s;
        for (const auto& [label, summary] : o.summaries) s.push_back(summary);
        QStringList n;
        for (const auto& [label, name] : names()) n << name;
        m_summary.setSummaries(s, n);
        QString text = o.cancelled ? tr("Stopped; the partial run is kept.") : tr("Done.");
        if (o.storedRunId > 0) text += tr(" Saved as run %1.").arg(o.storedRunId);
        if (!o.saveError.isEmpty()) text += tr(" Not saved: %1").arg(o.saveError);
        for (const auto& [label, failure] : o.failures)
            text += tr("\n%1: %2 request(s) did not complete; the first: %3")
                        .arg(QString::fromStdString(label).toUpper())
                        .arg(failure.first)
                        .arg(failure.second);
        QStringList ids;
        for (qint64 id : o.sweepRunIds) ids << QString::number(id);
        if (!ids.isEmpty())
            text += tr("\nSweep stored as runs %1; they are in the Selection page's Repeats field for the capacity.")
                        .arg(ids.join(QStringLiteral(", ")));
        m_status->setText(text);
        if (o.storedRunId > 0) emit runSaved(o.storedRunId);
        if (!ids.isEmpty()) emit sweepSaved(ids.join(QStringLiteral(", ")));
    });
    connect(&m_controller, &BenchmarkController::failed, this,
            [this](const QString& message) { m_status->setText(tr("Failed: %1").arg(message)); });
}

std::map<std::string, QString> BenchmarkPage::names() const {
    return {{"a", tr("A %1").arg(m_a->spec().profile.section(QLatin1Char('/'), -1))},
            {"b", tr("B %1").arg(m_b->spec().profile.section(QLatin1Char('/'), -1))}};
}

void BenchmarkPage::setModel(const QString& path) {
    m_a->setModelPath(path);
    m_b->setModelPath(path);
}

void BenchmarkPage::setDatabasePath(const QString& path) {
    m_dbPath = path;
    m_a->setDatabasePath(path);
    m_b->setDatabasePath(path);
}

void BenchmarkPage::setThreads(int threads) {
    m_a->setThreads(threads);
    m_b->setThreads(threads);
}

void BenchmarkPage::setDevices(const QStringList& ids) {
    m_a->setDevices(ids);
    m_b->setDevices(ids);
}

void BenchmarkPage::run() {
    BenchmarkJob job;
    job.workload = m_designer->spec();
    job.a = m_a->spec();
    job.b = m_b->spec();
    job.primePrefixes = m_prime->isChecked();
    job.precisionPrompts = m_precisionPrompts->value();
    job.slo.ttftMs = m_sloTtft->value() > 0 ? m_sloTtft->value() : -1;
    job.slo.e2eMs = m_sloE2e->value() > 0 ? m_sloE2e->value() : -1;
    job.runName = m_name->text().trimmed();
    job.dbPath = m_dbPath;
    job.allowUnsandboxed = m_allowUnsandboxed;
    if (const QString why = imagesRefused({job.a, job.b}, job.workload.images.perRequest > 0); !why.isEmpty()) {
        m_status->setText(tr("Not started: %1. (A candidate's Vision row takes its mmproj file; or set Images to 0.)")
                              .arg(why));
        return;
    }
    if (const QString kind = m_sweep->currentData().toString(); !kind.isEmpty()) {
        QString why;
        lab::SweepOptions check;
        check.kind = *lab::sweepKindFromName(kind.toStdString());
        if (!parseLevels(m_sweepLevels->text(), check.levels, why) ||
            !(why = QString::fromStdString(lab::validateSweep(check))).isEmpty()) {
            m_status->setText(tr("Sweep not started: %1").arg(why));
            return;
        }
        job.sweep = check.kind;
        job.sweepLevels = check.levels;
    }
    m_charts->clear();
    m_summary.setSummaries({}, {});
    m_status->setText(job.sweep ? tr("Starting the sweep…") : tr("Starting A (%1)…").arg(job.a.profile));
    m_controller.start(job);
}

void BenchmarkPage::redraw() {
    m_dirty = false;
    m_charts->setInputs(m_controller.inputs(), names());
}

} // namespace mb::gui
