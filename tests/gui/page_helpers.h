// Helpers of the page tests: waiting for a report export, answering the next dialog, a file size limit.
#pragma once

#include "gui/report_page.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDialog>
#include <QEventLoop>
#include <QMessageBox>
#include <QTimer>

#include <csignal>
#include <functional>
#include <sys/resource.h>

namespace mb::test {

// Exports the page's report and waits for the answer: "" when written, else the message
// ("timeout" when none came).
inline QString exportReport(gui::ReportPage& page, const QString& format, const QString& path) {
    QString result = QStringLiteral("timeout");
    bool done = false;
    QEventLoop loop;
    auto ok = QObject::connect(&page, &gui::ReportPage::exported, &loop, [&] {
        result.clear();
        done = true;
        loop.quit();
    });
    auto bad = QObject::connect(&page, &gui::ReportPage::exportFailed, &loop, [&](const QString& m) {
        result = m;
        done = true;
        loop.quit();
    });
    page.exportTo(format, path);
    if (!done) {
        QTimer::singleShot(30000, &loop, &QEventLoop::quit);
        loop.exec();
    }
    QObject::disconnect(ok);
    QObject::disconnect(bad);
    return result;
}

// Arms a handler for the next modal dialog the page opens (a QMessageBox or QInputDialog):
// `answer` gets the dialog once it is shown and closes it. Polls the event loop; the
// dialog's own exec() runs it.
inline void onNextDialog(std::function<void(QDialog*)> answer) {
    auto* timer = new QTimer;
    timer->setInterval(5);
    QObject::connect(timer, &QTimer::timeout, [timer, answer] {
        auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
        if (!dialog || !dialog->isVisible()) return;
        timer->stop();
        timer->deleteLater();
        answer(dialog);
    });
    timer->start();
}

// The text of a message box and a click on one of its buttons.
inline void clickMessageBox(QDialog* dialog, QMessageBox::StandardButton button, QString* text = nullptr) {
    auto* box = qobject_cast<QMessageBox*>(dialog);
    if (!box) return dialog->reject();
    if (text) *text = box->text() + QLatin1Char('\n') + box->informativeText();
    box->button(button)->click();
}

// Lowers this process's file size limit (SIGXFSZ ignored: a write past it fails with EFBIG)
// for its lifetime: a disk that fills up mid-write, on demand.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        ::getrlimit(RLIMIT_FSIZE, &m_old);
        m_oldHandler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit r = m_old;
        r.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &r);
    }
    ~FileSizeLimit() {
        ::setrlimit(RLIMIT_FSIZE, &m_old);
        std::signal(SIGXFSZ, m_oldHandler);
    }

private:
    rlimit m_old{};
    void (*m_oldHandler)(int) = nullptr;
};

} // namespace mb::test
