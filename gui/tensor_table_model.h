// The Models page's tensor list: name, type, shape and bytes of every tensor of a GGUF file.
#pragma once

#include "gui/gui_types.h"

#include <QAbstractTableModel>

namespace mb::gui {

// UI thread; setModel() swaps the description in (a model reset).
class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Type, Shape, Bytes, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void setModel(ModelDescription model);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    ModelDescription m_model;
};

// "1.5 GiB", "12.0 MiB", "512 B".
QString formatBytes(qint64 bytes);

} // namespace mb::gui
