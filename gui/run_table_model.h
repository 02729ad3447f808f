// The History page's table: one row per stored run (id, created, name, tags, status, candidates).
#pragma once

#include "gui/store_worker.h"

#include <QAbstractTableModel>

namespace mb::gui {

// UI thread. The rows are an immutable value swapped in whole by setRuns() (a model reset),
// never mutated from another thread. Sorting and filtering are left to a
// QSortFilterProxyModel; SortRole gives numbers for the id column.
class RunTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Created, Name, Tags, Status, Profiles, Model, ColumnCount };
    static constexpr int SortRole = Qt::UserRole + 1;
    static constexpr int RunIdRole = Qt::UserRole + 2;

    using QAbstractTableModel::QAbstractTableModel;

    void setRuns(RunListingList runs);
    const RunListingList& runs() const { return m_runs; }
    qint64 runIdAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    RunListingList m_runs;
};

} // namespace mb::gui
