// SettingsPage: a form over AppSettings with file pickers.
#include "gui/settings_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <thread>

namespace mb::gui {

namespace {

QHBoxLayout* pathRow(QLineEdit* edit, QWidget* parent, const QString& title, const QString& filter, bool save) {
    auto* row = new QHBoxLayout;
    auto* browse = new QPushButton(QObject::tr("…"));
    QObject::connect(browse, &QPushButton::clicked, parent, [=] {
        const QString f = save ? QFileDialog::getSaveFileName(parent, title, edit->text(), filter,
                                                              nullptr, QFileDialog::DontConfirmOverwrite)
                               : QFileDialog::getOpenFileName(parent, title, edit->text(), filter);
        if (!f.isEmpty()) edit->setText(f);
    });
    row->addWidget(edit, 1);
    row->addWidget(browse);
    return row;
}

} // namespace

SettingsPage::SettingsPage(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("page.settings"));
    auto* outer = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_device = new QComboBox;
    m_device->setObjectName(QStringLiteral("settings.device"));
    m_device->addItem(QStringLiteral("cpu"));
    form->addRow(tr("Device"), m_device);
    m_threads = new QSpinBox;
    m_threads->setObjectName(QStringLiteral("settings.threads"));
    m_threads->setRange(0, 256);
    m_threads->setSpecialValueText(tr("all cores (%1)").arg(std::max(1u, std::thread::hardware_concurrency())));
    form->addRow(tr("Threads"), m_threads);
    m_db = new QLineEdit;
    m_db->setObjectName(QStringLiteral("settings.database"));
    m_db->setPlaceholderText(tr("default: ~/.local/share/modebench/modebench.db"));
    form->addRow(tr("Run database"), pathRow(m_db, this, tr("Run database"), tr("SQLite (*.db);;All files (*)"), true));
    m_storeStatus = new QLabel;
    m_storeStatus->setObjectName(QStringLiteral("settings.store_status"));
    m_storeStatus->setWordWrap(true);
    form->addRow(QString(), m_storeStatus);
    m_prices = new QLineEdit;
    m_prices->setObjectName(QStringLiteral("settings.price_sheet"));
    m_prices->setPlaceholderText(tr("JSON price sheet for the selection framework (optional)"));
    form->addRow(tr("Price sheet"), pathRow(m_prices, this, tr("Price sheet"), tr("JSON (*.json)"), false));
    m_model = new QLineEdit;
    m_model->setObjectName(QStringLiteral("settings.default_model"));
    m_model->setPlaceholderText(tr("GGUF model the pages start with (optional)"));
    form->addRow(tr("Default model"), pathRow(m_model, this, tr("Default model"), tr("GGUF models (*.gguf)"), false));
    m_unsandboxed = new QCheckBox(tr("Run script plugins even where a sandbox layer is missing"));
    m_unsandboxed->setObjectName(QStringLiteral("settings.allow_unsandboxed"));
    m_unsandboxed->setToolTip(tr("Recorded with each run; the Plugins page shows which layers hold here"));
    form->addRow(tr("Plugins"), m_unsandboxed);
    outer->addLayout(form);
    auto* save = new QPushButton(tr("Save"));
    save->setObjectName(QStringLiteral("settings.save"));
    auto* row = new QHBoxLayout;
    row->addStretch(1);
    row->addWidget(save);
    outer->addLayout(row);
    outer->addStretch(1);
    connect(save, &QPushButton::clicked, this, [this] {
        const AppSettings s = settings();
        s.save();
        emit settingsSaved(s);
    });
}

void SettingsPage::setSettings(const AppSettings& s) {
    m_device->setCurrentText(s.device);
    m_threads->setValue(s.threads);
    m_db->setText(s.databasePath);
    m_prices->setText(s.priceSheet);
    m_model->setText(s.defaultModel);
    m_unsandboxed->setChecked(s.allowUnsandboxed);
}

AppSettings SettingsPage::settings() const {
    AppSettings s;
    s.device = m_device->currentText();
    s.threads = m_threads->value();
    s.databasePath = m_db->text().trimmed();
    s.priceSheet = m_prices->text().trimmed();
    s.defaultModel = m_model->text().trimmed();
    s.allowUnsandboxed = m_unsandboxed->isChecked();
    return s;
}

void SettingsPage::setDevices(const QStringList& ids) {
    const QString current = m_device->currentText();
    m_device->clear();
    m_device->addItems(ids);
    if (ids.contains(current)) m_device->setCurrentText(current);
}

void SettingsPage::setStoreStatus(const QString& text, bool error) {
    m_storeStatus->setText(text);
    m_storeStatus->setStyleSheet(error ? QStringLiteral("color:#c0392b") : QString());
}

} // namespace mb::gui
