// setBarChart: series and axes rebuilt in one place.
#include "gui/bar_chart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QValueAxis>

#include <algorithm>

namespace mb::gui {

QValueAxis* setBarChart(QChart* chart, const QStringList& categories,
                        const std::vector<std::pair<QString, QList<qreal>>>& sets, const QString& yTitle) {
    chart->removeAllSeries();
    for (auto* a : chart->axes()) chart->removeAxis(a);
    auto* series = new QBarSeries;
    qreal top = 0;
    const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e)};
    int i = 0;
    for (const auto& [name, values] : sets) {
        auto* set = new QBarSet(name);
        set->append(values);
        set->setColor(colors[i++ % 2]);
        for (qreal v : values) top = std::max(top, v);
        series->append(set);
    }
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    auto* y = new QValueAxis;
    y->setRange(0, top > 0 ? top * 1.1 : 1);
    y->setTitleText(yTitle);
    y->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    return y;
}

} // namespace mb::gui
