// The percentile table beside the charts: one row per metric, a column per candidate and B/A.
#pragma once

#include "lab/metrics.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace mb::gui {

// UI thread; setSummaries() swaps every value in (a model reset).
class SummaryTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;

    // One summary per column, titled by `names` ("A fast", "B regular"); with exactly two a
    // third column gives B/A.
    void setSummaries(const std::vector<lab::RunSummary>& summaries, const QStringList& names);
    // The value shown in `row` for column `column` (tests).
    double value(int row, int column) const;
    int rowOf(const QString& metric) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void addPostprocessRows(const std::vector<lab::RunSummary>& summaries);
    void addImageRows(const std::vector<lab::RunSummary>& summaries);
    struct Row {
        QString metric;
        int precision;
        std::vector<double> values;
    };
    std::vector<Row> m_rows;
    QStringList m_names;
};

} // namespace mb::gui
