// PlaygroundPage: widgets bound to a PlaygroundController.
#include "gui/playground_page.h"

#include "gui/candidate_editor.h"
#include "gui/image_strip.h"
#include "gui/job_candidates.h"
#include "gui/sparkline.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace mb::gui {

PlaygroundPage::PlaygroundPage(EngineBackend* engine, QWidget* parent)
    : QWidget(parent), m_controller(engine) {
    setObjectName(QStringLiteral("page.playground"));
    auto* layout = new QVBoxLayout(this);

    m_empty = new QWidget;
    auto* emptyRow = new QHBoxLayout(m_empty);
    auto* emptyText = new QLabel(tr("No model yet. Open a GGUF file or create a synthetic model to start."));
    auto* emptyButton = new QPushButton(tr("Open or create a model…"));
    emptyButton->setObjectName(QStringLiteral("playground.open_models"));
    emptyRow->addWidget(emptyText, 1);
    emptyRow->addWidget(emptyButton);
    connect(emptyButton, &QPushButton::clicked, this, &PlaygroundPage::modelsPageRequested);
    layout->addWidget(m_empty);

    m_prompt = new QPlainTextEdit;
    m_prompt->setObjectName(QStringLiteral("playground.prompt"));
    m_prompt->setPlaceholderText(tr("Prompt"));
    m_prompt->setPlainText(QStringLiteral("Once upon a time"));
    m_prompt->setMaximumHeight(90);
    layout->addWidget(m_prompt);
    m_images = new ImageStrip;
    layout->addWidget(m_images);
    connect(m_images, &ImageStrip::imagesRefused, this,
            [this](const QStringList& messages) { m_status->setText(messages.join(QLatin1Char('\n'))); });
    setAcceptDrops(true);

    auto* chatRow = new QHBoxLayout;
    m_chat = new QCheckBox(tr("Chat"));
    m_chat->setObjectName(QStringLiteral("playground.chat"));
    m_chat->setToolTip(tr("Turns in the model's chat template; A's reply becomes the assistant's turn"));
    m_system = new QLineEdit;
    m_system->setObjectName(QStringLiteral("playground.system"));
    m_system->setPlaceholderText(tr("System message (optional)"));
    m_newChat = new QPushButton(tr("New chat"));
    m_newChat->setObjectName(QStringLiteral("playground.new_chat"));
    chatRow->addWidget(m_chat);
    chatRow->addWidget(m_system, 1);
    chatRow->addWidget(m_newChat);
    layout->addLayout(chatRow);
    m_transcript = new QTextBrowser;
    m_transcript->setObjectName(QStringLiteral("playground.transcript"));
    m_transcript->setMaximumHeight(110);
    layout->addWidget(m_transcript);
    auto chatVisible = [this](bool on) {
        m_system->setEnabled(on);
        m_newChat->setEnabled(on);
        m_transcript->setVisible(on);
        m_prompt->setPlaceholderText(on ? tr("Your message") : tr("Prompt"));
    };
    chatVisible(false);
    connect(m_chat, &QCheckBox::toggled, this, chatVisible);
    connect(m_newChat, &QPushButton::clicked, this, [this] {
        m_history.clear();
        showTranscript();
    });

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Max tokens")));
    m_maxTokens = new QSpinBox;
    m_maxTokens->setObjectName(QStringLiteral("playground.max_tokens"));
    m_maxTokens->setRange(1, 32768);
    m_maxTokens->setValue(100);
    controls->addWidget(m_maxTokens);
    m_concurrent = new QRadioButton(tr("Both at once (race)"));
    m_concurrent->setObjectName(QStringLiteral("playground.concurrent"));
    auto* sequential = new QRadioButton(tr("One after the other (fair timing)"));
    sequential->setObjectName(QStringLiteral("playground.sequential"));
    sequential->setChecked(true);
    auto* group = new QButtonGroup(this);
    group->addButton(m_concurrent);
    group->addButton(sequential);
    controls->addWidget(m_concurrent);
    controls->addWidget(sequential);
    controls->addStretch(1);
    m_run = new QPushButton(tr("Run both"));
    m_run->setObjectName(QStringLiteral("playground.run"));
    m_run->setDefault(true);
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setObjectName(QStringLiteral("playground.stop"));
    m_stop->setEnabled(false);
    controls->addWidget(m_run);
    controls->addWidget(m_stop);
    layout->addLayout(controls);

    auto* sides = new QGridLayout;
    m_a = makeSide(QStringLiteral("a"), tr("A"), QStringLiteral("fast"));
    m_b = makeSide(QStringLiteral("b"), tr("B"), QStringLiteral("regular"));
    int col = 0;
    for (const Side* s : {&m_a, &m_b}) {
        sides->addWidget(s->editor, 0, col);
        sides->addWidget(s->stats, 1, col);
        sides->addWidget(s->badges, 2, col);
        sides->addWidget(s->outputs, 3, col);
        sides->addWidget(s->sparkline, 4, col);
        ++col;
    }
    sides->setRowStretch(3, 1);
    layout->addLayout(sides, 3);

    auto* diffLabel = new QLabel(tr("Token-level diff (A struck through in red, B in green)"));
    layout->addWidget(diffLabel);
    m_diff = new QTextBrowser;
    m_diff->setObjectName(QStringLiteral("playground.diff"));
    m_diff->setMaximumHeight(130);
    layout->addWidget(m_diff, 1);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("playground.status"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(m_run, &QPushButton::clicked, this, &PlaygroundPage::runBoth);
    connect(m_stop, &QPushButton::clicked, &m_controller, &PlaygroundController::stop);
    connect(&m_controller, &PlaygroundController::runningChanged, this, [this](bool running) {
        m_run->setEnabled(!running);
        m_stop->setEnabled(running);
    });
    connect(&m_controller, &PlaygroundController::sideChanged, this, &PlaygroundPage::refreshSide);
    connect(&m_controller, &PlaygroundController::diffReady, this, &PlaygroundPage::showDiff);
    connect(&m_controller, &PlaygroundController::finished, this, [this](const JobOutcome& o) {
        const SideState& a = m_controller.side("a");
        if (!m_pendingUser.isEmpty() && !o.cancelled && a.outcome && a.outcome->status == QLatin1String("ok")) {
            m_history.emplace_back(QStringLiteral("user"), m_pendingUser);
            m_history.emplace_back(QStringLiteral("assistant"), a.hasChain ? a.shown : a.text); // what was shown
            m_prompt->clear();
            showTranscript();
        }
        m_pendingUser.clear();
        QString s = o.cancelled ? tr("Stopped.") : tr("Done.");
        if (!o.note.isEmpty()) s += QLatin1Char(' ') + o.note + QLatin1Char('.');
        if (o.storedRunId > 0) s += tr(" Saved as run %1.").arg(o.storedRunId);
        if (!o.saveError.isEmpty()) s += tr(" Not saved: %1").arg(o.saveError);
        m_status->setText(s);
        if (o.storedRunId > 0) emit runSaved(o.storedRunId);
    });
    connect(&m_controller, &PlaygroundController::failed, this,
            [this](const QString& message) { m_status->setText(tr("Failed: %1").arg(message)); });
    updateEmptyState();
}

PlaygroundPage::Side PlaygroundPage::makeSide(const QString& label, const QString& title, const QString& profile) {
    Side s;
    s.editor = new CandidateEditor(label, title, true);
    s.editor->setObjectName(QStringLiteral("playground.candidate.") + label);
    s.editor->setProfile(profile);
    s.stats = new QLabel(tr("TTFT –   tokens/s –   cached –"));
    s.stats->setObjectName(QStringLiteral("playground.stats.") + label);
    s.badges = new QLabel;
    s.badges->setObjectName(QStringLiteral("playground.badges.") + label);
    s.output = new QTextBrowser;
    s.output->setObjectName(QStringLiteral("playground.output.") + label);
    s.output->setToolTip(tr("Raw output: the model's text"));
    s.processed = new QTextBrowser;
    s.processed->setObjectName(QStringLiteral("playground.processed.") + label);
    s.processed->setToolTip(tr("Processed output: what the plugin chain shows"));
    s.processed->setVisible(false);
    auto* split = new QSplitter(Qt::Horizontal);
    split->setObjectName(QStringLiteral("playground.outputs.") + label);
    split->addWidget(s.output);
    split->addWidget(s.processed);
    s.outputs = split;
    s.sparkline = new Sparkline;
    s.sparkline->setObjectName(QStringLiteral("playground.sparkline.") + label);
    return s;
}

void PlaygroundPage::setModel(const QString& path) {
    m_a.editor->setModelPath(path);
    m_b.editor->setModelPath(path);
    updateEmptyState();
}

void PlaygroundPage::setDatabasePath(const QString& path) {
    m_dbPath = path;
    m_a.editor->setDatabasePath(path);
    m_b.editor->setDatabasePath(path);
}

void PlaygroundPage::setThreads(int threads) {
    m_a.editor->setThreads(threads);
    m_b.editor->setThreads(threads);
}

void PlaygroundPage::setDevices(const QStringList& ids) {
    m_a.editor->setDevices(ids);
    m_b.editor->setDevices(ids);
}

void PlaygroundPage::setPrompt(const QString& prompt) {
    m_prompt->setPlainText(prompt);
}

void PlaygroundPage::setMmprojPath(const QString& path) {
    m_a.editor->setMmprojPath(path);
    m_b.editor->setMmprojPath(path);
}

QStringList PlaygroundPage::addImages(const QStringList& paths) {
    const QStringList refused = m_images->addImages(paths);
    if (!refused.isEmpty()) m_status->setText(refused.join(QLatin1Char('\n')));
    else if (!paths.isEmpty()) m_status->clear();
    return refused;
}

// Local files only; whether each is an image is decided on the drop, with a message.
void PlaygroundPage::dragEnterEvent(QDragEnterEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (std::any_of(urls.begin(), urls.end(), [](const QUrl& u) { return u.isLocalFile(); }))
        event->acceptProposedAction();
}

void PlaygroundPage::dropEvent(QDropEvent* event) {
    QStringList files;
    for (const QUrl& u : event->mimeData()->urls())
        if (u.isLocalFile()) files << u.toLocalFile();
    if (files.isEmpty()) return;
    addImages(files);
    event->acceptProposedAction();
}

void PlaygroundPage::updateEmptyState() {
    m_empty->setVisible(m_a.editor->spec().modelPath.isEmpty());
}

void PlaygroundPage::runBoth() {
    updateEmptyState();
    PlaygroundJob job;
    job.prompt = m_prompt->toPlainText();
    job.maxTokens = m_maxTokens->value();
    job.a = m_a.editor->spec();
    job.b = m_b.editor->spec();
    job.concurrent = m_concurrent->isChecked();
    job.dbPath = m_dbPath;
    job.allowUnsandboxed = m_allowUnsandboxed;
    job.images = m_images->paths();
    if (const QString why = imagesRefused({job.a, job.b}, !job.images.isEmpty()); !why.isEmpty()) {
        m_status->setText(tr("Not started: %1. (A candidate's Vision row takes its mmproj file; or remove the images.)")
                              .arg(why));
        return;
    }
    m_pendingUser.clear();
    if (m_chat->isChecked()) {
        if (!m_system->text().trimmed().isEmpty()) job.chat.emplace_back(QStringLiteral("system"), m_system->text());
        job.chat.insert(job.chat.end(), m_history.begin(), m_history.end());
        m_pendingUser = job.prompt;
        job.chat.emplace_back(QStringLiteral("user"), job.prompt);
    }
    m_diff->clear();
    m_status->setText(job.concurrent ? tr("Running A and B at once…") : tr("Running A, then B…"));
    m_controller.start(job);
}

void PlaygroundPage::refreshSide(const QString& label) {
    const Side& w = label == QLatin1String("a") ? m_a : m_b;
    const SideState& s = m_controller.side(label.toStdString());
    w.output->setPlainText(m_chat->isChecked() ? s.text : m_prompt->toPlainText() + s.text);
    w.output->moveCursor(QTextCursor::End);
    w.processed->setVisible(s.hasChain);
    if (s.hasChain) {
        w.processed->setPlainText(s.shown);
        w.processed->moveCursor(QTextCursor::End);
    }
    const double ttft = s.outcome ? s.outcome->ttftMs : s.ttftMs();
    QString stats = tr("TTFT %1   tokens/s %2   tokens %3")
                        .arg(ttft >= 0 ? QStringLiteral("%1 ms").arg(ttft, 0, 'f', 1) : QStringLiteral("–"))
                        .arg(s.tokensPerSecond(), 0, 'f', 1)
                        .arg(s.tokens.size());
    QStringList badges;
    if (s.outcome) {
        stats += tr("   cached %1/%2").arg(s.outcome->cachedTokens).arg(s.outcome->promptTokens);
        if (s.outcome->images > 0)
            stats += tr("   image tokens %1   encode %2 ms").arg(s.outcome->imageTokens).arg(s.outcome->encodeMs, 0, 'f', 1);
        if (s.outcome->imagesDropped > 0)
            badges << QStringLiteral("<span style='background:#d35400;color:white'>&nbsp;%1 images dropped&nbsp;</span>")
                          .arg(s.outcome->imagesDropped);
        if (s.outcome->postprocessed) {
            stats += tr("   plugins %1 ms").arg(s.outcome->postprocessMs, 0, 'f', 2);
            if (s.outcome->extraTtftMs >= 0) stats += tr("   +TTFT %1 ms").arg(s.outcome->extraTtftMs, 0, 'f', 2);
            if (!s.outcome->postprocessStatus.isEmpty())
                badges << QStringLiteral("<span style='background:#8e44ad;color:white'>&nbsp;plugins %1&nbsp;</span>")
                              .arg(s.outcome->postprocessStatus.toHtmlEscaped());
        }
        if (s.outcome->truncatedTokens > 0)
            badges << QStringLiteral("<span style='background:#c0392b;color:white'>&nbsp;truncated %1 tokens&nbsp;</span>")
                          .arg(s.outcome->truncatedTokens);
        if (s.outcome->cachedTokens > 0)
            badges << QStringLiteral("<span style='background:#27ae60;color:white'>&nbsp;%1 cached&nbsp;</span>")
                          .arg(s.outcome->cachedTokens);
        if (s.outcome->status != QLatin1String("ok"))
            badges << QStringLiteral("<span style='background:#7f8c8d;color:white'>&nbsp;%1%2&nbsp;</span>")
                          .arg(s.outcome->status.toHtmlEscaped(),
                               s.outcome->error.isEmpty() ? QString() : QStringLiteral(": ") + s.outcome->error.toHtmlEscaped());
    }
    w.stats->setText(stats);
    w.badges->setText(badges.join(QLatin1Char(' ')));
    w.sparkline->setValues(s.gapsMs());
}

void PlaygroundPage::showTranscript() {
    QString html;
    for (const auto& [role, content] : m_history)
        html += QStringLiteral("<p><b>%1:</b> %2</p>").arg(role.toHtmlEscaped(), content.toHtmlEscaped());
    m_transcript->setHtml(html);
    m_transcript->moveCursor(QTextCursor::End);
}

void PlaygroundPage::showDiff() {
    const SideState& a = m_controller.side("a");
    const SideState& b = m_controller.side("b");
    auto piece = [](const SideState& s, size_t i) {
        return i < s.pieces.size() ? s.pieces[i].toHtmlEscaped() : QStringLiteral("[%1]").arg(s.tokens[i]);
    };
    QString html;
    size_t equal = 0;
    for (const auto& op : m_controller.diff()) {
        switch (op.kind) {
        case lab::DiffOp::Kind::Equal:
            for (size_t i = op.aBegin; i < op.aEnd; ++i) html += piece(a, i);
            equal += op.aEnd - op.aBegin;
            break;
        case lab::DiffOp::Kind::OnlyA:
            html += QStringLiteral("<span style='color:#c0392b;text-decoration:line-through'>");
            for (size_t i = op.aBegin; i < op.aEnd; ++i) html += piece(a, i);
            html += QStringLiteral("</span>");
            break;
        case lab::DiffOp::Kind::OnlyB:
            html += QStringLiteral("<span style='color:#27ae60'>");
            for (size_t i = op.bBegin; i < op.bEnd; ++i) html += piece(b, i);
            html += QStringLiteral("</span>");
            break;
        }
    }
    const size_t first = lab::commonPrefix(a.tokens, b.tokens);
    const QString head = a.tokens == b.tokens
                             ? tr("Identical outputs (%1 tokens).").arg(a.tokens.size())
                             : tr("Outputs diverge at token %1; %2 tokens in common.").arg(first).arg(equal);
    m_diff->setHtml(QStringLiteral("<p><b>%1</b></p><p style='white-space:pre-wrap'>%2</p>").arg(head, html));
}

} // namespace mb::gui
