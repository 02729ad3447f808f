// Issue 20's architectures in the GUI: a chat streamed on synthetic Llama 3.2 and Qwen 3 models with their real tokenizers, and each architecture's keys on the Models page.
#include "db/db_test_util.h"
#include "engine/chat_template.h"
#include "engine/gguf.h"
#include "engine/model_config.h"
#include "engine/synthetic_model.h"
#include "engine/tokenizer.h"
#include "gui/main_window.h"
#include "gui/models_page.h"
#include "gui/playground_page.h"
#include "test_data.h"

#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTextBrowser>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mb::gui {
namespace {

AppSettings settingsFor(const std::string& db, const std::string& model) {
    AppSettings s;
    s.threads = 1; // leaves a core for the UI thread on the 2-core CI machine
    s.databasePath = QString::fromStdString(db);
    s.defaultModel = QString::fromStdString(model);
    return s;
}

void waitForStore(MainWindow& w) {
    if (!w.store()->path().isEmpty()) return;
    QSignalSpy ready(&w, &MainWindow::storeReady);
    ASSERT_TRUE(ready.wait(10000));
}

// A preset with a real vocabulary, its layers cut to `layers` (widths, heads and vocabulary
// stay the real model's), written as Q8_0.
std::string writeModel(const test::TempDir& dir, const char* presetName, const engine::GgufFile& vocab, int64_t layers) {
    engine::SyntheticPreset preset = engine::withVocabulary(*engine::findSyntheticPreset(presetName), vocab);
    preset.config.layers = layers;
    const std::string path = dir / (std::string(presetName) + ".gguf");
    engine::writeSyntheticModel(preset, engine::SyntheticWeights{kernels::TensorType::Q8_0, std::nullopt}, 5, path, {},
                                &vocab);
    return path;
}

// Runs the playground once and checks both sides against the exact prompt `want`; returns the
// number of A's updates that brought tokens before A finished (streaming, not one batch).
int runTurn(MainWindow& w, const std::vector<int32_t>& want) {
    PlaygroundPage* page = w.playground();
    int tokenEvents = 0;
    const auto counting = QObject::connect(&page->controller(), &PlaygroundController::sideChanged,
                                           &page->controller(), [&](const QString& label) {
                                               const SideState& a = page->controller().side("a");
                                               if (label == QStringLiteral("a") && !a.outcome && !a.tokens.empty())
                                                   ++tokenEvents;
                                           });
    QSignalSpy finished(&page->controller(), &PlaygroundController::finished);
    QSignalSpy failed(&page->controller(), &PlaygroundController::failed);
    page->runBoth();
    const bool done = finished.wait(180000);
    QObject::disconnect(counting);
    EXPECT_TRUE(done) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());
    for (const char* label : {"a", "b"}) {
        const SideState& s = page->controller().side(label);
        if (!s.outcome) {
            ADD_FAILURE() << label << " has no outcome";
            continue;
        }
        EXPECT_EQ(s.outcome->status, QStringLiteral("ok")) << label << ": " << s.outcome->error.toStdString();
        EXPECT_EQ(s.outcome->promptTokens, static_cast<qint64>(want.size())) << label;
        EXPECT_GT(s.outcome->outputTokens, 0) << label;
        EXPECT_EQ(s.tokenMs.size(), static_cast<size_t>(s.outcome->outputTokens)) << label;
        EXPECT_EQ(s.pieces.size(), s.tokenMs.size()) << label;
        EXPECT_TRUE(std::is_sorted(s.tokenMs.begin(), s.tokenMs.end())) << label;
    }
    return tokenEvents;
}

// Chat mode on synthetic llama-3.2-1b and qwen3-0.6b models with the real Llama 3 and Qwen 3
// vocabularies (1 of their 16 / 28 layers, to keep the test short): two turns, each prompt
// exactly the family's template of the conversation so far (A's reply kept as the
// assistant's turn), and the replies streamed token by token.
TEST(GuiArchitectures, PlaygroundStreamsAChatOnSyntheticLlama32AndQwen3) {
    struct Case {
        const char* preset;
        const char* vocab;
        const char* family;
        int32_t turnStart; // <|start_header_id|>, <|im_start|>
    };
    for (const Case& c : {Case{"llama-3.2-1b", "llama3", "llama3", 128006}, Case{"qwen3-0.6b", "qwen3", "chatml", 151644}}) {
        SCOPED_TRACE(c.preset);
        MB_REQUIRE_DATA(vocabPath, std::string("vocab/ggml-vocab-") + c.vocab + ".gguf");
        test::TempDir dir;
        const engine::GgufFile vocab = engine::GgufFile::open(vocabPath.string());
        const std::string model = writeModel(dir, c.preset, vocab, 1);
        const auto tokenizer = engine::Tokenizer::create(engine::Vocab::fromGguf(vocab));
        const engine::ChatFamily family = engine::chatTemplateOf(engine::GgufFile::open(model)).family;
        ASSERT_EQ(std::string(engine::chatFamilyName(family)), c.family);

        MainWindow w(settingsFor(dir / "runs.db", model));
        waitForStore(w);
        w.findChild<QCheckBox*>(QStringLiteral("playground.chat"))->setChecked(true);
        w.findChild<QLineEdit*>(QStringLiteral("playground.system"))->setText(QStringLiteral("Be brief."));
        w.findChild<QSpinBox*>(QStringLiteral("playground.max_tokens"))->setValue(8);
        std::vector<engine::ChatMessage> conversation = {{"system", "Be brief."}};
        for (const char* message : {"Hello there!", "And then?"}) {
            w.playground()->setPrompt(QString::fromUtf8(message));
            conversation.push_back({"user", message});
            const std::vector<int32_t> want = engine::chatPrompt(*tokenizer, family, conversation);
            ASSERT_GE(std::count(want.begin(), want.end(), c.turnStart), 2) << "the family's turn markers as ids";
            const int tokenEvents = runTurn(w, want);
            const SideState& a = w.playground()->controller().side("a");
            ASSERT_TRUE(a.outcome);
            if (a.outcome->outputTokens > 1) {
                EXPECT_GE(tokenEvents, 2) << "A's tokens came in one batch";
            }
            const QString status = w.findChild<QLabel*>(QStringLiteral("playground.status"))->text();
            EXPECT_TRUE(status.contains(QStringLiteral("chat template: ") + QLatin1String(c.family))) << status.toStdString();
            conversation.push_back({"assistant", a.text.toStdString()});
        }
        const QString transcript = w.findChild<QTextBrowser*>(QStringLiteral("playground.transcript"))->toPlainText();
        EXPECT_TRUE(transcript.contains(QStringLiteral("user: Hello there!"))) << transcript.toStdString();
        EXPECT_TRUE(transcript.contains(QStringLiteral("user: And then?"))) << transcript.toStdString();
        EXPECT_EQ(transcript.count(QStringLiteral("assistant:")), 2) << transcript.toStdString();
        w.findChild<QPushButton*>(QStringLiteral("playground.new_chat"))->click();
        EXPECT_TRUE(w.findChild<QTextBrowser*>(QStringLiteral("playground.transcript"))->toPlainText().isEmpty());
    }
}

// The Models page shows what the architecture's keys say (engine::describeArchitecture): Gemma
// 2's soft-caps, sliding window and extra norms, Phi-3's fused tensors, Qwen 2's biases.
TEST(GuiArchitectures, ModelsPageShowsTheArchitectureKeys) {
    test::TempDir dir;
    MainWindow w(settingsFor(dir / "runs.db", {}));
    const std::pair<const char*, std::vector<const char*>> cases[] = {
        {"tiny-gemma2", {"gemma2", "soft-cap 50", "sliding window", "final soft-cap 30", "GELU-tanh", "post_attention_norm"}},
        {"tiny-phi3", {"phi3", "attn_qkv.weight (fused)", "ffn_up.weight (fused)"}},
        {"tiny-qwen2", {"qwen2", "attn_q.bias", "NEOX"}},
    };
    for (const auto& [presetName, expected] : cases) {
        SCOPED_TRACE(presetName);
        const std::string path = dir / (std::string(presetName) + ".gguf");
        engine::writeSyntheticModel(*engine::findSyntheticPreset(presetName), kernels::TensorType::F32, 1, path);
        QSignalSpy inspected(w.models(), &ModelsPage::modelInspected);
        w.models()->inspect(QString::fromStdString(path));
        ASSERT_TRUE(inspected.wait(30000));
        const QString info = w.findChild<QLabel*>(QStringLiteral("models.info"))->text();
        for (const char* text : expected) EXPECT_TRUE(info.contains(QLatin1String(text))) << text << "\n" << info.toStdString();
        // Every line describeArchitecture gives is on the page.
        const engine::ModelConfig config = engine::ModelConfig::fromGguf(engine::GgufFile::open(path));
        for (const auto& [label, text] : engine::describeArchitecture(config))
            if (label != "architecture") {
                EXPECT_TRUE(info.contains(QString::fromStdString(text).toHtmlEscaped())) << label;
            }
    }
}

} // namespace
} // namespace mb::gui
