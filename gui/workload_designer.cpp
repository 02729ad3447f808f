// WorkloadDesigner: every knob of PRODUCT.md §4 as a form, with JSON load and save.
#include "gui/workload_designer.h"

#include "engine/image.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>

namespace mb::gui {

namespace {

QSpinBox* intBox(const QString& name, int lo, int hi) {
    auto* b = new QSpinBox;
    b->setObjectName(QStringLiteral("workload.") + name);
    b->setRange(lo, hi);
    return b;
}

QDoubleSpinBox* realBox(const QString& name, double lo, double hi, int decimals) {
    auto* b = new QDoubleSpinBox;
    b->setObjectName(QStringLiteral("workload.") + name);
    b->setRange(lo, hi);
    b->setDecimals(decimals);
    return b;
}

const lab::LengthDist::Kind kKinds[] = {lab::LengthDist::Kind::Fixed, lab::LengthDist::Kind::Uniform,
                                        lab::LengthDist::Kind::Normal, lab::LengthDist::Kind::LogNormal};
const lab::ArrivalSpec::Kind kArrivals[] = {lab::ArrivalSpec::Kind::Closed, lab::ArrivalSpec::Kind::Poisson,
                                            lab::ArrivalSpec::Kind::Gamma, lab::ArrivalSpec::Kind::Ramp};

void addRow(QFormLayout* form, const QString& label, const QString& tip, QLayout* fields) {
    auto* l = new QLabel(label);
    l->setToolTip(tip);
    form->addRow(l, fields);
}

} // namespace

WorkloadDesigner::WorkloadDesigner(QWidget* parent) : QGroupBox(tr("Workload"), parent) {
    setObjectName(QStringLiteral("workload"));
    auto* form = new QFormLayout(this);
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);

    m_builtin = new QComboBox;
    m_builtin->setObjectName(QStringLiteral("workload.builtin"));
    for (const auto& n : lab::builtinWorkloadNames()) m_builtin->addItem(QString::fromStdString(n));
    auto* load = new QPushButton(tr("Load…"));
    auto* save = new QPushButton(tr("Save…"));
    auto* top = new QHBoxLayout;
    top->addWidget(m_builtin, 1);
    top->addWidget(load);
    top->addWidget(save);
    form->addRow(tr("Start from"), top);
    connect(m_builtin, &QComboBox::currentTextChanged, this, [this](const QString& name) {
        if (auto b = lab::builtinWorkload(name.toStdString())) setSpec(*b);
    });
    connect(load, &QPushButton::clicked, this, &WorkloadDesigner::loadFile);
    connect(save, &QPushButton::clicked, this, &WorkloadDesigner::saveFile);

    m_requests = intBox(QStringLiteral("requests"), 1, 1000000);
    form->addRow(tr("Requests (plain)"), m_requests);
    m_input = lengthRow(QStringLiteral("input"));
    auto* inputRow = new QHBoxLayout;
    inputRow->addWidget(m_input.kind);
    inputRow->addWidget(m_input.a);
    inputRow->addWidget(m_input.b);
    addRow(form, tr("Input tokens"), tr("Distribution, a, b. fixed: a; uniform: a to b; normal and lognormal: mean a, std b"), inputRow);
    m_output = lengthRow(QStringLiteral("output"));
    auto* outputRow = new QHBoxLayout;
    outputRow->addWidget(m_output.kind);
    outputRow->addWidget(m_output.a);
    outputRow->addWidget(m_output.b);
    addRow(form, tr("Output tokens"), tr("Distribution, a, b (max tokens of each request)"), outputRow);

    m_groups = intBox(QStringLiteral("groups"), 0, 100000);
    m_perGroup = intBox(QStringLiteral("per_group"), 0, 100000);
    m_prefix = intBox(QStringLiteral("prefix_tokens"), 0, 1000000);
    m_suffix = intBox(QStringLiteral("suffix_tokens"), 0, 1000000);
    auto* sp = new QHBoxLayout;
    for (auto* w : {m_groups, m_perGroup, m_prefix, m_suffix}) sp->addWidget(w);
    addRow(form, tr("Shared prefix"), tr("Groups, requests per group, prefix tokens, suffix tokens (groups 0: off)"), sp);

    m_conversations = intBox(QStringLiteral("conversations"), 0, 100000);
    m_turns = intBox(QStringLiteral("turns"), 0, 1000);
    m_user = lengthRow(QStringLiteral("user_tokens"));
    auto* mt = new QHBoxLayout;
    for (QWidget* w : {static_cast<QWidget*>(m_conversations), static_cast<QWidget*>(m_turns),
                       static_cast<QWidget*>(m_user.kind), static_cast<QWidget*>(m_user.a),
                       static_cast<QWidget*>(m_user.b)})
        mt->addWidget(w);
    addRow(form, tr("Multi-turn"), tr("Conversations, turns, then the user tokens added per turn (conversations 0: off)"), mt);

    m_arrival = new QComboBox;
    m_arrival->setObjectName(QStringLiteral("workload.arrival"));
    for (auto k : kArrivals) m_arrival->addItem(QString::fromUtf8(lab::arrivalKindName(k)));
    m_concurrency = intBox(QStringLiteral("concurrency"), 1, 100000);
    m_rate = realBox(QStringLiteral("rate"), 0.001, 1e6, 3);
    m_burstiness = realBox(QStringLiteral("burstiness"), 0.01, 100, 2);
    m_ramp = realBox(QStringLiteral("ramp_seconds"), 0, 1e6, 1);
    auto* ar = new QHBoxLayout;
    for (QWidget* w : {static_cast<QWidget*>(m_arrival), static_cast<QWidget*>(m_concurrency),
                       static_cast<QWidget*>(m_rate), static_cast<QWidget*>(m_burstiness), static_cast<QWidget*>(m_ramp)})
        ar->addWidget(w);
    addRow(form, tr("Arrival"), tr("Kind, concurrency (closed loop), rate per second, burstiness (gamma shape), ramp seconds"), ar);

    addImagesRow(form);

    m_warmup = intBox(QStringLiteral("warmup"), 0, 100000);
    m_seed = intBox(QStringLiteral("seed"), 0, 2147483647);
    auto* ws = new QHBoxLayout;
    ws->addWidget(m_warmup);
    ws->addWidget(m_seed);
    addRow(form, tr("Warm-up, seed"), tr("Unrecorded warm-up requests, and the seed of every random draw"), ws);

    if (auto b = lab::builtinWorkload(m_builtin->currentText().toStdString())) setSpec(*b);
}

// Synthetic images (the CLI's --images, --image-size, --distinct-images): they need each
// candidate's vision encoder (its Vision row).
void WorkloadDesigner::addImagesRow(QFormLayout* form) {
    m_imagesPerRequest = intBox(QStringLiteral("images.per_request"), 0, lab::WorkloadSpec::Images::kMaxPerRequest);
    m_imageWidth = intBox(QStringLiteral("images.width"), 1, engine::kMaxImageSide);
    m_imageHeight = intBox(QStringLiteral("images.height"), 1, engine::kMaxImageSide);
    m_imagesDistinct = intBox(QStringLiteral("images.distinct"), 0, 1000000);
    m_imageWidth->setSuffix(tr(" px"));
    m_imageHeight->setSuffix(tr(" px"));
    auto* im = new QHBoxLayout;
    for (auto* w : {m_imagesPerRequest, m_imageWidth, m_imageHeight, m_imagesDistinct}) im->addWidget(w);
    addRow(form, tr("Images"),
           tr("Synthetic images per request (0: off), width, height, distinct image sets (0: every request its own; "
              "1: all the same, the prefix cache's case). Needs each candidate's vision encoder (mmproj)"),
           im);
    auto imagesOn = [this](int n) {
        for (auto* w : {m_imageWidth, m_imageHeight, m_imagesDistinct}) w->setEnabled(n > 0);
    };
    connect(m_imagesPerRequest, &QSpinBox::valueChanged, this, imagesOn);
    imagesOn(0);
}

WorkloadDesigner::LengthFields WorkloadDesigner::lengthRow(const QString& name) {
    LengthFields f;
    f.kind = new QComboBox;
    f.kind->setObjectName(QStringLiteral("workload.") + name + QStringLiteral(".kind"));
    for (auto k : kKinds) f.kind->addItem(QString::fromUtf8(lab::lengthKindName(k)));
    f.a = realBox(name + QStringLiteral(".a"), 0, 1e7, 1);
    f.b = realBox(name + QStringLiteral(".b"), 0, 1e7, 1);
    return f;
}

lab::LengthDist WorkloadDesigner::readLength(const LengthFields& f) {
    lab::LengthDist d;
    d.kind = kKinds[std::max(0, f.kind->currentIndex())];
    d.a = f.a->value();
    d.b = f.b->value();
    d.min = 1;
    d.max = std::max<int64_t>(1, static_cast<int64_t>(std::max(d.a, d.b) * (d.kind == lab::LengthDist::Kind::Fixed ||
                                                                                     d.kind == lab::LengthDist::Kind::Uniform
                                                                                 ? 1
                                                                                 : 8)));
    return d;
}

void WorkloadDesigner::writeLength(const LengthFields& f, const lab::LengthDist& d) {
    for (int i = 0; i < 4; ++i)
        if (kKinds[i] == d.kind) f.kind->setCurrentIndex(i);
    f.a->setValue(d.a);
    f.b->setValue(d.b);
}

lab::WorkloadSpec WorkloadDesigner::spec() const {
    lab::WorkloadSpec s;
    s.name = m_name.isEmpty() ? m_builtin->currentText().toStdString() : m_name.toStdString();
    s.requests = m_requests->value();
    s.input = readLength(m_input);
    s.output = readLength(m_output);
    s.sharedPrefix.groups = m_groups->value();
    s.sharedPrefix.perGroup = m_perGroup->value();
    s.sharedPrefix.prefixTokens = m_prefix->value();
    s.sharedPrefix.suffixTokens = m_suffix->value();
    s.multiTurn.conversations = m_conversations->value();
    s.multiTurn.turns = m_turns->value();
    s.multiTurn.userTokens = readLength(m_user);
    s.arrival.kind = kArrivals[std::max(0, m_arrival->currentIndex())];
    s.arrival.concurrency = m_concurrency->value();
    s.arrival.rate = m_rate->value();
    s.arrival.burstiness = m_burstiness->value();
    s.arrival.rampSeconds = m_ramp->value();
    s.warmupRequests = m_warmup->value();
    s.seed = static_cast<uint64_t>(m_seed->value());
    s.images.perRequest = m_imagesPerRequest->value();
    s.images.width = m_imageWidth->value();
    s.images.height = m_imageHeight->value();
    s.images.distinct = m_imagesDistinct->value();
    return s;
}

void WorkloadDesigner::setSpec(const lab::WorkloadSpec& s) {
    m_name = QString::fromStdString(s.name);
    m_requests->setValue(static_cast<int>(s.requests));
    writeLength(m_input, s.input);
    writeLength(m_output, s.output);
    m_groups->setValue(s.sharedPrefix.groups);
    m_perGroup->setValue(s.sharedPrefix.perGroup);
    m_prefix->setValue(static_cast<int>(s.sharedPrefix.prefixTokens));
    m_suffix->setValue(static_cast<int>(s.sharedPrefix.suffixTokens));
    m_conversations->setValue(s.multiTurn.conversations);
    m_turns->setValue(s.multiTurn.turns);
    writeLength(m_user, s.multiTurn.userTokens);
    for (int i = 0; i < 4; ++i)
        if (kArrivals[i] == s.arrival.kind) m_arrival->setCurrentIndex(i);
    m_concurrency->setValue(s.arrival.concurrency);
    m_rate->setValue(s.arrival.rate);
    m_burstiness->setValue(s.arrival.burstiness);
    m_ramp->setValue(s.arrival.rampSeconds);
    m_warmup->setValue(s.warmupRequests);
    m_seed->setValue(static_cast<int>(s.seed));
    m_imagesPerRequest->setValue(s.images.perRequest);
    m_imageWidth->setValue(s.images.width);
    m_imageHeight->setValue(s.images.height);
    m_imagesDistinct->setValue(s.images.distinct);
    emit specChanged();
}

void WorkloadDesigner::loadFile() {
    const QString f = QFileDialog::getOpenFileName(this, tr("Load workload"), QString(), tr("Workloads (*.json)"));
    if (f.isEmpty()) return;
    QFile file(f);
    if (!file.open(QIODevice::ReadOnly)) {
        QMessageBox::warning(this, tr("Load workload"), tr("Cannot read %1").arg(f));
        return;
    }
    try {
        setSpec(lab::parseWorkloadSpec(nlohmann::json::parse(file.readAll().toStdString())));
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Load workload"),
                             tr("%1 is not a workload spec: %2").arg(f, QString::fromUtf8(e.what())));
    }
}

void WorkloadDesigner::saveFile() {
    const QString f = QFileDialog::getSaveFileName(this, tr("Save workload"), QString(), tr("Workloads (*.json)"));
    if (f.isEmpty()) return;
    QFile file(f);
    const std::string text = lab::toJson(spec()).dump(2) + "\n";
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()))
        QMessageBox::warning(this, tr("Save workload"), tr("Cannot write %1").arg(f));
}

} // namespace mb::gui
