// The migration flowchart (PRODUCT.md §7) drawn with QPainter: nodes lit as they are passed.
#pragma once

#include "lab/migration.h"

#include <QWidget>

namespace mb::gui {

// UI thread. Draws nodes A–I with the flowchart's edges (lab::migrationEdges) and the
// rollback path (dashed, F/G/I → C). Nodes on the walked path are filled, the current node
// has a thick border; clicking a node emits nodeClicked.
class FlowchartWidget : public QWidget {
    Q_OBJECT
public:
    explicit FlowchartWidget(QWidget* parent = nullptr);
    void setState(const lab::MigrationState& state);
    QSize sizeHint() const override { return {900, 230}; }

signals:
    void nodeClicked(lab::MigrationNode node);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    QRectF nodeRect(lab::MigrationNode n) const;

    lab::MigrationState m_state;
};

} // namespace mb::gui
