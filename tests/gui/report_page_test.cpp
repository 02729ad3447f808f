// The Report page over a real store: exports written whole or not at all, and nothing stale exported.
#include "page_helpers.h"
#include "store_fixture.h"

#include "gui/report_page.h"

#include <QPushButton>
#include <QSignalSpy>

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

} // namespace
} // namespace mb::gui
