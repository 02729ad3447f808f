// BenchmarkCharts: Qt Charts views fed by chartPoints().
#include "gui/benchmark_charts.h"

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>

namespace mb::gui {

namespace {
const QColor kColorA(0x1f, 0x77, 0xb4); // candidate A: blue
const QColor kColorB(0xff, 0x7f, 0x0e); // candidate B: orange
} // namespace

BenchmarkCharts::BenchmarkCharts(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    struct Spec {
        const char *key, *title, *x, *y;
        bool scatter;
    };
    const Spec specs[] = {
        {"ttft_histogram", "TTFT histogram", "TTFT (ms)", "requests", false},
        {"e2e_cdf", "End-to-end latency CDF", "e2e (ms)", "fraction", false},
        {"itl_cdf", "Inter-token latency CDF", "gap (ms)", "fraction", false},
        {"ttft_over_time", "TTFT over time", "time (s)", "TTFT (ms)", true},
        {"hit_rate", "Prefix-cache hit rate", "time (s)", "hits / queries", false},
        {"throughput", "Output tokens/s", "time (s)", "tokens/s", false},
        {"kv_memory", "KV memory in use", "time (s)", "MiB", false},
    };
    int i = 0;
    for (const Spec& s : specs) {
        Chart c = makeChart(QString::fromLatin1(s.key), tr(s.title), tr(s.x), tr(s.y), s.scatter);
        grid->addWidget(c.view, i / 4, i % 4);
        m_charts[QString::fromLatin1(s.key)] = c;
        ++i;
    }
}

BenchmarkCharts::Chart BenchmarkCharts::makeChart(const QString& key, const QString& title, const QString& xTitle,
                                                  const QString& yTitle, bool scatter) {
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(2, 2, 2, 2));
    Chart c;
    auto make = [&](const QColor& color) -> QXYSeries* {
        QXYSeries* s;
        if (scatter) {
            auto* sc = new QScatterSeries;
            sc->setMarkerSize(6);
            sc->setBorderColor(color);
            s = sc;
        } else {
            s = new QLineSeries;
            QPen pen(color);
            pen.setWidthF(2);
            s->setPen(pen);
        }
        s->setColor(color);
        s->setUseOpenGL(false);
        chart->addSeries(s);
        return s;
    };
    c.a = make(kColorA);
    c.b = make(kColorB);
    c.a->setName(tr("A"));
    c.b->setName(tr("B"));
    auto* x = new QValueAxis;
    x->setTitleText(xTitle);
    x->setLabelFormat(QStringLiteral("%.3g"));
    x->setTickCount(5);
    auto* y = new QValueAxis;
    y->setTitleText(yTitle);
    y->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (auto* s : {c.a, c.b}) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
    c.view = new QChartView(chart);
    c.view->setObjectName(QStringLiteral("chart.") + key);
    c.view->setRenderHint(QPainter::Antialiasing);
    c.view->setMinimumSize(260, 200);
    return c;
}

void BenchmarkCharts::feed(Chart& chart, const QList<QPointF>& a, const QList<QPointF>& b, double yMinFloor) {
    chart.a->replace(a);
    chart.b->replace(b);
    double x0 = 0, x1 = 1, y0 = yMinFloor, y1 = yMinFloor + 1;
    bool any = false;
    for (const auto* list : {&a, &b})
        for (const QPointF& p : *list) {
            if (!any) {
                x0 = x1 = p.x();
                y1 = p.y();
                any = true;
            }
            x0 = std::min(x0, p.x());
            x1 = std::max(x1, p.x());
            y1 = std::max(y1, p.y());
        }
    if (!any) return;
    x0 = std::min(x0, 0.0);
    if (x1 <= x0) x1 = x0 + 1;
    if (y1 <= y0) y1 = y0 + 1;
    const auto axes = chart.view->chart()->axes();
    for (auto* axis : axes) {
        auto* v = qobject_cast<QValueAxis*>(axis);
        if (!v) continue;
        if (v->orientation() == Qt::Horizontal) v->setRange(x0, x1);
        else v->setRange(y0, y1 * 1.05);
    }
}

void BenchmarkCharts::setInputs(const std::map<std::string, ChartInput>& inputs,
                                const std::map<std::string, QString>& names) {
    const auto points = chartPoints(inputs);
    static const ChartPoints kNone;
    auto of = [&](const char* label) -> const ChartPoints& {
        const auto it = points.find(label);
        return it == points.end() ? kNone : it->second;
    };
    const ChartPoints& a = of("a");
    const ChartPoints& b = of("b");
    for (auto& [key, chart] : m_charts) {
        if (const auto it = names.find("a"); it != names.end()) chart.a->setName(it->second);
        if (const auto it = names.find("b"); it != names.end()) chart.b->setName(it->second);
        // A one-candidate run (the migration's monitoring) shows no legend entry for B.
        for (auto* marker : chart.view->chart()->legend()->markers(chart.b)) marker->setVisible(names.count("b") > 0);
    }
    feed(m_charts["ttft_histogram"], a.ttftHistogram, b.ttftHistogram, 0);
    feed(m_charts["e2e_cdf"], a.e2eCdf, b.e2eCdf, 0);
    feed(m_charts["itl_cdf"], a.itlCdf, b.itlCdf, 0);
    feed(m_charts["ttft_over_time"], a.ttftOverTime, b.ttftOverTime, 0);
    feed(m_charts["hit_rate"], a.hitRate, b.hitRate, 0);
    feed(m_charts["throughput"], a.throughput, b.throughput, 0);
    feed(m_charts["kv_memory"], a.kvMiB, b.kvMiB, 0);
}

void BenchmarkCharts::clear() {
    for (auto& [key, chart] : m_charts) {
        chart.a->clear();
        chart.b->clear();
    }
}

qsizetype BenchmarkCharts::pointCount(const QString& key, const std::string& label) const {
    const auto it = m_charts.find(key);
    if (it == m_charts.end()) return -1;
    return (label == "a" ? it->second.a : it->second.b)->count();
}

} // namespace mb::gui
