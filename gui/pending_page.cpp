// PendingPage: a title and a paragraph.
#include "gui/pending_page.h"

#include <QLabel>
#include <QVBoxLayout>

namespace mb::gui {

PendingPage::PendingPage(const QString& key, const QString& title, const QString& html, QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("page.") + key);
    auto* layout = new QVBoxLayout(this);
    auto* heading = new QLabel(QStringLiteral("<h2>%1</h2>").arg(title.toHtmlEscaped()));
    auto* body = new QLabel(html);
    body->setObjectName(key + QStringLiteral(".text"));
    body->setWordWrap(true);
    body->setTextFormat(Qt::RichText);
    layout->addWidget(heading);
    layout->addWidget(body);
    layout->addStretch(1);
}

} // namespace mb::gui
