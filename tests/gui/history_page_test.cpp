// The History page over a real store: exports, deleting runs that selections cite, rename and tags, opening a run.
#include "page_helpers.h"
#include "store_fixture.h"

#include "gui/history_page.h"

#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>

#include <gtest/gtest.h>

#include <algorithm>

namespace mb::gui {
namespace {

namespace fs = std::filesystem;

struct HistoryFixture {
    test::TempDir dir;
    std::string path;
    StoreClient store;
    int64_t runId = 0, selectionId = 0;
    std::unique_ptr<HistoryPage> page;

    // One stored run ("sample", tags nightly and cpu) cited by one saved selection, listed.
    void start() {
        path = dir / "runs.db";
        {
            db::SqliteRunSink sink(path);
            runId = test::writeSampleRun(sink, "sample", 30, 6);
        }
        selectionId = db::RunStore::open(path).saveSelection(test::selectionOf({runId}));
        page = std::make_unique<HistoryPage>(&store);
        QSignalSpy listed(&store, &StoreClient::runsListed);
        ASSERT_TRUE(test::openStore(store, path)); // the page lists the runs when the store opens
        ASSERT_TRUE(listed.count() > 0 || listed.wait(10000));
        ASSERT_EQ(page->model().rowCount(), 1);
        selectRun();
    }
    void selectRun() {
        auto* table = page->findChild<QTableView*>(QStringLiteral("history.table"));
        table->selectionModel()->select(table->model()->index(0, 0),
                                        QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
    void click(const char* name) { page->findChild<QPushButton*>(QStringLiteral("history.") + name)->click(); }
    QString status() const { return page->findChild<QLabel*>(QStringLiteral("history.status"))->text(); }
    // A round trip through the store thread: everything posted before it has been answered.
    void settle() {
        QSignalSpy listed(&store, &StoreClient::runsListed);
        page->refresh();
        ASSERT_TRUE(listed.wait(10000));
    }
};

TEST(HistoryPage, AFailedRunExportLeavesNoTemporaryFileBehind) {
    HistoryFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start());
    const std::string exports = f.dir / "exports";
    fs::create_directories(exports);
    for (const char* format : {"json", "csv"}) {
        const QString out = QString::fromStdString(exports + "/run." + format);
        QSignalSpy exported(&f.store, &StoreClient::runExported);
        f.store.exportRun(f.runId, QString::fromLatin1(format), out);
        ASSERT_TRUE(exported.wait(10000)) << format;
        const std::string before = test::fileBytes(out.toStdString());
        ASSERT_GT(before.size(), 2048u) << format;

        QSignalSpy failed(&f.store, &StoreClient::failed);
        {
            test::FileSizeLimit limit(before.size() / 2);
            f.store.exportRun(f.runId, QString::fromLatin1(format), out);
            ASSERT_TRUE(failed.wait(10000)) << format;
        }
        EXPECT_TRUE(failed.at(0).at(1).toString().contains(out)) << failed.at(0).at(1).toString().toStdString();
        EXPECT_EQ(test::fileBytes(out.toStdString()), before) << format;
    }
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(exports)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"run.csv", "run.json"}));
}

TEST(HistoryPage, DeletingARunThatSelectionsCiteAsksFirstNamingThem) {
    HistoryFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start());
    QSignalSpy cited(&f.store, &StoreClient::runHasSelections);
    QString asked;
    // "Delete 1 run?" Yes; then "cited by selection #N": No.
    test::onNextDialog([&](QDialog* d) {
        test::clickMessageBox(d, QMessageBox::Yes);
        test::onNextDialog([&](QDialog* d2) { test::clickMessageBox(d2, QMessageBox::No, &asked); });
    });
    f.click("delete");
    ASSERT_TRUE(cited.wait(10000));
    EXPECT_TRUE(asked.contains(QStringLiteral("selection #%1").arg(f.selectionId))) << asked.toStdString();
    EXPECT_TRUE(f.status().contains(QStringLiteral("kept"))) << f.status().toStdString();
    {
        const auto s = db::RunStore::open(f.path);
        EXPECT_TRUE(s.hasRun(f.runId));
        EXPECT_EQ(s.listSelections().size(), 1u);
    }

    // Again, and yes to both: the run and its selection go.
    QSignalSpy deleted(&f.store, &StoreClient::runDeleted);
    test::onNextDialog([&](QDialog* d) {
        test::clickMessageBox(d, QMessageBox::Yes);
        test::onNextDialog([&](QDialog* d2) { test::clickMessageBox(d2, QMessageBox::Yes); });
    });
    f.click("delete");
    ASSERT_TRUE(deleted.wait(10000));
    EXPECT_EQ(deleted.at(0).at(2).value<SelectionList>().size(), 1u);
    const auto s = db::RunStore::open(f.path);
    EXPECT_FALSE(s.hasRun(f.runId));
    EXPECT_TRUE(s.listSelections().empty());
}

TEST(HistoryPage, RenameAndTagsStartFromTheCurrentValuesAndABlankNameIsRefused) {
    HistoryFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start());
    QString shown;
    test::onNextDialog([&](QDialog* d) {
        auto* input = qobject_cast<QInputDialog*>(d);
        ASSERT_NE(input, nullptr);
        shown = input->textValue();
        input->setTextValue(QStringLiteral("   "));
        input->accept();
    });
    f.click("rename");
    EXPECT_EQ(shown, QStringLiteral("sample"));
    EXPECT_TRUE(f.status().contains(QStringLiteral("cannot be empty"))) << f.status().toStdString();
    ASSERT_NO_FATAL_FAILURE(f.settle()); // a rename, had one been sent, is done by now
    f.selectRun();                        // the listing was swapped in anew
    EXPECT_EQ(db::RunStore::open(f.path).getRun(f.runId).info.name, "sample");

    // Tags: the list to edit, so adding one keeps the others.
    test::onNextDialog([&](QDialog* d) {
        auto* input = qobject_cast<QInputDialog*>(d);
        ASSERT_NE(input, nullptr);
        shown = input->textValue();
        input->setTextValue(shown + QStringLiteral(", gpu"));
        input->accept();
    });
    QSignalSpy changed(&f.store, &StoreClient::runChanged);
    f.click("tag");
    EXPECT_EQ(shown, QStringLiteral("nightly, cpu"));
    ASSERT_TRUE(changed.wait(10000));
    EXPECT_EQ(db::RunStore::open(f.path).getRun(f.runId).info.tags, (std::vector<std::string>{"nightly", "cpu", "gpu"}));
}

// Opening a run: its summaries are computed on the store thread (lab::summarize sorts
// every latency of every request) and arrive with the run; the page only shows them.
TEST(HistoryPage, OpeningARunShowsSummariesComputedOffTheUiThread) {
    HistoryFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start());
    QSignalSpy opened(&f.store, &StoreClient::runOpened);
    f.page->openRun(f.runId);
    ASSERT_TRUE(opened.wait(10000));
    const auto summaries = opened.at(0).at(2).value<SummaryList>();
    ASSERT_EQ(summaries.size(), 2u);
    EXPECT_EQ(summaries[0].ok, 30);
    EXPECT_EQ(summaries[1].ok, 29); // the last of b's requests was rejected
    EXPECT_DOUBLE_EQ(summaries[0].hitRate, 0.75); // engine counters from the stored summary
    auto* view = f.page->findChild<QTableView*>(QStringLiteral("history.summary"));
    const auto* model = qobject_cast<const SummaryTableModel*>(view->model());
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(model->value(model->rowOf(QStringLiteral("requests ok")), 1), 29);
    EXPECT_DOUBLE_EQ(model->value(model->rowOf(QStringLiteral("TTFT p50 (ms)")), 0), summaries[0].ttftMs.p50);
}

} // namespace
} // namespace mb::gui
