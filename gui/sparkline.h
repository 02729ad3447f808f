// A tiny line chart of per-token latencies (ms), drawn with QPainter.
#pragma once

#include <QWidget>

#include <vector>

namespace mb::gui {

// UI thread. setValues() stores and repaints; the line spans the widget, y from 0 to the max.
class Sparkline : public QWidget {
    Q_OBJECT
public:
    explicit Sparkline(QWidget* parent = nullptr);
    void setValues(std::vector<double> values);
    const std::vector<double>& values() const { return m_values; }
    QSize sizeHint() const override { return {240, 40}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<double> m_values;
};

} // namespace mb::gui
