// RunTableModel: RunListing rows as table cells.
#include "gui/run_table_model.h"

#include <QStringList>

namespace mb::gui {

void RunTableModel::setRuns(RunListingList runs) {
    beginResetModel();
    m_runs = std::move(runs);
    endResetModel();
}

qint64 RunTableModel::runIdAt(int row) const {
    return row >= 0 && row < static_cast<int>(m_runs.size()) ? m_runs[static_cast<size_t>(row)].id : 0;
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const db::RunListing& r = m_runs[static_cast<size_t>(index.row())];
    if (role == RunIdRole) return QVariant::fromValue<qint64>(r.id);
    if (role != Qt::DisplayRole && role != SortRole && role != Qt::ToolTipRole) return {};
    switch (index.column()) {
    case Id: return role == SortRole ? QVariant::fromValue<qint64>(r.id) : QVariant(QString::number(r.id));
    case Created: return QString::fromStdString(r.createdAt);
    case Name: return QString::fromStdString(r.name);
    case Tags: {
        QStringList t;
        for (const auto& s : r.tags) t << QString::fromStdString(s);
        return t.join(QStringLiteral(", "));
    }
    case Status: return QString::fromUtf8(lab::runStatusName(r.status));
    case Profiles: {
        QStringList p;
        for (const auto& c : r.candidates)
            p << QStringLiteral("%1: %2").arg(QString::fromStdString(c.label),
                                              QString::fromStdString(c.profileName.empty() ? c.targetKind : c.profileName));
        return p.join(QStringLiteral(", "));
    }
    case Model: {
        QStringList m;
        for (const auto& c : r.candidates) {
            const QString name = QString::fromStdString(c.modelPath).section(QLatin1Char('/'), -1);
            if (!m.contains(name)) m << name;
        }
        return m.join(QStringLiteral(", "));
    }
    default: return {};
    }
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Id: return tr("Run");
    case Created: return tr("Created (UTC)");
    case Name: return tr("Name");
    case Tags: return tr("Tags");
    case Status: return tr("Status");
    case Profiles: return tr("Candidates");
    case Model: return tr("Model");
    default: return {};
    }
}

} // namespace mb::gui
