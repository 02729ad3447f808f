// CandidateEditor: a form over CandidateSpec with file pickers for models and profiles.
#include "gui/candidate_editor.h"

#include "gui/plugin_chains.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace mb::gui {

CandidateEditor::CandidateEditor(const QString& label, const QString& title, bool withSampling, QWidget* parent)
    : QGroupBox(title, parent), m_label(label) {
    setObjectName(QStringLiteral("candidate.") + label);
    const QString prefix = objectName() + QLatin1Char('.');
    auto* form = new QFormLayout(this);

    m_model = new QComboBox;
    m_model->setEditable(true);
    m_model->setObjectName(prefix + QStringLiteral("model"));
    m_model->setMinimumContentsLength(28);
    m_model->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_model->lineEdit()->setPlaceholderText(tr("GGUF model file"));
    auto* browse = new QPushButton(tr("…"));
    browse->setToolTip(tr("Choose a GGUF model file"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Model"), QString(), tr("GGUF models (*.gguf)"));
        if (!f.isEmpty()) setModelPath(f);
    });
    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(m_model, 1);
    modelRow->addWidget(browse);
    form->addRow(tr("Model"), modelRow);

    m_profile = new QComboBox;
    m_profile->setEditable(true);
    m_profile->setObjectName(prefix + QStringLiteral("profile"));
    m_profile->addItems({QStringLiteral("fast"), QStringLiteral("regular")});
    m_profile->setToolTip(tr("fast, regular, a JSON profile file, or remote:http://HOST:PORT/v1#MODEL for an "
                             "OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, modebench-cli serve)"));
    auto* profileBrowse = new QPushButton(tr("…"));
    profileBrowse->setToolTip(tr("Choose a JSON profile file"));
    connect(profileBrowse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Profile"), QString(), tr("Profiles (*.json)"));
        if (!f.isEmpty()) setProfile(f);
    });
    auto* profileRow = new QHBoxLayout;
    profileRow->addWidget(m_profile, 1);
    profileRow->addWidget(profileBrowse);
    form->addRow(tr("Profile"), profileRow);

    m_apiKeyEnv = new QLineEdit;
    m_apiKeyEnv->setObjectName(prefix + QStringLiteral("api_key_env"));
    m_apiKeyEnv->setPlaceholderText(tr("remote only: variable holding the API key"));
    m_apiKeyEnv->setVisible(false);
    form->addRow(m_apiKeyEnv);
    connect(m_profile, &QComboBox::currentTextChanged, this, [this](const QString& text) {
        const bool remote = text.startsWith(QLatin1String("remote:"));
        m_apiKeyEnv->setVisible(remote);
        m_mmproj->setEnabled(!remote); // remote targets take no images yet
        m_mmprojBrowse->setEnabled(!remote);
    });

    m_device = new QComboBox;
    m_device->setObjectName(prefix + QStringLiteral("device"));
    m_device->addItem(QStringLiteral("cpu"));
    form->addRow(tr("Device"), m_device);

    m_threads = new QSpinBox;
    m_threads->setObjectName(prefix + QStringLiteral("threads"));
    m_threads->setRange(1, 256);
    form->addRow(tr("Threads"), m_threads);
    addPluginsRow(form, prefix);
    addMmprojRow(form, prefix);

    if (withSampling) {
        m_temperature = new QDoubleSpinBox;
        m_temperature->setObjectName(prefix + QStringLiteral("temperature"));
        m_temperature->setRange(0, 5);
        m_temperature->setSingleStep(0.1);
        m_temperature->setValue(0);
        m_temperature->setToolTip(tr("0 = greedy"));
        m_topK = new QSpinBox;
        m_topK->setObjectName(prefix + QStringLiteral("top_k"));
        m_topK->setRange(0, 100000);
        m_topK->setValue(40);
        m_topP = new QDoubleSpinBox;
        m_topP->setObjectName(prefix + QStringLiteral("top_p"));
        m_topP->setRange(0.01, 1);
        m_topP->setSingleStep(0.05);
        m_topP->setValue(0.95);
        m_seed = new QSpinBox;
        m_seed->setObjectName(prefix + QStringLiteral("seed"));
        m_seed->setRange(0, 2147483647);
        auto* row = new QHBoxLayout;
        row->addWidget(m_temperature);
        row->addWidget(m_topK);
        row->addWidget(m_topP);
        row->addWidget(m_seed);
        form->addRow(tr("Temp / top-k / top-p / seed"), row);
    }
}

CandidateEditor::~CandidateEditor() {
    if (m_describer.joinable()) m_describer.join();
}

void CandidateEditor::addPluginsRow(QFormLayout* form, const QString& prefix) {
    m_plugins = new QLineEdit;
    m_plugins->setObjectName(prefix + QStringLiteral("plugins"));
    m_plugins->setPlaceholderText(tr("output plugin chain (JSON); empty: none"));
    auto* browse = new QPushButton(tr("Browse…"));
    browse->setObjectName(prefix + QStringLiteral("plugins_browse"));
    browse->setToolTip(tr("Choose a plugin chain file (docs/PLUGINS.md)"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Plugin chain"), QString(), tr("Plugin chains (*.json)"));
        if (!f.isEmpty()) setPluginsPath(f);
    });
    connect(m_plugins, &QLineEdit::editingFinished, this, &CandidateEditor::describePlugins);
    auto* row = new QHBoxLayout;
    row->addWidget(m_plugins, 1);
    row->addWidget(browse);
    form->addRow(tr("Plugins"), row);
    m_pluginsInfo = new QLabel;
    m_pluginsInfo->setObjectName(prefix + QStringLiteral("plugins_description"));
    m_pluginsInfo->setWordWrap(true);
    m_pluginsInfo->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_pluginsInfo->setVisible(false);
    form->addRow(m_pluginsInfo);
}

void CandidateEditor::addMmprojRow(QFormLayout* form, const QString& prefix) {
    m_mmproj = new QLineEdit;
    m_mmproj->setObjectName(prefix + QStringLiteral("mmproj"));
    m_mmproj->setPlaceholderText(tr("vision encoder (llava mmproj GGUF) for images; empty: none"));
    m_mmproj->setToolTip(tr("Encodes the images a prompt carries; its projector must match the model's width"));
    auto* browse = new QPushButton(tr("Browse…"));
    browse->setObjectName(prefix + QStringLiteral("mmproj_browse"));
    browse->setToolTip(tr("Choose an mmproj GGUF file"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Vision encoder"), QString(), tr("mmproj GGUF (*.gguf)"));
        if (!f.isEmpty()) setMmprojPath(f);
    });
    m_mmprojBrowse = browse;
    auto* row = new QHBoxLayout;
    row->addWidget(m_mmproj, 1);
    row->addWidget(browse);
    form->addRow(tr("Vision"), row);
}

void CandidateEditor::setMmprojPath(const QString& path) {
    m_mmproj->setText(path);
}

void CandidateEditor::setPluginsPath(const QString& path) {
    m_plugins->setText(path);
    describePlugins();
}

void CandidateEditor::setDatabasePath(const QString& path) {
    m_dbPath = path;
}

QString CandidateEditor::pluginsDescription() const {
    return m_pluginsInfo->text();
}

void CandidateEditor::describePlugins() {
    const QString file = m_plugins->text().trimmed();
    if (file.isEmpty()) {
        m_pendingPlugins.clear();
        showDescription(file, {}, true);
        return;
    }
    if (m_describing) {
        m_pendingPlugins = file; // described when the load in progress ends
        return;
    }
    startDescribe(file);
}

// Loads the chain on a thread of its own and posts the answer back; the destructor joins
// it before this object goes, so the queued call never outlives its receiver.
void CandidateEditor::startDescribe(const QString& file) {
    if (m_describer.joinable()) m_describer.join(); // finished: its answer already came
    m_describing = true;
    m_pluginsInfo->setStyleSheet({});
    m_pluginsInfo->setText(tr("loading %1…").arg(file));
    m_pluginsInfo->setVisible(true);
    m_describer = std::thread([this, file, db = m_dbPath] {
        QString text;
        bool ok = true;
        try {
            const auto chain = loadChain(file, db, false);
            text = chain->empty() ? tr("an empty chain") : QString::fromStdString(chain->describe());
        } catch (const std::exception& e) {
            text = QString::fromUtf8(e.what());
            ok = false;
        }
        QMetaObject::invokeMethod(this, [this, file, text, ok] { describeDone(file, text, ok); }, Qt::QueuedConnection);
    });
}

void CandidateEditor::describeDone(const QString& file, const QString& text, bool ok) {
    m_describing = false;
    const QString next = m_pendingPlugins;
    m_pendingPlugins.clear();
    if (!next.isEmpty() && next != file) {
        startDescribe(next);
        return;
    }
    showDescription(file, text, ok);
}

void CandidateEditor::showDescription(const QString& file, const QString& text, bool ok) {
    if (file != m_plugins->text().trimmed()) return; // a stale answer
    m_pluginsOk = ok;
    m_pluginsInfo->setText(text);
    m_pluginsInfo->setStyleSheet(ok ? QString() : QStringLiteral("color:#c0392b"));
    m_pluginsInfo->setVisible(!text.isEmpty());
    emit pluginsDescribed(text, ok);
}

CandidateSpec CandidateEditor::spec() const {
    CandidateSpec s;
    s.label = m_label;
    s.modelPath = m_model->currentText().trimmed();
    s.profile = m_profile->currentText().trimmed();
    s.apiKeyEnv = m_apiKeyEnv->text().trimmed();
    s.device = m_device->currentText();
    s.threads = m_threads->value();
    s.pluginsPath = m_plugins->text().trimmed();
    s.mmprojPath = m_mmproj->text().trimmed();
    if (m_temperature) {
        s.sampling.temperature = static_cast<float>(m_temperature->value());
        s.sampling.topK = m_topK->value();
        s.sampling.topP = static_cast<float>(m_topP->value());
        s.sampling.seed = static_cast<uint64_t>(m_seed->value());
    }
    return s;
}

void CandidateEditor::setModelPath(const QString& path) {
    addModelChoice(path);
    m_model->setCurrentText(path);
}

void CandidateEditor::addModelChoice(const QString& path) {
    if (path.isEmpty() || m_model->findText(path) >= 0) return;
    m_model->insertItem(0, path);
}

void CandidateEditor::setProfile(const QString& profile) {
    m_profile->setCurrentText(profile);
}

void CandidateEditor::setThreads(int threads) {
    m_threads->setValue(threads);
}

void CandidateEditor::setDevices(const QStringList& ids) {
    const QString current = m_device->currentText();
    m_device->clear();
    m_device->addItems(ids);
    if (ids.contains(current)) m_device->setCurrentText(current);
}

} // namespace mb::gui
