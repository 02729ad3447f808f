// A form over lab::WorkloadSpec: a built-in start, shapes, lengths, arrivals, synthetic images, warm-up and seed.
#pragma once

#include "lab/workload.h"

#include <QGroupBox>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QSpinBox;

namespace mb::gui {

// UI thread. spec() reads the form; setSpec() fills it (a built-in or a loaded JSON file).
// Child widgets are named "workload.<field>" for tests.
class WorkloadDesigner : public QGroupBox {
    Q_OBJECT
public:
    explicit WorkloadDesigner(QWidget* parent = nullptr);

    lab::WorkloadSpec spec() const;
    void setSpec(const lab::WorkloadSpec& spec);

signals:
    void specChanged();

private:
    struct LengthFields {
        QComboBox* kind;
        QDoubleSpinBox* a;
        QDoubleSpinBox* b;
    };
    LengthFields lengthRow(const QString& name);
    void addImagesRow(QFormLayout* form);
    static lab::LengthDist readLength(const LengthFields& f);
    static void writeLength(const LengthFields& f, const lab::LengthDist& d);
    void loadFile();
    void saveFile();

    QString m_name;
    QComboBox* m_builtin;
    QSpinBox* m_requests;
    LengthFields m_input{}, m_output{}, m_user{};
    QSpinBox *m_groups, *m_perGroup, *m_prefix, *m_suffix;
    QSpinBox *m_conversations, *m_turns;
    QComboBox* m_arrival;
    QSpinBox* m_concurrency;
    QDoubleSpinBox *m_rate, *m_burstiness, *m_ramp;
    QSpinBox *m_warmup, *m_seed;
    QSpinBox *m_imagesPerRequest, *m_imageWidth, *m_imageHeight, *m_imagesDistinct;
};

} // namespace mb::gui
