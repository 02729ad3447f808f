// The selection framework's inputs as a form: SLOs, input lengths, monthly volume, weights, operations, needs.
#pragma once

#include "lab/requirements.h"

#include <QGroupBox>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;

namespace mb::gui {

// UI thread. requirements() builds a lab::Requirements (throws lab::RequirementsError when
// no SLO bound is set); setRequirements() fills the form (the first TTFT and e2e bounds
// are shown; others are kept and written back unchanged). Load/Save read and write the
// JSON file format of PRODUCT.md §6. Widgets are named "requirements.<field>".
class RequirementsForm : public QGroupBox {
    Q_OBJECT
public:
    explicit RequirementsForm(QWidget* parent = nullptr);

    lab::Requirements requirements() const;
    void setRequirements(const lab::Requirements& r);
    // The directory relative prompt files are read from (the loaded file's).
    QString baseDirectory() const { return m_baseDirectory; }

private:
    void load();
    void save();

    QComboBox* m_ttftStat;
    QDoubleSpinBox* m_ttftLimit;
    QComboBox* m_e2eStat;
    QDoubleSpinBox* m_e2eLimit;
    QLineEdit* m_promptFile;
    QDoubleSpinBox* m_tolerance;
    QDoubleSpinBox* m_monthlyRequests;
    QDoubleSpinBox* m_inputTokens;
    QDoubleSpinBox* m_outputTokens;
    QDoubleSpinBox* m_wLatency;
    QDoubleSpinBox* m_wCost;
    QDoubleSpinBox* m_wFeatures;
    QComboBox* m_ops;
    QCheckBox* m_hotUpdates;
    QCheckBox* m_customBatching;
    std::vector<lab::SloEntry> m_otherBounds; // loaded bounds the form does not show
    QString m_baseDirectory;
};

} // namespace mb::gui
