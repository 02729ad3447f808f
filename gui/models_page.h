// The Models page: open a GGUF (dialog or drop), create a synthetic model, quantise, show shapes and bytes.
#pragma once

#include "gui/engine_backend.h"
#include "gui/tensor_table_model.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace mb::gui {

// UI thread. Long work (create, quantise) shows progress and can be cancelled; a model that
// fails to load shows the loader's message. Widgets are named "models.<name>" (open,
// preset, dtype, seed, create, quantize_target, quantize, cancel, progress, info, error,
// tensors, use, and precision_candidate, precision_candidate_precision,
// precision_reference_precision, precision_prompts, precision_gen_tokens, precision_run,
// precision_result for the precision A/B).
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
    // Precision A/B of the open model (the reference) against a candidate: another file
    // (empty: the open model) at a precision; the result appears in precision_result.
    void comparePrecision(const QString& candidatePath, const QString& candidatePrecision,
                          const QString& promptFile);
    void setThreads(int threads) { m_threads = threads; }

signals:
    void precisionCompared(const mb::lab::PrecisionCheck& result);
    void modelChosen(const QString& path); // "Use this model" (pages and the default follow)
    void modelInspected(const QString& path);
    void inspectFailed(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void startLongJob(const QString& what, const QString& cancelledText);
    QWidget* buildPrecisionBox();
    void endLongJob();

    EngineBackend* m_engine;
    TensorTableModel m_tensors;
    QString m_path;
    qint64 m_inspectJob = 0, m_longJob = 0;
    CancelFlag m_cancel;
    QString m_cancelledText;
    int m_threads = 1;
    QComboBox* m_preset;
    QComboBox* m_dtype;
    QSpinBox* m_seed;
    QComboBox* m_target;
    QPushButton* m_create;
    QPushButton* m_quantize;
    QLineEdit* m_precisionCandidate;
    QComboBox* m_candidatePrecision;
    QComboBox* m_referencePrecision;
    QLineEdit* m_precisionPrompts;
    QSpinBox* m_precisionGen;
    QPushButton* m_precisionRun;
    QLabel* m_precisionResult;
    QPushButton* m_cancelButton;
    QPushButton* m_use;
    QProgressBar* m_progress;
    QLabel* m_info;
    QLabel* m_error;
};

} // namespace mb::gui
