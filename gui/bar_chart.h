// Grouped bar charts (selection scores and cost, the migration's prompt histogram).
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

class QChart;
class QValueAxis;

namespace mb::gui {

// Replaces `chart`'s content with one bar set per entry of `sets` over `categories`
// (candidate A blue, B orange, as in the benchmark charts). Returns the value axis, ranged
// 0 to 1.1 × the largest bar (1 when there is none), for callers that want other ticks.
QValueAxis* setBarChart(QChart* chart, const QStringList& categories,
                        const std::vector<std::pair<QString, QList<qreal>>>& sets, const QString& yTitle);

} // namespace mb::gui
