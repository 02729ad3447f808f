// One candidate's settings: model, profile, device, threads and (optionally) sampling.
#pragma once

#include "gui/gui_types.h"

#include <QGroupBox>

#include <thread>

class QComboBox;
class QFormLayout;
class QLabel;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace mb::gui {

// UI thread. Child widgets are named "<objectName>.model", ".profile", ".device",
// ".threads", ".temperature", ".top_k", ".top_p", ".seed", ".api_key_env", ".plugins",
// ".plugins_browse", ".plugins_description", ".mmproj", ".mmproj_browse" for tests. The
// profile may also be "remote:http://HOST:PORT[/v1][#MODEL]" (an OpenAI-compatible server;
// the model file then only supplies the tokenizer, and the mmproj row is disabled: remote
// candidates take no images).
class CandidateEditor : public QGroupBox {
    Q_OBJECT
public:
    CandidateEditor(const QString& label, const QString& title, bool withSampling, QWidget* parent = nullptr);
    ~CandidateEditor() override; // joins the chain description's thread

    CandidateSpec spec() const;
    void setModelPath(const QString& path);
    void setProfile(const QString& profile);
    void setThreads(int threads);
    void setDevices(const QStringList& ids);
    // Adds a model to the choices (most recent first) without selecting it.
    void addModelChoice(const QString& path);
    // The plugin chain file; its description (or load error, in red) follows once loaded
    // off the UI thread (a script entry starts its sandboxed process), checked against
    // the approvals of `setDatabasePath`'s store (empty: the app's default).
    void setPluginsPath(const QString& path);
    void setDatabasePath(const QString& path);
    // The vision encoder + projector (llava mmproj GGUF) for prompts with images; empty: none.
    void setMmprojPath(const QString& path);
    QString pluginsDescription() const; // the label's text (tests)
    bool pluginsOk() const { return m_pluginsOk; }

signals:
    void pluginsDescribed(const QString& text, bool ok);

private:
    void describePlugins();
    void startDescribe(const QString& file);
    void describeDone(const QString& file, const QString& text, bool ok);
    void showDescription(const QString& file, const QString& text, bool ok);
    void addPluginsRow(QFormLayout* form, const QString& prefix);
    void addMmprojRow(QFormLayout* form, const QString& prefix);

    QString m_label;
    QComboBox* m_model;
    QComboBox* m_profile;
    QComboBox* m_device;
    QLineEdit* m_apiKeyEnv;
    QSpinBox* m_threads;
    QDoubleSpinBox* m_temperature = nullptr;
    QSpinBox* m_topK = nullptr;
    QDoubleSpinBox* m_topP = nullptr;
    QSpinBox* m_seed = nullptr;
    QLineEdit* m_plugins = nullptr;
    QLabel* m_pluginsInfo = nullptr;
    QLineEdit* m_mmproj = nullptr;
    QWidget* m_mmprojBrowse = nullptr;
    QString m_dbPath;
    bool m_pluginsOk = true;
    // One description load at a time; a file chosen meanwhile waits in m_pendingPlugins.
    std::thread m_describer;
    bool m_describing = false;
    QString m_pendingPlugins;
};

} // namespace mb::gui
