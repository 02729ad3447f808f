// A page whose feature has not landed yet: it says what will be there and what works today.
#pragma once

#include <QWidget>

namespace mb::gui {

// Selection, Migration and Report until the selection framework lands: text only, no
// placeholder figures.
class PendingPage : public QWidget {
    Q_OBJECT
public:
    PendingPage(const QString& key, const QString& title, const QString& html, QWidget* parent = nullptr);
};

} // namespace mb::gui
