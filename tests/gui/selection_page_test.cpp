// The Selection page over a real store: the executive summary at the top, "Export deployment…"
// writes the chosen candidate's files, and without a recommendation only the candidate the user names.
#include "page_helpers.h"
#include "store_fixture.h"

#include "db/sqlite_run_sink.h"
#include "gui/requirements_form.h"
#include "gui/executive_summary_view.h"
#include "gui/selection_page.h"
#include "lab/executive_summary.h"
#include "lab/selection_fixtures.h"
#include "lab/sweep_fixtures.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QVBoxLayout>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace mb::gui {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct SelectionFixture {
    test::TempDir dir;
    StoreClient store;
    int64_t runId = 0;
    std::unique_ptr<SelectionPage> page;

    static int64_t storeRun(db::SqliteRunSink& sink, const lab::StoredRun& run) {
        const int64_t id = sink.beginRun(run.info);
        for (const auto& c : run.candidates) {
            const int64_t cid = sink.addCandidate(id, c.info);
            for (const auto& r : c.requests) sink.requestFinished(cid, r);
            sink.finishCandidate(cid, c.summaryJson, c.series);
        }
        sink.finishRun(id, lab::RunStatus::Complete, "{}");
        return id;
    }

    // Fast: TTFT 300 ms, regular 900 ms, unless given. `more` are stored after the run and
    // given as its repeats (e.g. a load sweep's runs).
    void start(const char* requirements, test::Behaviour fast = {.ttftMs = 300},
               test::Behaviour regular = {.ttftMs = 900}, const std::vector<lab::StoredRun>& more = {}) {
        const std::string path = dir / "runs.db";
        QStringList moreIds;
        {
            db::SqliteRunSink sink(path);
            runId = storeRun(sink, test::syntheticRun(0, fast, regular, 20));
            for (const auto& run : more) moreIds << QString::number(storeRun(sink, run));
        }
        ASSERT_TRUE(test::openStore(store, path));
        page = std::make_unique<SelectionPage>(&store);
        page->findChild<QLineEdit*>(QStringLiteral("selection.repeats"))->setText(moreIds.join(QStringLiteral(", ")));
        page->form()->setRequirements(lab::parseRequirements(nlohmann::json::parse(requirements)));
        QSignalSpy saved(page.get(), &SelectionPage::selectionSaved);
        page->decide(runId);
        ASSERT_TRUE(saved.wait(30000))
            << page->findChild<QLabel*>(QStringLiteral("selection.status"))->text().toStdString();
        ASSERT_TRUE(page->result().has_value());
    }

    // "" when written, else the message ("timeout" when none came).
    QString exportInto(const fs::path& out, std::optional<lab::Mode> candidate = std::nullopt) {
        QSignalSpy done(page.get(), &SelectionPage::deploymentExported);
        QSignalSpy failed(page.get(), &SelectionPage::deploymentExportFailed);
        page->exportDeployment(QString::fromStdString(out.string()), candidate);
        for (int i = 0; i < 100 && done.isEmpty() && failed.isEmpty(); ++i) done.wait(100);
        if (!failed.isEmpty()) return failed.at(0).at(0).toString();
        return done.isEmpty() ? QStringLiteral("timeout") : QString();
    }
};

// What the summary shows: lab's summary of the decision shown, cell by cell.
void expectSummaryOf(const SelectionPage& page, const lab::ExecutiveSummary& s) {
    EXPECT_EQ(page.findChild<QLabel*>(QStringLiteral("summary.verdict"))->text().toStdString(), s.verdictLine);
    EXPECT_EQ(page.findChild<QLabel*>(QStringLiteral("summary.confidence"))->text().toStdString(), s.confidenceLine);
    const auto* numbers = page.findChild<QTableWidget*>(QStringLiteral("summary.numbers"));
    ASSERT_NE(numbers, nullptr);
    ASSERT_EQ(numbers->rowCount(), static_cast<int>(s.numbers.size()));
    EXPECT_FALSE(numbers->isHidden());
    for (int row = 0; row < numbers->rowCount(); ++row) {
        const auto& n = s.numbers[static_cast<size_t>(row)];
        EXPECT_EQ(numbers->item(row, 0)->text().toStdString(), n.label);
        EXPECT_EQ(numbers->item(row, 1)->text().toStdString(), n.value);
        EXPECT_EQ(numbers->item(row, 2)->text().toStdString(), n.against);
    }
    const QString changes = page.findChild<QLabel*>(QStringLiteral("summary.would_change"))->text();
    EXPECT_TRUE(changes.startsWith(QStringLiteral("<b>What would change the decision:</b><ul>"))) << changes.toStdString();
    for (const auto& c : s.wouldChange)
        EXPECT_TRUE(changes.contains(QString::fromStdString(c).toHtmlEscaped())) << c;
}

TEST(SelectionPage, TheSummaryComesFirstWithTheVerdictNumbersAndWhatWouldChange) {
    SelectionFixture f;
    auto* verdict = [&] {
        f.page = std::make_unique<SelectionPage>(&f.store);
        return f.page->findChild<QLabel*>(QStringLiteral("summary.verdict"));
    }();
    ASSERT_NE(verdict, nullptr);
    EXPECT_EQ(verdict->text(), QStringLiteral("No decision yet: choose a run and press Decide."));
    EXPECT_TRUE(f.page->findChild<QTableWidget*>(QStringLiteral("summary.numbers"))->isHidden());

    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 2000}}})"));
    const lab::SelectionResult& r = *f.page->result();
    ASSERT_EQ(r.decidedBy, "latency");
    const lab::ExecutiveSummary s = lab::executiveSummary(r);
    ASSERT_NO_FATAL_FAILURE(expectSummaryOf(*f.page, s));
    EXPECT_EQ(s.verdictLine, "Recommendation: deploy fast mode, decided by the latency rule.");
    auto* numbers = f.page->findChild<QTableWidget*>(QStringLiteral("summary.numbers"));
    EXPECT_EQ(numbers->item(0, 0)->text(), QStringLiteral("TTFT requirement"));
    EXPECT_EQ(numbers->item(0, 1)->text(), QStringLiteral("2,000 ms"));
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("summary.would_change"))
                    ->text()
                    .contains(QStringLiteral("A TTFT requirement of 3,000 ms or more")));
    // The headline follows, and the summary sits above the trace.
    EXPECT_EQ(f.page->findChild<QLabel*>(QStringLiteral("selection.recommendation"))->text(),
              QStringLiteral("Headline: ") + QString::fromStdString(r.headline));
    auto* summary = f.page->findChild<ExecutiveSummaryView*>(QStringLiteral("selection.summary"));
    auto* trace = f.page->findChild<QTableWidget*>(QStringLiteral("selection.trace"));
    ASSERT_NE(summary, nullptr);
    ASSERT_NE(trace, nullptr);
    ASSERT_EQ(summary->parentWidget(), trace->parentWidget());
    QLayout* column = summary->parentWidget()->layout();
    EXPECT_EQ(column->indexOf(summary), 0);
    EXPECT_LT(column->indexOf(summary), column->indexOf(trace));
}

TEST(SelectionPage, ATieSaysWhatWouldSeparateTheCandidates) {
    SelectionFixture f;
    const test::Behaviour same{.ttftMs = 500};
    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 3000}}})", same, same));
    const lab::SelectionResult& r = *f.page->result();
    ASSERT_EQ(r.verdict, lab::Verdict::NoClearWinner) << r.headline;
    const lab::ExecutiveSummary s = lab::executiveSummary(r);
    ASSERT_NO_FATAL_FAILURE(expectSummaryOf(*f.page, s));
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("summary.verdict"))
                    ->text()
                    .startsWith(QStringLiteral("No clear winner: neither mode is recommended")));
    EXPECT_EQ(f.page->findChild<QTableWidget*>(QStringLiteral("summary.numbers"))->item(0, 0)->text(),
              QStringLiteral("weighted score margin"));
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("summary.would_change"))
                    ->text()
                    .contains(QStringLiteral("A price sheet, so that the month")));
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("selection.warnings"))
                    ->text()
                    .startsWith(QStringLiteral("Warning: the selection rests on one run per candidate")));
}

TEST(SelectionPage, NoneFeasibleShowsEachGapAndWhatWouldAdmitIt) {
    SelectionFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 10}}})"));
    const lab::SelectionResult& r = *f.page->result();
    ASSERT_EQ(r.verdict, lab::Verdict::NoneFeasible);
    const lab::ExecutiveSummary s = lab::executiveSummary(r);
    ASSERT_NO_FATAL_FAILURE(expectSummaryOf(*f.page, s));
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("summary.verdict"))
                    ->text()
                    .startsWith(QStringLiteral("None feasible: neither candidate meets the requirements")));
    auto* numbers = f.page->findChild<QTableWidget*>(QStringLiteral("summary.numbers"));
    ASSERT_EQ(numbers->rowCount(), 2);
    EXPECT_EQ(numbers->item(0, 0)->text(), QStringLiteral("fast TTFT p95"));
    EXPECT_EQ(numbers->item(1, 0)->text(), QStringLiteral("regular TTFT p95"));
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("summary.would_change"))
                    ->text()
                    .contains(QStringLiteral("Bounds at fast's measured figures")));
}

// The widget alone, on the GUI tests' minimal fixture: a result with no scores says less, not wrong.
TEST(ExecutiveSummaryView, AResultWithoutScoresShowsTheVerdictOnly) {
    ExecutiveSummaryView view;
    view.setSummary(lab::executiveSummary(test::fastRecommendation()));
    EXPECT_EQ(view.findChild<QLabel*>(QStringLiteral("summary.verdict"))->text().toStdString(),
              lab::executiveSummary(test::fastRecommendation()).verdictLine);
    EXPECT_TRUE(view.findChild<QTableWidget*>(QStringLiteral("summary.numbers"))->isHidden());
    EXPECT_TRUE(view.findChild<QLabel*>(QStringLiteral("summary.would_change"))->isHidden());
    view.clear(QStringLiteral("nothing"));
    EXPECT_EQ(view.findChild<QLabel*>(QStringLiteral("summary.verdict"))->text(), QStringLiteral("nothing"));
}

TEST(SelectionPage, ExportDeploymentWritesTheRecommendedCandidatesFiles) {
    SelectionFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 2000}}})"));
    ASSERT_EQ(f.page->result()->recommendation, lab::Mode::Fast);
    auto* button = f.page->findChild<QPushButton*>(QStringLiteral("selection.export_deploy"));
    ASSERT_NE(button, nullptr);
    EXPECT_TRUE(button->isEnabled());
    EXPECT_EQ(button->text(), QStringLiteral("Export deployment…"));

    const fs::path out = f.dir.path() / "deploy";
    ASSERT_EQ(f.exportInto(out), QString());
    for (const char* name : {"vllm.sh", "sglang.sh", "llama-server.sh", "modebench-serve.sh",
                             "profile.json", "hpa.yaml", "README.md"})
        EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
    const std::string vllm = slurp(out / "vllm.sh");
    EXPECT_NE(vllm.find("--enable-prefix-caching"), std::string::npos) << vllm;
    EXPECT_NE(vllm.find("--max-num-seqs 1"), std::string::npos) << vllm;
    EXPECT_NE(slurp(out / "hpa.yaml").find("NOT MEASURED"), std::string::npos);
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("selection.status"))
                    ->text()
                    .startsWith(QStringLiteral("Wrote the fast")));

    // A file where the directory should be: an error, shown.
    std::ofstream(f.dir / "plain") << "x";
    const QString error = f.exportInto(f.dir.path() / "plain");
    EXPECT_TRUE(error.contains(QStringLiteral("is not a directory"))) << error.toStdString();
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("selection.status"))
                    ->text()
                    .startsWith(QStringLiteral("Export failed")));
}

// The button itself: it asks for a directory (answered here as a user would) and writes there.
TEST(SelectionPage, TheExportButtonAsksForADirectoryAndWritesThere) {
    SelectionFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 2000}}})"));
    const fs::path out = f.dir.path() / "chosen";
    fs::create_directories(out);
    bool asked = false;
    test::onNextDialog([&](QDialog* d) {
        auto* dialog = qobject_cast<QFileDialog*>(d);
        if (!dialog) return d->reject();
        asked = true;
        dialog->setDirectory(QString::fromStdString(out.string()));
        dialog->selectFile(QString::fromStdString(out.string()));
        d->accept(); // QFileDialog's own accept (protected there), through QDialog's
    });
    QSignalSpy done(f.page.get(), &SelectionPage::deploymentExported);
    f.page->findChild<QPushButton*>(QStringLiteral("selection.export_deploy"))->click();
    if (done.isEmpty()) {
        ASSERT_TRUE(done.wait(10000));
    }
    EXPECT_TRUE(asked);
    EXPECT_EQ(done.at(0).at(0).toString().toStdString(), out.string());
    EXPECT_EQ(done.at(0).at(1).toStringList().size(), 7);
    EXPECT_NE(slurp(out / "llama-server.sh").find("--cache-reuse 16"), std::string::npos);
}

TEST(SelectionPage, WithoutARecommendationOnlyANamedCandidateIsExported) {
    SelectionFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 10}}})")); // both miss it
    ASSERT_EQ(f.page->result()->verdict, lab::Verdict::NoneFeasible);
    const fs::path out = f.dir.path() / "deploy";
    const QString refused = f.exportInto(out);
    EXPECT_TRUE(refused.contains(QStringLiteral("none_feasible"))) << refused.toStdString();
    EXPECT_FALSE(fs::exists(out));
    ASSERT_EQ(f.exportInto(out, lab::Mode::Regular), QString());
    EXPECT_NE(slurp(out / "vllm.sh").find("--max-num-seqs 8"), std::string::npos);
    EXPECT_NE(slurp(out / "README.md").find("named by the user"), std::string::npos);
}

TEST(SelectionPage, ALoadSweepAmongTheRunsShowsTheCapacityAndFeedsTheAutoscaler) {
    SelectionFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 2000}}, "monthly": {"requests": 100000000}})",
                                    {.ttftMs = 300}, {.ttftMs = 900}, test::concurrencySweep()));
    const lab::SelectionResult& r = *f.page->result();
    ASSERT_EQ(r.capacity.size(), 2u);
    const QString capacity = f.page->findChild<QLabel*>(QStringLiteral("selection.capacity"))->text();
    for (const auto& c : r.capacity)
        EXPECT_TRUE(capacity.contains(QString::fromStdString(lab::capacitySentence(c)).toHtmlEscaped()))
            << capacity.toStdString();
    EXPECT_TRUE(capacity.contains(QStringLiteral("knee at concurrency 8"))) << capacity.toStdString();
    const fs::path out = f.dir.path() / "deploy";
    ASSERT_EQ(f.exportInto(out), QString());
    const std::string hpa = slurp(out / "hpa.yaml");
    EXPECT_EQ(hpa.find("NOT MEASURED"), std::string::npos);
    EXPECT_NE(hpa.find("measured (compare --sweep concurrency, runs 2, 3, 4, 5)"), std::string::npos) << hpa;
}

TEST(SelectionPage, WithoutASweepTheCapacityIsSaidNotMeasured) {
    SelectionFixture f;
    ASSERT_NO_FATAL_FAILURE(f.start(R"({"slo": {"ttft_ms": {"p95": 2000}}})"));
    EXPECT_TRUE(f.page->findChild<QLabel*>(QStringLiteral("selection.capacity"))
                    ->text()
                    .startsWith(QStringLiteral("Capacity: not measured")));
}

} // namespace
} // namespace mb::gui
