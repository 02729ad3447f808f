// RequirementsForm: spin boxes and combos over lab::Requirements, with JSON load and save.
#include "gui/requirements_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>

namespace mb::gui {

namespace {

const lab::SloStat kStats[] = {lab::SloStat::P50, lab::SloStat::P90, lab::SloStat::P95,
                               lab::SloStat::P99, lab::SloStat::P999, lab::SloStat::Mean, lab::SloStat::Max};
const lab::OpsCapability kOps[] = {lab::OpsCapability::Low, lab::OpsCapability::Medium, lab::OpsCapability::High};

QComboBox* statBox(const QString& name, lab::SloStat initial) {
    auto* b = new QComboBox;
    b->setObjectName(QStringLiteral("requirements.") + name);
    for (auto s : kStats) b->addItem(QString::fromUtf8(lab::sloStatName(s)));
    b->setCurrentText(QString::fromUtf8(lab::sloStatName(initial)));
    return b;
}

QDoubleSpinBox* realBox(const QString& name, double hi, double value, int decimals, const QString& none = {}) {
    auto* b = new QDoubleSpinBox;
    b->setObjectName(QStringLiteral("requirements.") + name);
    b->setRange(0, hi);
    b->setDecimals(decimals);
    b->setValue(value);
    if (!none.isEmpty()) b->setSpecialValueText(none);
    return b;
}

lab::SloStat statOf(const QComboBox* b) {
    return kStats[std::max(0, b->currentIndex())];
}

} // namespace

RequirementsForm::RequirementsForm(QWidget* parent) : QGroupBox(tr("Requirements"), parent) {
    setObjectName(QStringLiteral("requirements"));
    auto* form = new QFormLayout(this);
    auto* top = new QHBoxLayout;
    auto* load = new QPushButton(tr("Load…"));
    load->setObjectName(QStringLiteral("requirements.load"));
    auto* save = new QPushButton(tr("Save…"));
    top->addStretch(1);
    top->addWidget(load);
    top->addWidget(save);
    form->addRow(top);
    connect(load, &QPushButton::clicked, this, &RequirementsForm::load);
    connect(save, &QPushButton::clicked, this, &RequirementsForm::save);

    m_ttftStat = statBox(QStringLiteral("ttft_stat"), lab::SloStat::P95);
    m_ttftLimit = realBox(QStringLiteral("ttft_ms"), 1e7, 3000, 0, tr("no bound"));
    m_ttftLimit->setSuffix(tr(" ms"));
    auto* ttft = new QHBoxLayout;
    ttft->addWidget(m_ttftStat);
    ttft->addWidget(m_ttftLimit, 1);
    form->addRow(tr("TTFT ≤"), ttft);
    m_e2eStat = statBox(QStringLiteral("e2e_stat"), lab::SloStat::P99);
    m_e2eLimit = realBox(QStringLiteral("e2e_ms"), 1e8, 10000, 0, tr("no bound"));
    m_e2eLimit->setSuffix(tr(" ms"));
    auto* e2e = new QHBoxLayout;
    e2e->addWidget(m_e2eStat);
    e2e->addWidget(m_e2eLimit, 1);
    form->addRow(tr("End-to-end ≤"), e2e);

    m_promptFile = new QLineEdit;
    m_promptFile->setObjectName(QStringLiteral("requirements.prompt_file"));
    m_promptFile->setPlaceholderText(tr("measured from the runs' prompts"));
    auto* browse = new QPushButton(tr("…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Prompt file"), QString(), tr("Prompts (*.jsonl *.txt);;All files (*)"));
        if (!f.isEmpty()) m_promptFile->setText(f);
    });
    auto* prompts = new QHBoxLayout;
    prompts->addWidget(m_promptFile, 1);
    prompts->addWidget(browse);
    form->addRow(tr("Prompt file"), prompts);
    m_tolerance = realBox(QStringLiteral("over_cap_tolerance"), 1, 0, 3);
    m_tolerance->setSingleStep(0.01);
    m_tolerance->setToolTip(tr("Share of inputs allowed over fast mode's 32,768-token cap"));
    form->addRow(tr("Over-cap tolerance"), m_tolerance);

    m_monthlyRequests = realBox(QStringLiteral("monthly_requests"), 1e13, 0, 0, tr("as measured"));
    m_inputTokens = realBox(QStringLiteral("input_tokens_per_request"), 1e7, 0, 0, tr("measured"));
    m_outputTokens = realBox(QStringLiteral("output_tokens_per_request"), 1e7, 0, 0, tr("measured"));
    auto* monthly = new QHBoxLayout;
    monthly->addWidget(m_monthlyRequests, 2);
    monthly->addWidget(m_inputTokens, 1);
    monthly->addWidget(m_outputTokens, 1);
    form->addRow(tr("Monthly requests, in/out tokens"), monthly);

    m_wLatency = realBox(QStringLiteral("weight_latency"), 100, 0.5, 2);
    m_wCost = realBox(QStringLiteral("weight_cost"), 100, 0.3, 2);
    m_wFeatures = realBox(QStringLiteral("weight_features"), 100, 0.2, 2);
    auto* weights = new QHBoxLayout;
    for (auto* w : {m_wLatency, m_wCost, m_wFeatures}) {
        w->setSingleStep(0.05);
        weights->addWidget(w);
    }
    form->addRow(tr("Weights: latency, cost, features"), weights);

    m_ops = new QComboBox;
    m_ops->setObjectName(QStringLiteral("requirements.ops_capability"));
    for (auto o : kOps) m_ops->addItem(QString::fromUtf8(lab::opsCapabilityName(o)));
    m_ops->setCurrentIndex(1);
    form->addRow(tr("Operations capability"), m_ops);
    m_hotUpdates = new QCheckBox(tr("hot model updates"));
    m_hotUpdates->setObjectName(QStringLiteral("requirements.hot_updates"));
    m_customBatching = new QCheckBox(tr("custom batching"));
    m_customBatching->setObjectName(QStringLiteral("requirements.custom_batching"));
    auto* needs = new QHBoxLayout;
    needs->addWidget(m_hotUpdates);
    needs->addWidget(m_customBatching);
    form->addRow(tr("Needs"), needs);
}

lab::Requirements RequirementsForm::requirements() const {
    lab::Requirements r;
    if (m_ttftLimit->value() > 0) r.slo.push_back({lab::SloMetric::TtftMs, statOf(m_ttftStat), m_ttftLimit->value()});
    if (m_e2eLimit->value() > 0) r.slo.push_back({lab::SloMetric::E2eMs, statOf(m_e2eStat), m_e2eLimit->value()});
    r.slo.insert(r.slo.end(), m_otherBounds.begin(), m_otherBounds.end());
    // Through the parser: its validation and normal form (bounds sorted, keys checked).
    lab::Requirements shown = r;
    shown.inputs.promptFile = m_promptFile->text().trimmed().toStdString();
    shown.inputs.overCapTolerance = m_tolerance->value();
    if (m_monthlyRequests->value() > 0) shown.monthly.requests = m_monthlyRequests->value();
    if (m_inputTokens->value() > 0) shown.monthly.inputTokensPerRequest = m_inputTokens->value();
    if (m_outputTokens->value() > 0) shown.monthly.outputTokensPerRequest = m_outputTokens->value();
    shown.weights = {m_wLatency->value(), m_wCost->value(), m_wFeatures->value()};
    shown.opsCapability = kOps[std::max(0, m_ops->currentIndex())];
    shown.needs = {m_hotUpdates->isChecked(), m_customBatching->isChecked()};
    return lab::parseRequirements(lab::toJson(shown));
}

void RequirementsForm::setRequirements(const lab::Requirements& r) {
    m_ttftLimit->setValue(0);
    m_e2eLimit->setValue(0);
    m_otherBounds.clear();
    bool ttft = false, e2e = false;
    for (const auto& b : r.slo) {
        QComboBox* stat = nullptr;
        QDoubleSpinBox* limit = nullptr;
        if (b.metric == lab::SloMetric::TtftMs && !ttft) stat = m_ttftStat, limit = m_ttftLimit, ttft = true;
        else if (b.metric == lab::SloMetric::E2eMs && !e2e) stat = m_e2eStat, limit = m_e2eLimit, e2e = true;
        if (!stat) {
            m_otherBounds.push_back(b);
            continue;
        }
        stat->setCurrentText(QString::fromUtf8(lab::sloStatName(b.stat)));
        limit->setValue(b.limitMs);
    }
    m_promptFile->setText(QString::fromStdString(r.inputs.promptFile));
    m_tolerance->setValue(r.inputs.overCapTolerance);
    m_monthlyRequests->setValue(r.monthly.requests.value_or(0));
    m_inputTokens->setValue(r.monthly.inputTokensPerRequest.value_or(0));
    m_outputTokens->setValue(r.monthly.outputTokensPerRequest.value_or(0));
    m_wLatency->setValue(r.weights.latency);
    m_wCost->setValue(r.weights.cost);
    m_wFeatures->setValue(r.weights.features);
    m_ops->setCurrentText(QString::fromUtf8(lab::opsCapabilityName(r.opsCapability)));
    m_hotUpdates->setChecked(r.needs.hotUpdates);
    m_customBatching->setChecked(r.needs.customBatching);
    if (!m_otherBounds.empty())
        setToolTip(tr("%n further bound(s) from the loaded file are kept", nullptr, static_cast<int>(m_otherBounds.size())));
}

void RequirementsForm::load() {
    const QString f = QFileDialog::getOpenFileName(this, tr("Load requirements"), QString(), tr("Requirements (*.json)"));
    if (f.isEmpty()) return;
    try {
        setRequirements(lab::loadRequirements(f.toStdString()));
        m_baseDirectory = QFileInfo(f).absolutePath();
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Load requirements"), QString::fromUtf8(e.what()));
    }
}

void RequirementsForm::save() {
    lab::Requirements r;
    try {
        r = requirements();
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Save requirements"), QString::fromUtf8(e.what()));
        return;
    }
    const QString f = QFileDialog::getSaveFileName(this, tr("Save requirements"), QString(), tr("Requirements (*.json)"));
    if (f.isEmpty()) return;
    QFile file(f);
    const std::string text = lab::toJson(r).dump(2) + "\n";
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()))
        QMessageBox::warning(this, tr("Save requirements"), tr("Cannot write %1").arg(f));
}

} // namespace mb::gui
