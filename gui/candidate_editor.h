// One candidate's settings: model, profile, device, threads and (optionally) sampling.
#pragma once

#include "gui/gui_types.h"

#include <QGroupBox>

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace mb::gui {

// UI thread. Child widgets are named "<objectName>.model", ".profile", ".device",
// ".threads", ".temperature", ".top_k", ".top_p", ".seed", ".api_key_env" for tests. The
// profile may also be "remote:http://HOST:PORT[/v1][#MODEL]" (an OpenAI-compatible server;
// the model file then only supplies the tokenizer).
class CandidateEditor : public QGroupBox {
    Q_OBJECT
public:
    CandidateEditor(const QString& label, const QString& title, bool withSampling, QWidget* parent = nullptr);

    CandidateSpec spec() const;
    void setModelPath(const QString& path);
    void setProfile(const QString& profile);
    void setThreads(int threads);
    void setDevices(const QStringList& ids);
    // Adds a model to the choices (most recent first) without selecting it.
    void addModelChoice(const QString& path);

private:
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
};

} // namespace mb::gui
