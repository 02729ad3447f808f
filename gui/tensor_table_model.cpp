// TensorTableModel: the tensors of a ModelDescription as table rows.
#include "gui/tensor_table_model.h"

namespace mb::gui {

QString formatBytes(qint64 bytes) {
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024 * 1024) return QStringLiteral("%1 GiB").arg(b / (1024.0 * 1024 * 1024), 0, 'f', 2);
    if (b >= 1024.0 * 1024) return QStringLiteral("%1 MiB").arg(b / (1024.0 * 1024), 0, 'f', 1);
    if (b >= 1024.0) return QStringLiteral("%1 KiB").arg(b / 1024.0, 0, 'f', 1);
    return QStringLiteral("%1 B").arg(bytes);
}

void TensorTableModel::setModel(ModelDescription model) {
    beginResetModel();
    m_model = std::move(model);
    endResetModel();
}

int TensorTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_model.tensors.size());
}

int TensorTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const auto& t = m_model.tensors[static_cast<size_t>(index.row())];
    if (role == Qt::TextAlignmentRole && index.column() == Bytes) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Name: return t.name;
    case Type: return t.type;
    case Shape: return t.shape;
    case Bytes: return formatBytes(t.bytes);
    default: return {};
    }
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Name: return tr("Tensor");
    case Type: return tr("Type");
    case Shape: return tr("Shape");
    case Bytes: return tr("Bytes");
    default: return {};
    }
}

} // namespace mb::gui
