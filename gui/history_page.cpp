// HistoryPage: RunTableModel behind a proxy, store verbs on the toolbar, a run's charts below.
#include "gui/history_page.h"

#include "gui/benchmark_charts.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

namespace mb::gui {

ChartInput chartInputOf(const db::StoredCandidate& c) {
    ChartInput in;
    in.records = c.requests;
    // A candidate without a prefix cache made no queries: no hit-rate curve (not a 0 line).
    bool queried = true;
    try {
        queried = nlohmann::json::parse(c.summaryJson).at("prefix_cache").value("queries", uint64_t{0}) > 0;
    } catch (const std::exception&) {
    }
    for (const auto& [name, points] : c.series) {
        if (name == "hit_rate" && queried)
            for (const auto& [x, y] : points) in.hitRate.emplace_back(x, y);
        if (name == "kv_bytes")
            for (const auto& [x, y] : points) in.kvMiB.emplace_back(x, y / (1024.0 * 1024.0));
    }
    return in;
}

HistoryPage::HistoryPage(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    setObjectName(QStringLiteral("page.history"));
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_filter = new QLineEdit;
    m_filter->setObjectName(QStringLiteral("history.filter"));
    m_filter->setPlaceholderText(tr("Filter by any column…"));
    m_filter->setClearButtonEnabled(true);
    bar->addWidget(m_filter, 1);
    auto button = [&](const char* name, const QString& text) {
        auto* b = new QPushButton(text);
        b->setObjectName(QStringLiteral("history.") + QLatin1String(name));
        bar->addWidget(b);
        return b;
    };
    auto* refreshButton = button("refresh", tr("Refresh"));
    auto* openButton = button("open", tr("Open"));
    auto* compareButton = button("compare", tr("Compare two"));
    auto* renameButton = button("rename", tr("Rename…"));
    auto* tagButton = button("tag", tr("Tags…"));
    auto* deleteButton = button("delete", tr("Delete"));
    auto* exportButton = button("export", tr("Export…"));
    layout->addLayout(bar);

    m_proxy.setSourceModel(&m_model);
    m_proxy.setSortRole(RunTableModel::SortRole);
    m_proxy.setFilterKeyColumn(-1);
    m_proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("history.table"));
    m_table->setModel(&m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunTableModel::Id, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();

    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("history.tabs"));
    auto* runView = new QSplitter(Qt::Vertical);
    m_charts = new BenchmarkCharts;
    m_charts->setObjectName(QStringLiteral("history.charts"));
    runView->addWidget(m_charts);
    auto* summary = new QTableView;
    summary->setObjectName(QStringLiteral("history.summary"));
    summary->setModel(&m_summary);
    summary->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    summary->verticalHeader()->hide();
    runView->addWidget(summary);
    m_tabs->addTab(runView, tr("Run"));
    m_diff = new QTableWidget;
    m_diff->setObjectName(QStringLiteral("history.diff"));
    m_tabs->addTab(m_diff, tr("Comparison"));

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_table);
    split->addWidget(m_tabs);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);
    m_status = new QLabel(tr("No runs loaded yet."));
    m_status->setObjectName(QStringLiteral("history.status"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(m_filter, &QLineEdit::textChanged, &m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(refreshButton, &QPushButton::clicked, this, &HistoryPage::refresh);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        openRun(m_proxy.data(index, RunTableModel::RunIdRole).toLongLong());
    });
    connect(openButton, &QPushButton::clicked, this, [this] {
        const auto runs = selectedRuns();
        if (runs.size() == 1) openRun(runs[0]);
        else setStatus(tr("Select one run to open."));
    });
    connect(compareButton, &QPushButton::clicked, this, [this] {
        const auto runs = selectedRuns();
        if (runs.size() == 2) compareRuns(runs[0], runs[1]);
        else setStatus(tr("Select exactly two runs to compare (Ctrl+click)."));
    });
    connect(renameButton, &QPushButton::clicked, this, [this] {
        const auto runs = selectedRuns();
        if (runs.size() != 1) return setStatus(tr("Select one run to rename."));
        const db::RunListing* run = listingOf(runs[0]);
        const QString current = run ? QString::fromStdString(run->name) : QString();
        bool ok = false;
        const QString name = QInputDialog::getText(this, tr("Rename run"), tr("Name"), QLineEdit::Normal, current, &ok);
        if (!ok || name == current) return;
        if (name.trimmed().isEmpty()) // as the CLI: a blank name would leave the run unnamed
            return setStatus(tr("A run name cannot be empty; run %1 keeps its name.").arg(runs[0]));
        m_mine.push_back(m_store->renameRun(runs[0], name));
    });
    connect(tagButton, &QPushButton::clicked, this, [this] {
        const auto runs = selectedRuns();
        if (runs.size() != 1) return setStatus(tr("Select one run to tag."));
        // The current tags, to edit: adding one keeps the others; only a tag deleted here goes.
        QStringList current;
        if (const db::RunListing* run = listingOf(runs[0]))
            for (const auto& t : run->tags) current << QString::fromStdString(t);
        bool ok = false;
        const QString text = QInputDialog::getText(this, tr("Tags"), tr("Tags, comma-separated (edit the list)"),
                                                   QLineEdit::Normal, current.join(QStringLiteral(", ")), &ok);
        if (!ok) return;
        QStringList tags;
        for (const QString& t : text.split(QLatin1Char(',')))
            if (!t.trimmed().isEmpty() && !tags.contains(t.trimmed())) tags << t.trimmed();
        if (tags == current) return;
        m_mine.push_back(m_store->setTags(runs[0], tags));
    });
    connect(deleteButton, &QPushButton::clicked, this, [this] {
        const auto runs = selectedRuns();
        if (runs.empty()) return setStatus(tr("Select the runs to delete."));
        if (QMessageBox::question(this, tr("Delete runs"), tr("Delete %n run(s)? This cannot be undone.", nullptr,
                                                               static_cast<int>(runs.size()))) != QMessageBox::Yes)
            return;
        // Saved selections citing a run stop its deletion; runHasSelections asks about them.
        for (qint64 id : runs) m_mine.push_back(m_store->deleteRun(id, false));
    });
    connect(exportButton, &QPushButton::clicked, this, [this] {
        const auto runs = selectedRuns();
        if (runs.size() != 1) return setStatus(tr("Select one run to export."));
        QString filter;
        const QString f = QFileDialog::getSaveFileName(this, tr("Export run"), QStringLiteral("run-%1.json").arg(runs[0]),
                                                       tr("Run document (*.json);;Requests as CSV (*.csv)"), &filter);
        if (f.isEmpty()) return;
        const QString format = f.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) || filter.contains(QLatin1String("csv"))
                                   ? QStringLiteral("csv")
                                   : QStringLiteral("json");
        m_mine.push_back(m_store->exportRun(runs[0], format, f));
    });

    connect(m_store, &StoreClient::runsListed, this, [this](qint64 id, const RunListingList& runs) {
        if (id != m_listRequest) return;
        m_model.setRuns(runs);
        setStatus(tr("%n run(s) in %1.", nullptr, static_cast<int>(runs.size())).arg(m_store->path()));
    });
    connect(m_store, &StoreClient::runOpened, this,
            [this](qint64 id, const db::StoredRun& run, const SummaryList& summaries) {
        if (id == m_loadRequest) showRun(run, summaries);
    });
    connect(m_store, &StoreClient::runsCompared, this, [this](qint64 id, const db::RunDiff& diff) {
        if (id == m_compareRequest) showDiff(diff);
    });
    connect(m_store, &StoreClient::runChanged, this, [this](qint64 id, qint64) {
        if (std::erase(m_mine, id)) refresh();
    });
    connect(m_store, &StoreClient::runHasSelections, this, [this](qint64 id, qint64 runId, const SelectionList& cited) {
        if (!std::erase(m_mine, id)) return;
        if (confirmDeletingSelections(runId, cited)) m_mine.push_back(m_store->deleteRun(runId, true));
        else setStatus(tr("Run %1 kept: saved selections cite it.").arg(runId));
    });
    connect(m_store, &StoreClient::runDeleted, this, [this](qint64, qint64 runId, const SelectionList& deleted) {
        if (!deleted.empty())
            setStatus(tr("Run %1 deleted with %n saved selection(s).", nullptr, static_cast<int>(deleted.size())).arg(runId));
    });
    connect(m_store, &StoreClient::runExported, this, [this](qint64 id, const QString& path) {
        if (std::erase(m_mine, id)) setStatus(tr("Exported to %1.").arg(path));
    });
    connect(m_store, &StoreClient::failed, this, [this](qint64 id, const QString& message) {
        if (id == m_listRequest || id == m_loadRequest || id == m_compareRequest || std::erase(m_mine, id))
            setStatus(tr("Store: %1").arg(message));
    });
    connect(m_store, &StoreClient::opened, this, [this] { refresh(); });
}

bool HistoryPage::confirmDeletingSelections(qint64 runId, const SelectionList& cited) {
    QStringList lines;
    for (const auto& s : cited) {
        QStringList runs;
        for (const int64_t r : s.runIds) runs << QStringLiteral("#%1").arg(r);
        QString line = tr("selection #%1 (runs %2, saved %3)")
                           .arg(s.id)
                           .arg(runs.join(QStringLiteral(" ")), QString::fromStdString(s.createdAt));
        if (!s.migrationJson.empty()) line += tr(", with its migration walk-through");
        lines << line;
    }
    QMessageBox box(QMessageBox::Warning, tr("Delete run and selections"),
                    tr("Run %1 is cited by %n saved selection(s):", nullptr, static_cast<int>(cited.size())).arg(runId),
                    QMessageBox::Yes | QMessageBox::No, this);
    box.setInformativeText(lines.join(QLatin1Char('\n')) +
                           tr("\n\nDeleting the run deletes these selections too. Delete them all?"));
    box.setDefaultButton(QMessageBox::No);
    return box.exec() == QMessageBox::Yes;
}

void HistoryPage::refresh() {
    m_listRequest = m_store->listRuns();
}

void HistoryPage::openRun(qint64 runId) {
    if (runId <= 0) return;
    m_loadRequest = m_store->openRun(runId);
    setStatus(tr("Loading run %1…").arg(runId));
}

void HistoryPage::compareRuns(qint64 first, qint64 second) {
    m_compareRequest = m_store->compareRuns({first, second});
}

const db::RunListing* HistoryPage::listingOf(qint64 runId) const {
    for (const auto& r : m_model.runs())
        if (r.id == runId) return &r;
    return nullptr;
}

std::vector<qint64> HistoryPage::selectedRuns() const {
    std::vector<qint64> ids;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows())
        ids.push_back(m_proxy.data(index, RunTableModel::RunIdRole).toLongLong());
    return ids;
}

void HistoryPage::showRun(const db::StoredRun& run, const SummaryList& summaries) {
    std::map<std::string, ChartInput> inputs;
    std::map<std::string, QString> names;
    QStringList columns;
    for (const auto& c : run.candidates) {
        inputs[c.info.label] = chartInputOf(c);
        QString profile;
        try {
            profile = QString::fromStdString(nlohmann::json::parse(c.info.profileJson).value("name", std::string()));
        } catch (const std::exception&) {
        }
        const QString name = QStringLiteral("%1 %2").arg(QString::fromStdString(c.info.label).toUpper(), profile);
        names[c.info.label] = name;
        columns << name;
    }
    m_charts->setInputs(inputs, names);
    m_summary.setSummaries(summaries, columns);
    m_tabs->setCurrentIndex(0);
    setStatus(tr("Run %1 \"%2\" (%3), %4 candidate(s).")
                  .arg(run.id)
                  .arg(QString::fromStdString(run.info.name), QString::fromUtf8(lab::runStatusName(run.status)))
                  .arg(run.candidates.size()));
    emit runOpened(run.id);
}

void HistoryPage::showDiff(const db::RunDiff& diff) {
    m_diff->clear();
    m_diff->setRowCount(static_cast<int>(diff.metrics.size()));
    m_diff->setColumnCount(static_cast<int>(diff.columns.size()));
    QStringList headers;
    for (const auto& c : diff.columns)
        headers << QStringLiteral("run %1 %2 %3").arg(c.runId).arg(QString::fromStdString(c.label), QString::fromStdString(c.profile));
    m_diff->setHorizontalHeaderLabels(headers);
    QStringList rows;
    for (const auto& m : diff.metrics) rows << QString::fromStdString(m.title);
    m_diff->setVerticalHeaderLabels(rows);
    for (size_t col = 0; col < diff.columns.size(); ++col)
        for (size_t row = 0; row < diff.metrics.size(); ++row) {
            const auto& v = diff.columns[col].values[row];
            auto* item = new QTableWidgetItem(v ? QString::number(*v, 'f', diff.metrics[row].precision) : QStringLiteral("–"));
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_diff->setItem(static_cast<int>(row), static_cast<int>(col), item);
        }
    m_diff->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_tabs->setCurrentIndex(1);
    setStatus(tr("Comparing %n candidate column(s).", nullptr, static_cast<int>(diff.columns.size())));
}

void HistoryPage::setStatus(const QString& text) {
    m_status->setText(text);
}

} // namespace mb::gui
