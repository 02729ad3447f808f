// The Playground page: one prompt, two candidates streaming side by side, live figures and a diff.
#pragma once

#include "gui/playground_controller.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTextBrowser;

namespace mb::gui {

class CandidateEditor;
class Sparkline;

// UI thread. Widgets are named "playground.<name>" (prompt, run, stop, concurrent,
// max_tokens, output.a/b, stats.a/b, badges.a/b, sparkline.a/b, diff, status).
class PlaygroundPage : public QWidget {
    Q_OBJECT
public:
    PlaygroundPage(EngineBackend* engine, QWidget* parent = nullptr);

    PlaygroundController& controller() { return m_controller; }
    void setModel(const QString& path);           // both candidates
    void setThreads(int threads);
    void setDevices(const QStringList& ids);
    void setDatabasePath(const QString& path) { m_dbPath = path; }
    void setPrompt(const QString& prompt);
    void runBoth();

signals:
    void runSaved(qint64 runId);
    void modelsPageRequested();

private:
    struct Side {
        CandidateEditor* editor;
        QTextBrowser* output;
        QLabel* stats;
        QLabel* badges;
        Sparkline* sparkline;
    };
    Side makeSide(const QString& label, const QString& title, const QString& profile);
    void refreshSide(const QString& label);
    void showDiff();
    void updateEmptyState();

    PlaygroundController m_controller;
    QString m_dbPath;
    QWidget* m_empty;
    QPlainTextEdit* m_prompt;
    QSpinBox* m_maxTokens;
    QRadioButton* m_concurrent;
    QPushButton* m_run;
    QPushButton* m_stop;
    QLabel* m_status;
    Side m_a{}, m_b{};
    QTextBrowser* m_diff;
};

} // namespace mb::gui
