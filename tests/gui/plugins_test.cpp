// Output plugins in the GUI: the candidate editor's chain row, the Plugins page's audit, approve and
// revoke through a temporary store, the summary's post-processing rows, and a Playground run whose
// processed output differs from the raw one.
#include "db/plugin_approvals.h"
#include "db/run_store.h"
#include "gui/candidate_editor.h"
#include "gui/main_window.h"
#include "gui/playground_page.h"
#include "gui/plugins_page.h"
#include "gui/summary_table_model.h"
#include "lab/run_config.h"
#include "plugins/sha256.h"
#include "store_fixture.h"
#include "test_data.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>
#include <QTextBrowser>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace mb::gui {
namespace {

QString write(const test::TempDir& dir, const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return QString::fromStdString(dir / name);
}

AppSettings settingsFor(const QString& db, const QString& model) {
    AppSettings s;
    s.threads = 1;
    s.databasePath = db;
    s.defaultModel = model;
    return s;
}

const char* kScript = "def on_text(chunk):\n    return chunk.upper()\n";

TEST(CandidateEditor, PluginsRowDescribesAChainOrShowsItsError) {
    test::TempDir dir;
    CandidateEditor editor(QStringLiteral("a"), QStringLiteral("A"), false);
    editor.setDatabasePath(QString::fromStdString(dir / "runs.db"));
    auto* info = editor.findChild<QLabel*>(QStringLiteral("candidate.a.plugins_description"));
    ASSERT_NE(info, nullptr);
    ASSERT_NE(editor.findChild<QPushButton*>(QStringLiteral("candidate.a.plugins_browse")), nullptr);

    const QString good = write(dir, "good.json", R"({"plugins":[{"type":"word_filter","words":["Lily"]}]})");
    QSignalSpy described(&editor, &CandidateEditor::pluginsDescribed);
    editor.setPluginsPath(good);
    ASSERT_TRUE(described.wait(10000));
    EXPECT_TRUE(editor.pluginsOk());
    EXPECT_EQ(editor.pluginsDescription(), QStringLiteral("word_filter(1 word, mask)"));
    EXPECT_EQ(editor.spec().pluginsPath, good);

    const QString bad = write(dir, "bad.json", "{\"plugins\": [");
    editor.setPluginsPath(bad);
    QTRY_VERIFY_WITH_TIMEOUT(!editor.pluginsOk(), 10000);
    EXPECT_TRUE(editor.pluginsDescription().contains(QStringLiteral("not JSON"))) << editor.pluginsDescription().toStdString();
    EXPECT_TRUE(info->styleSheet().contains(QStringLiteral("color")));

    // A script nobody approved: the row says so before any run.
    write(dir, "up.py", kScript);
    const std::string sha = plugins::sha256File(dir / "up.py");
    const QString script =
        write(dir, "script.json", R"({"plugins":[{"type":"script","path":"up.py","sha256":")" + sha + "\"}]}");
    editor.setPluginsPath(script);
    QTRY_VERIFY_WITH_TIMEOUT(editor.pluginsDescription().contains(QStringLiteral("not approved")), 10000);
    EXPECT_FALSE(editor.pluginsOk());

    editor.setPluginsPath({});
    EXPECT_TRUE(editor.pluginsOk());
    EXPECT_TRUE(editor.spec().pluginsPath.isEmpty());
}

TEST(SummaryTableModel, ShowsPostprocessRowsWhenEitherCandidateRanAChain) {
    SummaryTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    lab::RunSummary a, b;
    model.setSummaries({a, b}, {QStringLiteral("A fast"), QStringLiteral("B regular")});
    EXPECT_EQ(model.rowOf(QStringLiteral("plugins ms p50")), -1);

    lab::PostprocessSummary p;
    p.requests = 4;
    p.ended = 1;
    p.failed = 1;
    p.ms.count = 4;
    p.ms.p50 = 1.5;
    p.callMs.count = 4;
    p.callMs.p50 = 0.02;
    p.extraTtftMs.count = 4;
    p.extraTtftMs.p50 = 0.75;
    b.postprocess = p; // only B ran the chain; its shown ITL has no samples
    model.setSummaries({a, b}, {QStringLiteral("A fast"), QStringLiteral("B regular")});
    for (const char* name : {"plugins ms p50", "plugins ms/call p50", "plugin +TTFT p50 (ms)", "shown ITL p50 (ms)",
                             "plugin ended/failed"})
        ASSERT_GE(model.rowOf(QString::fromLatin1(name)), 0) << name;
    const int ms = model.rowOf(QStringLiteral("plugins ms p50"));
    EXPECT_DOUBLE_EQ(model.value(ms, 1), 1.5);
    EXPECT_TRUE(std::isnan(model.value(ms, 0)));
    EXPECT_EQ(model.data(model.index(ms, 1)).toString(), QStringLiteral("-"));
    EXPECT_EQ(model.data(model.index(ms, 2)).toString(), QStringLiteral("1.500"));
    EXPECT_EQ(model.data(model.index(ms, 3)).toString(), QStringLiteral("-")); // no B/A without A
    const int itl = model.rowOf(QStringLiteral("shown ITL p50 (ms)"));
    EXPECT_EQ(model.data(model.index(itl, 2)).toString(), QStringLiteral("-"));
    EXPECT_DOUBLE_EQ(model.value(model.rowOf(QStringLiteral("plugin ended/failed")), 1), 2.0);
}

TEST(PluginsPage, AuditsApprovesAndRevokesThroughTheStore) {
    test::TempDir dir;
    const std::string db = dir / "runs.db";
    StoreClient store;
    ASSERT_TRUE(test::openStore(store, db));
    PluginsPage page(&store);
    page.setAllowUnsandboxed(true); // the audit's own sandbox may be partial on a CI machine
    QSignalSpy listed(&page, &PluginsPage::approvalsListed);
    page.refresh();
    ASSERT_TRUE(listed.wait(10000));
    EXPECT_TRUE(page.approvals().empty());
    QTRY_VERIFY_WITH_TIMEOUT(
        !page.findChild<QPlainTextEdit*>(QStringLiteral("plugins.sandbox"))->toPlainText().startsWith(QStringLiteral("probing")),
        10000);

    auto* approveButton = page.findChild<QPushButton*>(QStringLiteral("plugins.approve"));
    ASSERT_NE(approveButton, nullptr);
    EXPECT_FALSE(approveButton->isEnabled());
    const QString script = write(dir, "up.py", kScript);
    QSignalSpy audited(&store, &StoreClient::scriptAudited);
    QSignalSpy failed(&store, &StoreClient::failed);
    page.auditFile(script);
    ASSERT_TRUE(audited.wait(30000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(1).toString().toStdString());
    ASSERT_TRUE(page.canApprove());
    EXPECT_TRUE(approveButton->isEnabled());
    const std::string sha = plugins::sha256File(script.toStdString());
    EXPECT_EQ(page.audit()->sha256, sha);
    EXPECT_TRUE(page.findChild<QPlainTextEdit*>(QStringLiteral("plugins.audit_report"))
                    ->toPlainText()
                    .contains(QString::fromStdString(sha)));
    EXPECT_FALSE(page.findChild<QLabel*>(QStringLiteral("plugins.verdict"))->text().isEmpty());

    page.approve(QStringLiteral("tester"));
    QTRY_COMPARE_WITH_TIMEOUT(page.approvals().size(), size_t{1}, 10000);
    EXPECT_EQ(page.approvals()[0].sha256, sha);
    EXPECT_EQ(page.approvals()[0].approvedBy, "tester");
    const db::PluginApprovals approvals(db);
    ASSERT_TRUE(approvals.isApproved(sha));
    EXPECT_TRUE(nlohmann::json::parse(approvals.find(sha)->auditJson).contains("sha256"));
    auto* table = page.findChild<QTableWidget*>(QStringLiteral("plugins.approvals"));
    ASSERT_EQ(table->rowCount(), 1);
    EXPECT_EQ(table->item(0, 2)->text(), QStringLiteral("tester"));

    auto* revokeButton = page.findChild<QPushButton*>(QStringLiteral("plugins.revoke"));
    EXPECT_FALSE(revokeButton->isEnabled());
    table->selectRow(0);
    ASSERT_TRUE(revokeButton->isEnabled());
    revokeButton->click();
    QTRY_VERIFY_WITH_TIMEOUT(page.approvals().empty(), 10000);
    EXPECT_FALSE(approvals.isApproved(sha));
    EXPECT_EQ(table->rowCount(), 0);
}

TEST(PluginsPage, AScriptThatDoesNotParseCannotBeApproved) {
    test::TempDir dir;
    StoreClient store;
    ASSERT_TRUE(test::openStore(store, dir / "runs.db"));
    PluginsPage page(&store);
    page.setAllowUnsandboxed(true);
    QSignalSpy audited(&store, &StoreClient::scriptAudited);
    page.auditFile(write(dir, "broken.py", "def on_text(:\n"));
    ASSERT_TRUE(audited.wait(30000));
    EXPECT_FALSE(page.canApprove());
    EXPECT_FALSE(page.findChild<QPushButton*>(QStringLiteral("plugins.approve"))->isEnabled());
}

TEST(Gui, AnUnapprovedScriptFailsThePlaygroundJob) {
    test::TempDir dir;
    write(dir, "up.py", kScript);
    const std::string sha = plugins::sha256File(dir / "up.py");
    const QString chain = write(dir, "script.json", R"({"plugins":[{"type":"script","path":"up.py","sha256":")" + sha + "\"}]}");
    MainWindow w(settingsFor(QString::fromStdString(dir / "runs.db"), QString::fromStdString(dir / "none.gguf")));
    w.playground()->findChild<CandidateEditor*>(QStringLiteral("playground.candidate.a"))->setPluginsPath(chain);
    QSignalSpy failed(&w.playground()->controller(), &PlaygroundController::failed);
    w.playground()->runBoth();
    ASSERT_TRUE(failed.wait(30000));
    EXPECT_TRUE(failed.at(0).at(0).toString().contains(QStringLiteral("not approved"))) << failed.at(0).at(0).toString().toStdString();
}

TEST(Gui, PlaygroundShowsTheChainsOutputBesideTheRawOne) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    test::TempDir dir;
    const QString chain = write(dir, "mask.json", R"({"plugins":[{"type":"word_filter","words":["Lily"]}]})");
    const QString db = QString::fromStdString(dir / "runs.db");
    MainWindow w(settingsFor(db, QString::fromStdString(model.string())));
    if (w.store()->path().isEmpty()) {
        QSignalSpy ready(&w, &MainWindow::storeReady);
        ASSERT_TRUE(ready.wait(10000));
    }
    PlaygroundPage* page = w.playground();
    page->setPrompt(QStringLiteral("Once upon a time"));
    w.findChild<QSpinBox*>(QStringLiteral("playground.max_tokens"))->setValue(20);
    page->findChild<CandidateEditor*>(QStringLiteral("playground.candidate.a"))->setPluginsPath(chain);
    QSignalSpy finished(&page->controller(), &PlaygroundController::finished);
    QSignalSpy failed(&page->controller(), &PlaygroundController::failed);
    page->runBoth();
    ASSERT_TRUE(finished.wait(120000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());

    const SideState& a = page->controller().side("a");
    ASSERT_TRUE(a.outcome && a.outcome->postprocessed);
    EXPECT_TRUE(a.text.contains(QStringLiteral("Lily"))) << a.text.toStdString();
    EXPECT_FALSE(a.shown.contains(QStringLiteral("Lily"))) << a.shown.toStdString();
    EXPECT_TRUE(a.shown.contains(QStringLiteral("****")));
    EXPECT_NE(a.shown, a.text);
    auto* processedA = page->findChild<QTextBrowser*>(QStringLiteral("playground.processed.a"));
    auto* processedB = page->findChild<QTextBrowser*>(QStringLiteral("playground.processed.b"));
    ASSERT_TRUE(processedA && processedB);
    EXPECT_FALSE(processedA->isHidden());
    EXPECT_TRUE(processedB->isHidden()); // B has no chain
    EXPECT_EQ(processedA->toPlainText(), a.shown);
    EXPECT_TRUE(page->findChild<QTextBrowser*>(QStringLiteral("playground.output.a"))->toPlainText().contains(QStringLiteral("Lily")));
    EXPECT_TRUE(page->findChild<QLabel*>(QStringLiteral("playground.stats.a"))->text().contains(QStringLiteral("plugins")));
    EXPECT_FALSE(page->findChild<QLabel*>(QStringLiteral("playground.stats.b"))->text().contains(QStringLiteral("plugins")));
    EXPECT_FALSE(page->controller().side("b").outcome->postprocessed);

    // The stored run records A's chain as the CLI does (RunConfig::Side::plugins).
    const int64_t runId = finished.at(0).at(0).value<JobOutcome>().storedRunId;
    ASSERT_GT(runId, 0);
    const auto run = db::RunStore::open(db.toStdString()).getRun(runId);
    const lab::RunConfig config = lab::runConfigFromJson(nlohmann::json::parse(run.info.configJson));
    ASSERT_EQ(config.candidates.size(), 2u);
    ASSERT_TRUE(config.candidates[0].plugins.is_object()) << run.info.configJson;
    EXPECT_EQ(config.candidates[0].plugins["plugins"][0]["type"], "word_filter");
    EXPECT_TRUE(config.candidates[1].plugins.is_null());
}

} // namespace
} // namespace mb::gui
