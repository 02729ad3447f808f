// The Playground page: one prompt, two candidates streaming side by side, live figures and a diff.
#pragma once

#include "gui/playground_controller.h"

#include <QWidget>

#include <utility>
#include <vector>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTextBrowser;

namespace mb::gui {

class CandidateEditor;
class ImageStrip;
class Sparkline;

// UI thread. Widgets are named "playground.<name>" (prompt, images (gui/image_strip.h), run, stop, concurrent,
// max_tokens, output.a/b, processed.a/b, stats.a/b, badges.a/b, sparkline.a/b, diff, status, and for chat
// mode chat, system, new_chat, transcript). In chat mode the prompt box holds the user's next
// message; both candidates get the whole conversation in the model's chat template, and A's
// reply becomes the assistant's turn. PNG and JPEG files dropped on the page (or added with
// "Add image…") go with the prompt, right after its first token; a run with images and a
// candidate without an mmproj is refused before it starts, in lab::imagesRefused's words.
class PlaygroundPage : public QWidget {
    Q_OBJECT
public:
    PlaygroundPage(EngineBackend* engine, QWidget* parent = nullptr);

    PlaygroundController& controller() { return m_controller; }
    void setModel(const QString& path);           // both candidates
    void setThreads(int threads);
    void setDevices(const QStringList& ids);
    void setDatabasePath(const QString& path); // also where the editors check plugin approvals
    void setAllowUnsandboxed(bool on) { m_allowUnsandboxed = on; } // script plugins (Settings)
    void setPrompt(const QString& prompt);
    void setMmprojPath(const QString& path); // both candidates' vision encoder
    // Attaches images as a drop does; the refused files' messages also go to the status line.
    QStringList addImages(const QStringList& paths);
    ImageStrip* images() const { return m_images; }
    void runBoth();

signals:
    void runSaved(qint64 runId);
    void modelsPageRequested();

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    struct Side {
        CandidateEditor* editor;
        QTextBrowser* output;    // raw: the model's text
        QTextBrowser* processed; // the plugin chain's output, shown beside it when there is a chain
        QWidget* outputs;        // a "Raw | Processed" splitter of the two
        QLabel* stats;
        QLabel* badges;
        Sparkline* sparkline;
    };
    Side makeSide(const QString& label, const QString& title, const QString& profile);
    void refreshSide(const QString& label);
    void showDiff();
    void updateEmptyState();
    void showTranscript();

    PlaygroundController m_controller;
    QString m_dbPath;
    bool m_allowUnsandboxed = false;
    QWidget* m_empty;
    QPlainTextEdit* m_prompt;
    ImageStrip* m_images;
    QSpinBox* m_maxTokens;
    QRadioButton* m_concurrent;
    QPushButton* m_run;
    QPushButton* m_stop;
    QLabel* m_status;
    Side m_a{}, m_b{};
    QTextBrowser* m_diff;
    QCheckBox* m_chat;
    QLineEdit* m_system;
    QPushButton* m_newChat;
    QTextBrowser* m_transcript;
    std::vector<std::pair<QString, QString>> m_history; // finished turns (role, content)
    QString m_pendingUser;                                // the user turn of the run in progress
};

} // namespace mb::gui
