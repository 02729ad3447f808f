// ExecutiveSummaryView: lab's executive summary in labels and a three-column table.
#include "gui/executive_summary_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace mb::gui {

namespace {

QLabel* wrappedLabel(const QString& name) {
    auto* l = new QLabel;
    l->setObjectName(name);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

} // namespace

ExecutiveSummaryView::ExecutiveSummaryView(QWidget* parent)
    : QGroupBox(tr("Executive summary"), parent) {
    auto* layout = new QVBoxLayout(this);
    m_verdict = wrappedLabel(QStringLiteral("summary.verdict"));
    QFont big = m_verdict->font();
    big.setPointSizeF(big.pointSizeF() * 1.4);
    big.setBold(true);
    m_verdict->setFont(big);
    layout->addWidget(m_verdict);
    m_confidence = wrappedLabel(QStringLiteral("summary.confidence"));
    layout->addWidget(m_confidence);
    m_numbers = new QTableWidget(0, 3);
    m_numbers->setObjectName(QStringLiteral("summary.numbers"));
    m_numbers->setHorizontalHeaderLabels({tr("figure"), tr("value"), tr("against")});
    m_numbers->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_numbers->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_numbers->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_numbers->verticalHeader()->hide();
    m_numbers->setWordWrap(true);
    m_numbers->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_numbers->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(m_numbers);
    m_wouldChange = wrappedLabel(QStringLiteral("summary.would_change"));
    m_wouldChange->setTextFormat(Qt::RichText);
    layout->addWidget(m_wouldChange);
    clear(tr("No decision yet: choose a run and press Decide."));
}

void ExecutiveSummaryView::setSummary(const lab::ExecutiveSummary& s) {
    m_verdict->setText(QString::fromStdString(s.verdictLine));
    m_confidence->setText(QString::fromStdString(s.confidenceLine));
    m_numbers->setRowCount(static_cast<int>(s.numbers.size()));
    for (int row = 0; row < m_numbers->rowCount(); ++row) {
        const lab::DecidingNumber& n = s.numbers[static_cast<size_t>(row)];
        m_numbers->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(n.label)));
        m_numbers->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(n.value)));
        m_numbers->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(n.against)));
    }
    m_numbers->resizeRowsToContents();
    // As tall as its rows: three at most, so no scroll bar hides one.
    int height = m_numbers->horizontalHeader()->height() + 2 * m_numbers->frameWidth();
    for (int row = 0; row < m_numbers->rowCount(); ++row) height += m_numbers->rowHeight(row);
    m_numbers->setFixedHeight(height);
    m_numbers->setVisible(!s.numbers.empty());
    QString changes;
    for (const auto& c : s.wouldChange)
        changes += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(c).toHtmlEscaped());
    m_wouldChange->setText(changes.isEmpty()
                               ? QString()
                               : tr("<b>What would change the decision:</b>") +
                                     QStringLiteral("<ul>") + changes + QStringLiteral("</ul>"));
    m_wouldChange->setVisible(!changes.isEmpty());
}

void ExecutiveSummaryView::clear(const QString& message) {
    m_verdict->setText(message);
    m_confidence->clear();
    m_numbers->setRowCount(0);
    m_numbers->hide();
    m_wouldChange->clear();
    m_wouldChange->hide();
}

} // namespace mb::gui
