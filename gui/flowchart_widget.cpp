// FlowchartWidget: a fixed layout of the nine nodes, edges with their yes/no labels.
#include "gui/flowchart_widget.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace mb::gui {

namespace {

using N = lab::MigrationNode;

// Grid cell (column, row) of each node: the main line left to right, C under B, I under G.
QPointF cell(N n) {
    switch (n) {
    case N::A: return {0, 0};
    case N::B: return {1, 0};
    case N::C: return {1, 1};
    case N::D: return {2, 0};
    case N::E: return {3, 0};
    case N::F: return {4, 0};
    case N::G: return {5, 0};
    case N::H: return {6, 0};
    case N::I: return {5, 1};
    }
    return {0, 0};
}

bool isDecision(N n) {
    return n == N::B || n == N::G;
}

const N kNodes[] = {N::A, N::B, N::C, N::D, N::E, N::F, N::G, N::H, N::I};

void arrow(QPainter& p, QPointF from, QPointF to) {
    p.drawLine(from, to);
    const QPointF d = to - from;
    const double len = std::hypot(d.x(), d.y());
    if (len < 1) return;
    const QPointF u = d / len, n(-u.y(), u.x());
    QPolygonF head;
    head << to << to - u * 9 + n * 4.5 << to - u * 9 - n * 4.5;
    p.setBrush(p.pen().color());
    p.drawPolygon(head);
    p.setBrush(Qt::NoBrush);
}

// Where the segment from the centre of `r` towards `target` leaves the rectangle.
QPointF exitPoint(const QRectF& r, QPointF target) {
    const QPointF c = r.center(), d = target - c;
    const double sx = d.x() != 0 ? (r.width() / 2) / std::abs(d.x()) : 1e9;
    const double sy = d.y() != 0 ? (r.height() / 2) / std::abs(d.y()) : 1e9;
    return c + d * std::min(sx, sy);
}

} // namespace

FlowchartWidget::FlowchartWidget(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("migration.flowchart"));
    setMinimumHeight(200);
}

void FlowchartWidget::setState(const lab::MigrationState& state) {
    m_state = state;
    update();
}

QRectF FlowchartWidget::nodeRect(N n) const {
    const double colW = width() / 7.0, rowH = height() / 2.0;
    const QPointF c = cell(n);
    const double w = std::min(colW * 0.86, 150.0), h = std::min(rowH * 0.62, 64.0);
    return {c.x() * colW + (colW - w) / 2, c.y() * rowH + (rowH - h) / 2, w, h};
}

void FlowchartWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    const QColor line = palette().color(QPalette::Text);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    p.setFont(small);
    // Edges of the chart.
    for (const auto& e : lab::migrationEdges()) {
        const QRectF a = nodeRect(e.from), b = nodeRect(e.to);
        p.setPen(QPen(line, 1.4));
        QPointF from = exitPoint(a, b.center()), to = exitPoint(b, a.center());
        if (e.from == N::I && e.to == N::F) { // the loop back: out of I's left, into F's bottom
            from = {a.left(), a.center().y()};
            to = {b.center().x(), b.bottom()};
            p.drawLine(from, QPointF(to.x(), from.y()));
            from = QPointF(to.x(), from.y());
        }
        arrow(p, from, to);
        if (*e.label) p.drawText((from + to) / 2 + QPointF(4, -4), QString::fromLatin1(e.label));
    }
    // The rollback path.
    p.setPen(QPen(QColor(0xc0, 0x39, 0x2b), 1.2, Qt::DashLine));
    for (N from : {N::F, N::G, N::I}) {
        const QRectF a = nodeRect(from), c = nodeRect(N::C);
        arrow(p, exitPoint(a, c.center()), exitPoint(c, a.center()));
    }
    // Nodes.
    for (N n : kNodes) {
        const QRectF r = nodeRect(n);
        const bool visited = std::find(m_state.path.begin(), m_state.path.end(), n) != m_state.path.end();
        const bool current = m_state.node == n;
        QColor fill = visited ? QColor(0xd5, 0xf5, 0xe3) : palette().color(QPalette::Button);
        if (current) fill = m_state.rolledBack && n == N::C ? QColor(0xfa, 0xdb, 0xd8) : QColor(0xd6, 0xea, 0xf8);
        p.setBrush(fill);
        p.setPen(QPen(current ? QColor(0x1f, 0x61, 0x8d) : line, current ? 3 : 1.2));
        if (isDecision(n)) {
            QPolygonF diamond;
            diamond << QPointF(r.center().x(), r.top()) << QPointF(r.right(), r.center().y())
                    << QPointF(r.center().x(), r.bottom()) << QPointF(r.left(), r.center().y());
            p.drawPolygon(diamond);
        } else {
            p.drawRoundedRect(r, 6, 6);
        }
        p.setPen(line);
        p.drawText(r.adjusted(6, 2, -6, -2), Qt::AlignCenter | Qt::TextWordWrap,
                   QStringLiteral("%1\n%2").arg(QString::fromLatin1(lab::nodeName(n)),
                                                QString::fromUtf8(lab::nodeTitle(n))));
    }
}

void FlowchartWidget::mousePressEvent(QMouseEvent* event) {
    for (N n : kNodes)
        if (nodeRect(n).contains(event->position())) emit nodeClicked(n);
}

} // namespace mb::gui
