// The Report page over a real store: exports written whole or not at all, and nothing stale exported.
#include "page_helpers.h"
#include "store_fixture.h"

#include "db/sqlite_run_sink.h"
#include "gui/report_page.h"
#include "lab/executive_summary.h"
#include "lab/selection_fixtures.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QTextBrowser>

#include <gtest/gtest.h>

#include <QLabel>

#include <algorithm>

namespace mb::gui {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> filesIn(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

struct ReportFixture {
    test::TempDir dir;
    StoreClient store;
    int64_t runId = 0;
    std::unique_ptr<ReportPage> page;

    void start() {
        const std::string path = dir / "runs.db";
        {
            db::SqliteRunSink sink(path);
            runId = test::writeSampleRun(sink, "sample", 40, 8);
        }
        ASSERT_TRUE(test::openStore(store, path));
        page = std::make_unique<ReportPage>(&store);
        build(runId);
        ASSERT_TRUE(page->report().has_value());
    }
    void build(qint64 id) {
        QSignalSpy ready(page.get(), &ReportPage::reportReady);
        QSignalSpy failed(&store, &StoreClient::failed);
        page->build(id);
        for (int i = 0; i < 100 && ready.isEmpty() && failed.isEmpty(); ++i) ready.wait(100);
    }
};

TEST(ReportPage, AFailedExportLeavesTheOldFileAndNoTemporaryBehind) {
    ReportFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start());
    const std::string exports = f.dir / "exports";
    fs::create_directories(exports);
    for (const char* format : {"html", "md", "json", "csv"}) {
        const QString out = QString::fromStdString(exports + "/report." + format);
        ASSERT_EQ(test::exportReport(*f.page, QString::fromLatin1(format), out), QString()) << format;
        const std::string before = test::fileBytes(out.toStdString());
        ASSERT_GT(before.size(), 1024u) << format;
        QString error;
        {
            test::FileSizeLimit limit(before.size() / 2); // the disk fills up halfway through
            error = test::exportReport(*f.page, QString::fromLatin1(format), out);
        }
        EXPECT_FALSE(error.isEmpty()) << format << ": a short write reported as written";
        EXPECT_TRUE(error.contains(QString::fromStdString(exports))) << error.toStdString();
        EXPECT_EQ(test::fileBytes(out.toStdString()), before) << format << ": the good file was damaged";
        EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("report.status"))->text().startsWith(QStringLiteral("Export failed")));
    }
    EXPECT_EQ(filesIn(exports), (std::vector<std::string>{"report.csv", "report.html", "report.json", "report.md"}));
}

TEST(ReportPage, NothingIsExportedUntilTheCurrentBuildSucceeds) {
    ReportFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start());
    auto* html = f.page->findChild<QPushButton*>(QStringLiteral("report.export_html"));
    ASSERT_NE(html, nullptr);
    EXPECT_TRUE(html->isEnabled());

    // A build of a run that is not there fails: the previous run's report is not exported.
    f.page->build(4242);
    EXPECT_FALSE(html->isEnabled()); // not while the build runs either
    f.build(4242);
    EXPECT_FALSE(f.page->report().has_value());
    EXPECT_FALSE(html->isEnabled());
    const QString out = QString::fromStdString(f.dir / "stale.html");
    EXPECT_FALSE(test::exportReport(*f.page, QStringLiteral("html"), out).isEmpty());
    EXPECT_FALSE(fs::exists(out.toStdString()));

    f.build(f.runId);
    EXPECT_TRUE(html->isEnabled());
}

// The preview is the report itself: the executive summary first, as the Selection page shows it,
// and the formulas last.
TEST(ReportPage, ThePreviewOpensWithTheSelectionsExecutiveSummary) {
    test::TempDir dir;
    StoreClient store;
    const std::string path = dir / "runs.db";
    int64_t runId = 0;
    {
        const auto run = test::syntheticRun(0, test::Behaviour{.ttftMs = 300}, test::Behaviour{.ttftMs = 900}, 20);
        db::SqliteRunSink sink(path);
        runId = sink.beginRun(run.info);
        for (const auto& c : run.candidates) {
            const int64_t cid = sink.addCandidate(runId, c.info);
            for (const auto& r : c.requests) sink.requestFinished(cid, r);
            sink.finishCandidate(cid, c.summaryJson, c.series);
        }
        sink.finishRun(runId, lab::RunStatus::Complete, "{}");
    }
    ASSERT_TRUE(test::openStore(store, path));
    SelectionRequest req;
    req.runIds = {runId};
    req.requirements = lab::parseRequirements(nlohmann::json::parse(R"({"slo": {"ttft_ms": {"p95": 2000}}})"));
    QSignalSpy selected(&store, &StoreClient::selected);
    store.select(req);
    ASSERT_TRUE(selected.wait(30000));
    const auto result = selected.at(0).at(1).value<lab::SelectionResult>();
    const qint64 selectionId = selected.at(0).at(2).toLongLong();

    ReportPage page(&store);
    QSignalSpy ready(&page, &ReportPage::reportReady);
    page.build(runId, selectionId);
    ASSERT_TRUE(ready.wait(30000));
    ASSERT_TRUE(page.report()->summary.has_value());
    const std::string verdict = lab::executiveSummary(result).verdictLine;
    EXPECT_EQ(page.report()->summary->verdictLine, verdict);
    const QString text = page.findChild<QTextBrowser*>(QStringLiteral("report.preview"))->toPlainText();
    const qsizetype summary = text.indexOf(QStringLiteral("Executive summary"));
    ASSERT_GE(summary, 0) << text.left(400).toStdString();
    EXPECT_LT(text.indexOf(QStringLiteral("Executive summary")), text.indexOf(QStringLiteral("Decision trace")));
    EXPECT_GT(text.indexOf(QString::fromStdString(verdict)), summary);
    EXPECT_GT(text.indexOf(QStringLiteral("The numbers that decided")), summary);
    EXPECT_GT(text.indexOf(QStringLiteral("What would change the decision")), summary);
    EXPECT_GT(text.indexOf(QStringLiteral("Appendix: score formulas")), text.indexOf(QStringLiteral("Runs (raw data)")));
}

} // namespace
} // namespace mb::gui
