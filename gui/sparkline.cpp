// Sparkline: a polyline over the last values with the maximum labelled.
#include "gui/sparkline.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace mb::gui {

Sparkline::Sparkline(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(36);
    setToolTip(tr("Gap between consecutive tokens (ms)"));
}

void Sparkline::setValues(std::vector<double> values) {
    m_values = std::move(values);
    update();
}

void Sparkline::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    if (m_values.size() < 2) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("per-token latency"));
        return;
    }
    const double maxV = std::max(1e-9, *std::max_element(m_values.begin(), m_values.end()));
    const QRectF r = QRectF(rect()).adjusted(2, 12, -2, -2);
    QPainterPath path;
    for (size_t i = 0; i < m_values.size(); ++i) {
        const double x = r.left() + r.width() * static_cast<double>(i) / static_cast<double>(m_values.size() - 1);
        const double y = r.bottom() - r.height() * m_values[i] / maxV;
        if (i == 0) path.moveTo(x, y);
        else path.lineTo(x, y);
    }
    p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
    p.drawPath(path);
    p.setPen(palette().color(QPalette::Text));
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 0.8);
    p.setFont(f);
    p.drawText(QRectF(rect()).adjusted(2, 0, -2, 0), Qt::AlignTop | Qt::AlignRight,
               tr("max %1 ms").arg(maxV, 0, 'f', 1));
}

} // namespace mb::gui
