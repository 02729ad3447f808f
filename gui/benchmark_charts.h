// The seven overlaid A/B charts of a benchmark: TTFT histogram, CDFs and time series.
#pragma once

#include "gui/chart_data.h"

#include <QWidget>

#include <map>
#include <string>

class QChart;
class QChartView;
class QLineSeries;
class QXYSeries;

namespace mb::gui {

// UI thread only. setInputs() recomputes every chart and feeds the series with replace()
// (never clear + append per point). Chart views are named "chart.<key>" for tests:
// ttft_histogram, e2e_cdf, itl_cdf, ttft_over_time, hit_rate, throughput, kv_memory.
class BenchmarkCharts : public QWidget {
    Q_OBJECT
public:
    explicit BenchmarkCharts(QWidget* parent = nullptr);

    // Labels beyond "a" and "b" are ignored; `names` gives each label's legend text.
    void setInputs(const std::map<std::string, ChartInput>& inputs, const std::map<std::string, QString>& names);
    void clear();

    // Points currently shown by chart `key` for `label` (tests and screenshots).
    qsizetype pointCount(const QString& key, const std::string& label) const;

private:
    struct Chart {
        QChartView* view = nullptr;
        QXYSeries* a = nullptr;
        QXYSeries* b = nullptr;
    };
    Chart makeChart(const QString& key, const QString& title, const QString& xTitle, const QString& yTitle,
                    bool scatter);
    void feed(Chart& chart, const QList<QPointF>& a, const QList<QPointF>& b, double yMinFloor);

    std::map<QString, Chart> m_charts;
};

} // namespace mb::gui
