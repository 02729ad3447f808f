// The executive summary of a selection as a widget: verdict, confidence, the deciding numbers, what
// would change it.
#pragma once

#include "lab/executive_summary.h"

#include <QGroupBox>

class QLabel;
class QTableWidget;

namespace mb::gui {

// UI thread. Shows lab::executiveSummary's sentences as they are (the report prints the same).
// Children are named "summary.verdict", "summary.confidence", "summary.numbers" (a table:
// figure, value, against; hidden when empty) and "summary.would_change" (hidden when empty).
class ExecutiveSummaryView : public QGroupBox {
    Q_OBJECT
public:
    explicit ExecutiveSummaryView(QWidget* parent = nullptr);

    void setSummary(const lab::ExecutiveSummary& summary);
    // No summary: `message` in place of the verdict, the rest emptied.
    void clear(const QString& message);

private:
    QLabel* m_verdict;
    QLabel* m_confidence;
    QTableWidget* m_numbers;
    QLabel* m_wouldChange;
};

} // namespace mb::gui
