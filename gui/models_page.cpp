// ModelsPage: model files in, descriptions out, through the engine thread.
#include "gui/models_page.h"

#include "engine/profile.h"
#include "engine/quant_mix.h"
#include "engine/synthetic_model.h"

#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QLabel>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace mb::gui {

ModelsPage::ModelsPage(EngineBackend* engine, QWidget* parent) : QWidget(parent), m_engine(engine) {
    setObjectName(QStringLiteral("page.models"));
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);

    auto* top = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open GGUF…"));
    open->setObjectName(QStringLiteral("models.open"));
    top->addWidget(open);
    top->addWidget(new QLabel(tr("or drop a .gguf file here")));
    top->addStretch(1);
    m_use = new QPushButton(tr("Use this model"));
    m_use->setObjectName(QStringLiteral("models.use"));
    m_use->setEnabled(false);
    m_use->setToolTip(tr("Make it the model of the Playground and Benchmark pages and the default"));
    top->addWidget(m_use);
    layout->addLayout(top);

    auto* make = new QGroupBox(tr("Create a synthetic model (random weights: meaningless text, real timing)"));
    auto* makeRow = new QHBoxLayout(make);
    m_preset = new QComboBox;
    m_preset->setObjectName(QStringLiteral("models.preset"));
    for (const auto& p : engine::syntheticPresets())
        m_preset->addItem(QStringLiteral("%1 (%2 M parameters)")
                              .arg(QString::fromStdString(p.name))
                              .arg(static_cast<double>(engine::syntheticParameterCount(p)) / 1e6, 0, 'f', 1),
                          QString::fromStdString(p.name));
    m_dtype = new QComboBox;
    m_dtype->setObjectName(QStringLiteral("models.dtype"));
    m_dtype->addItems({QStringLiteral("f16"), QStringLiteral("q8_0"), QStringLiteral("q4_0"), QStringLiteral("f32")});
    for (const std::string& name : engine::syntheticWeightNames()) // then the k-quants and their mixes
        if (m_dtype->findText(QString::fromStdString(name)) < 0) m_dtype->addItem(QString::fromStdString(name));
    m_seed = new QSpinBox;
    m_seed->setObjectName(QStringLiteral("models.seed"));
    m_seed->setRange(0, 2147483647);
    m_seed->setValue(1);
    m_create = new QPushButton(tr("Create…"));
    m_create->setObjectName(QStringLiteral("models.create"));
    makeRow->addWidget(new QLabel(tr("Preset")));
    makeRow->addWidget(m_preset, 1);
    makeRow->addWidget(new QLabel(tr("Weights")));
    makeRow->addWidget(m_dtype);
    makeRow->addWidget(new QLabel(tr("Seed")));
    makeRow->addWidget(m_seed);
    makeRow->addWidget(m_create);
    layout->addWidget(make);

    auto* quant = new QGroupBox(tr("Quantise the open model"));
    auto* quantRow = new QHBoxLayout(quant);
    m_target = new QComboBox;
    m_target->setObjectName(QStringLiteral("models.quantize_target"));
    m_target->addItems({QStringLiteral("q8_0"), QStringLiteral("q4_0"), QStringLiteral("f16"), QStringLiteral("mixed")});
    for (const auto& t : engine::quantizeTargets()) // then llama.cpp's other file types (q4_k_m, ...)
        if (m_target->findText(QString::fromUtf8(t.name.data(), static_cast<qsizetype>(t.name.size()))) < 0)
            m_target->addItem(QString::fromUtf8(t.name.data(), static_cast<qsizetype>(t.name.size())));
    m_quantize = new QPushButton(tr("Quantise…"));
    m_quantize->setObjectName(QStringLiteral("models.quantize"));
    m_quantize->setEnabled(false);
    quantRow->addWidget(new QLabel(tr("Target")));
    quantRow->addWidget(m_target);
    quantRow->addStretch(1);
    quantRow->addWidget(m_quantize);
    layout->addWidget(quant);
    layout->addWidget(buildPrecisionBox());

    auto* progressRow = new QHBoxLayout;
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("models.progress"));
    m_progress->setRange(0, 1000);
    m_progress->setVisible(false);
    m_cancelButton = new QPushButton(tr("Cancel"));
    m_cancelButton->setObjectName(QStringLiteral("models.cancel"));
    m_cancelButton->setVisible(false);
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancelButton);
    layout->addLayout(progressRow);

    m_error = new QLabel;
    m_error->setObjectName(QStringLiteral("models.error"));
    m_error->setStyleSheet(QStringLiteral("color:#c0392b"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_error);
    m_info = new QLabel(tr("No model open. Open a GGUF file, drop one here, or create a synthetic model."));
    m_info->setObjectName(QStringLiteral("models.info"));
    m_info->setWordWrap(true);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_info);
    auto* table = new QTableView;
    table->setObjectName(QStringLiteral("models.tensors"));
    table->setModel(&m_tensors);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table->verticalHeader()->hide();
    layout->addWidget(table, 1);

    connect(open, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Open model"), QString(), tr("GGUF models (*.gguf)"));
        if (!f.isEmpty()) inspect(f);
    });
    connect(m_use, &QPushButton::clicked, this, [this] {
        if (!m_path.isEmpty()) emit modelChosen(m_path);
    });
    connect(m_create, &QPushButton::clicked, this, [this] {
        const QString preset = m_preset->currentData().toString();
        const QString f = QFileDialog::getSaveFileName(
            this, tr("Create synthetic model"), QStringLiteral("%1-%2.gguf").arg(preset, m_dtype->currentText()),
            tr("GGUF models (*.gguf)"));
        if (!f.isEmpty()) createSynthetic(preset, m_dtype->currentText(), static_cast<quint64>(m_seed->value()), f);
    });
    connect(m_quantize, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getSaveFileName(
            this, tr("Quantise model"),
            QStringLiteral("%1-%2.gguf").arg(QFileInfo(m_path).completeBaseName(), m_target->currentText()),
            tr("GGUF models (*.gguf)"));
        if (!f.isEmpty()) quantize(m_target->currentText(), f);
    });
    connect(m_cancelButton, &QPushButton::clicked, this, [this] {
        if (m_cancel) m_cancel->store(true);
    });

    connect(engine, &EngineBackend::modelInspected, this, [this](qint64 id, const ModelDescription& d) {
        if (id != m_inspectJob) return;
        m_path = d.path;
        m_tensors.setModel(d);
        QStringList types;
        for (const auto& [type, bytes] : d.bytesByType) types << QStringLiteral("%1 %2").arg(type, formatBytes(bytes));
        QString features;
        for (const auto& [label, text] : d.features)
            features += QStringLiteral("<br>%1: %2").arg(label.toHtmlEscaped(), text.toHtmlEscaped());
        m_info->setText(tr("<b>%1</b><br>%2 %3<br>%4%5<br>%6 M parameters, file %7; tensors: %8")
                            .arg(d.path.toHtmlEscaped(), d.architecture.toHtmlEscaped(), d.name.toHtmlEscaped(),
                                 d.shape.toHtmlEscaped(), features)
                            .arg(static_cast<double>(d.parameters) / 1e6, 0, 'f', 2)
                            .arg(formatBytes(d.fileBytes), types.join(QStringLiteral(", "))));
        m_error->clear();
        m_use->setEnabled(true);
        m_quantize->setEnabled(m_longJob == 0);
        m_precisionRun->setEnabled(m_longJob == 0);
        emit modelInspected(d.path);
    });
    connect(engine, &EngineBackend::jobProgress, this, [this](qint64 id, const QString&, qint64 done, qint64 total, double) {
        if (id != m_longJob) return;
        m_progress->setRange(0, static_cast<int>(total));
        m_progress->setValue(static_cast<int>(done));
    });
    connect(engine, &EngineBackend::precisionCompared, this, [this](qint64 id, const lab::PrecisionCheck& r) {
        if (id != m_longJob) return;
        endLongJob();
        m_precisionResult->setText(
            tr("<b>Greedy agreement %1%</b> over %2 positions (%3 prompts, %4 tokens each); mean KL(reference || "
               "candidate) %5 nats; perplexity: reference (%6) %7, candidate (%8) %9. Took %10 s.")
                .arg(r.agreement * 100, 0, 'f', 2)
                .arg(r.positions)
                .arg(r.prompts)
                .arg(r.genTokens)
                .arg(r.meanKl, 0, 'g', 4)
                .arg(QString::fromStdString(r.reference).toHtmlEscaped())
                .arg(r.referencePerplexity, 0, 'f', 3)
                .arg(QString::fromStdString(r.precision).toHtmlEscaped())
                .arg(r.candidatePerplexity, 0, 'f', 3)
                .arg(r.seconds, 0, 'f', 1));
        emit precisionCompared(r);
    });
    connect(engine, &EngineBackend::modelWritten, this, [this](qint64 id, const QString& path) {
        if (id != m_longJob) return;
        endLongJob();
        inspect(path);
    });
    connect(engine, &EngineBackend::jobFailed, this, [this](qint64 id, const QString& message) {
        if (id == m_inspectJob) {
            m_error->setText(tr("Cannot load this model: %1").arg(message));
            emit inspectFailed(message);
        } else if (id == m_longJob) {
            endLongJob();
            m_error->setText(message == QLatin1String("cancelled") ? m_cancelledText : tr("Failed: %1").arg(message));
        }
    });
}

QWidget* ModelsPage::buildPrecisionBox() {
    auto* box = new QGroupBox(tr("Precision A/B: the open model (reference) against a candidate"));
    auto* form = new QFormLayout(box);
    m_referencePrecision = new QComboBox;
    m_referencePrecision->setObjectName(QStringLiteral("models.precision_reference_precision"));
    m_referencePrecision->addItems({QStringLiteral("f32"), QStringLiteral("native")});
    m_referencePrecision->setToolTip(tr("f32: the open model's weights computed in F32; native: in the file's own types"));
    form->addRow(tr("Reference computed as"), m_referencePrecision);
    auto* candRow = new QHBoxLayout;
    m_precisionCandidate = new QLineEdit;
    m_precisionCandidate->setObjectName(QStringLiteral("models.precision_candidate"));
    m_precisionCandidate->setPlaceholderText(tr("the open model"));
    auto* browse = new QPushButton(tr("Browse…"));
    m_candidatePrecision = new QComboBox;
    m_candidatePrecision->setObjectName(QStringLiteral("models.precision_candidate_precision"));
    m_candidatePrecision->addItems({QStringLiteral("q4_0"), QStringLiteral("int8"), QStringLiteral("mixed"),
                                    QStringLiteral("f16"), QStringLiteral("native"), QStringLiteral("f32")});
    for (const std::string& name : engine::precisionNames()) // then the k-quant mixes
        if (m_candidatePrecision->findText(QString::fromStdString(name)) < 0)
            m_candidatePrecision->addItem(QString::fromStdString(name));
    m_candidatePrecision->setToolTip(tr("The precision the candidate is computed at (native: the file's own types, "
                                        "e.g. a file quantised above)"));
    candRow->addWidget(m_precisionCandidate, 1);
    candRow->addWidget(browse);
    candRow->addWidget(new QLabel(tr("at")));
    candRow->addWidget(m_candidatePrecision);
    form->addRow(tr("Candidate"), candRow);
    auto* promptRow = new QHBoxLayout;
    m_precisionPrompts = new QLineEdit;
    m_precisionPrompts->setObjectName(QStringLiteral("models.precision_prompts"));
    m_precisionPrompts->setPlaceholderText(tr("built-in sample sentences (or a JSONL / text prompt file)"));
    auto* browsePrompts = new QPushButton(tr("Browse…"));
    m_precisionGen = new QSpinBox;
    m_precisionGen->setObjectName(QStringLiteral("models.precision_gen_tokens"));
    m_precisionGen->setRange(1, 1024);
    m_precisionGen->setValue(16);
    m_precisionGen->setSuffix(tr(" tokens"));
    m_precisionGen->setToolTip(tr("Greedy tokens the reference generates per prompt; both models then score them"));
    m_precisionRun = new QPushButton(tr("Compare"));
    m_precisionRun->setObjectName(QStringLiteral("models.precision_run"));
    m_precisionRun->setEnabled(false);
    promptRow->addWidget(m_precisionPrompts, 1);
    promptRow->addWidget(browsePrompts);
    promptRow->addWidget(m_precisionGen);
    promptRow->addWidget(m_precisionRun);
    form->addRow(tr("Prompts"), promptRow);
    m_precisionResult = new QLabel(tr("Greedy agreement, mean KL divergence and both perplexities appear here."));
    m_precisionResult->setObjectName(QStringLiteral("models.precision_result"));
    m_precisionResult->setWordWrap(true);
    m_precisionResult->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(m_precisionResult);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Candidate model"), QString(), tr("GGUF models (*.gguf)"));
        if (!f.isEmpty()) m_precisionCandidate->setText(f);
    });
    connect(browsePrompts, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Prompts"), QString(),
                                                       tr("Prompt files (*.jsonl *.txt);;All files (*)"));
        if (!f.isEmpty()) m_precisionPrompts->setText(f);
    });
    connect(m_precisionRun, &QPushButton::clicked, this, [this] {
        comparePrecision(m_precisionCandidate->text().trimmed(), m_candidatePrecision->currentText(),
                         m_precisionPrompts->text().trimmed());
    });
    return box;
}

void ModelsPage::inspect(const QString& path) {
    m_inspectJob = m_engine->newJobId();
    m_engine->inspectModel(m_inspectJob, path);
}

void ModelsPage::startLongJob(const QString& what, const QString& cancelledText) {
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_cancelledText = cancelledText;
    m_longJob = m_engine->newJobId();
    m_progress->setValue(0);
    m_progress->setFormat(what + QStringLiteral(" %p%"));
    m_progress->setVisible(true);
    m_cancelButton->setVisible(true);
    m_create->setEnabled(false);
    m_quantize->setEnabled(false);
    m_precisionRun->setEnabled(false);
    m_error->clear();
}

void ModelsPage::endLongJob() {
    m_longJob = 0;
    m_progress->setVisible(false);
    m_cancelButton->setVisible(false);
    m_create->setEnabled(true);
    m_quantize->setEnabled(!m_path.isEmpty());
    m_precisionRun->setEnabled(!m_path.isEmpty());
}

void ModelsPage::createSynthetic(const QString& preset, const QString& dtype, quint64 seed, const QString& outPath) {
    startLongJob(tr("Creating"), tr("Cancelled; no file was left behind."));
    m_engine->createModel(m_longJob, preset, dtype, seed, outPath, m_cancel);
}

void ModelsPage::quantize(const QString& target, const QString& outPath) {
    if (m_path.isEmpty()) return;
    startLongJob(tr("Quantising"), tr("Cancelled; no file was left behind."));
    m_engine->quantizeModel(m_longJob, m_path, target, outPath, m_cancel);
}

void ModelsPage::comparePrecision(const QString& candidatePath, const QString& candidatePrecision,
                                  const QString& promptFile) {
    if (m_path.isEmpty()) return;
    PrecisionJob job;
    job.referencePath = m_path;
    job.referencePrecision = m_referencePrecision->currentText();
    job.candidatePath = candidatePath;
    job.candidatePrecision = candidatePrecision;
    job.promptFile = promptFile;
    job.genTokens = m_precisionGen->value();
    job.threads = m_threads;
    startLongJob(tr("Comparing precision"), tr("Precision A/B cancelled."));
    m_precisionResult->setText(tr("Comparing…"));
    job.jobId = m_longJob;
    m_engine->comparePrecision(job, m_cancel);
}

void ModelsPage::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void ModelsPage::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) inspect(urls.front().toLocalFile());
}

} // namespace mb::gui
