// The Models page: open a GGUF (dialog or drop), create a synthetic model, quantise, show shapes and bytes.
#pragma once

#include "gui/engine_backend.h"
#include "gui/tensor_table_model.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace mb::gui {

// UI thread. Long work (create, quantise) shows progress and can be cancelled; a model that
// fails to load shows the loader's message. Widgets are named "models.<name>" (open,
// preset, dtype, seed, create, quantize_target, quantize, cancel, progress, info, error,
// tensors, use).
class ModelsPage : public QWidget {
    Q_OBJECT
public:
    ModelsPage(EngineBackend* engine, QWidget* parent = nullptr);

    TensorTableModel& tensors() { return m_tensors; }
    const QString& currentPath() const { return m_path; }
    // Reads the file's header on the engine thread; the page shows it or the error.
    void inspect(const QString& path);
    void createSynthetic(const QString& preset, const QString& dtype, quint64 seed, const QString& outPath);
    void quantize(const QString& target, const QString& outPath);

signals:
    void modelChosen(const QString& path); // "Use this model" (pages and the default follow)
    void modelInspected(const QString& path);
    void inspectFailed(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void startLongJob(const QString& what);
    void endLongJob();

    EngineBackend* m_engine;
    TensorTableModel m_tensors;
    QString m_path;
    qint64 m_inspectJob = 0, m_longJob = 0;
    CancelFlag m_cancel;
    QComboBox* m_preset;
    QComboBox* m_dtype;
    QSpinBox* m_seed;
    QComboBox* m_target;
    QPushButton* m_create;
    QPushButton* m_quantize;
    QPushButton* m_cancelButton;
    QPushButton* m_use;
    QProgressBar* m_progress;
    QLabel* m_info;
    QLabel* m_error;
};

} // namespace mb::gui
