// Images in the GUI: the candidate editor's Vision row, the Playground's dropped images (kept,
// refused, removed), the refusal without an mmproj, a real image prompt on the tiny llava
// pair, the workload designer's synthetic images and the summary's image rows.
#include "db/run_store.h"
#include "gui/benchmark_page.h"
#include "gui/candidate_editor.h"
#include "gui/image_strip.h"
#include "gui/job_candidates.h"
#include "gui/main_window.h"
#include "gui/playground_page.h"
#include "gui/summary_table_model.h"
#include "gui/workload_designer.h"
#include "lab/run_config.h"
#include "store_fixture.h"
#include "test_data.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTextBrowser>
#include <QTest>
#include <QToolButton>
#include <QUrl>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

namespace mb::gui {
namespace {

AppSettings settingsFor(const QString& db, const QString& model) {
    AppSettings s;
    s.threads = 1;
    s.databasePath = db;
    s.defaultModel = model;
    return s;
}

// A small PNG Qt writes itself: no shared data needed.
QString writePng(const test::TempDir& dir, const std::string& name, int w, int h) {
    QImage image(w, h, QImage::Format_RGB32);
    image.fill(QColor(30, 120, 200));
    const QString path = QString::fromStdString(dir / name);
    EXPECT_TRUE(image.save(path, "PNG"));
    return path;
}

// Drops `files` on `target` as a file manager would: drag enter, then drop.
void dropFiles(QWidget* target, const QStringList& files) {
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& f : files) urls << QUrl::fromLocalFile(f);
    mime.setUrls(urls);
    const QPoint at = target->rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    ASSERT_TRUE(enter.isAccepted());
    QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
}

QString statusOf(QWidget* page, const char* name) {
    return page->findChild<QLabel*>(QString::fromLatin1(name))->text();
}

TEST(CandidateEditor, VisionRowSetsTheMmprojAndIsOffForRemote) {
    CandidateEditor editor(QStringLiteral("a"), QStringLiteral("A"), false);
    auto* field = editor.findChild<QLineEdit*>(QStringLiteral("candidate.a.mmproj"));
    auto* browse = editor.findChild<QPushButton*>(QStringLiteral("candidate.a.mmproj_browse"));
    ASSERT_TRUE(field && browse);
    EXPECT_TRUE(editor.spec().mmprojPath.isEmpty());
    editor.setMmprojPath(QStringLiteral("/models/mmproj.gguf"));
    EXPECT_EQ(editor.spec().mmprojPath, QStringLiteral("/models/mmproj.gguf"));
    EXPECT_TRUE(field->isEnabled());
    editor.setProfile(QStringLiteral("remote:http://127.0.0.1:9/v1"));
    EXPECT_FALSE(field->isEnabled());
    EXPECT_FALSE(browse->isEnabled());
    // A remote candidate's mmproj is ignored: lab refuses its images in its own words.
    EXPECT_TRUE(imagesRefused({editor.spec()}, true).contains(QStringLiteral("remote")));
    editor.setProfile(QStringLiteral("fast"));
    EXPECT_TRUE(field->isEnabled());
    EXPECT_TRUE(imagesRefused({editor.spec()}, true).isEmpty());
    EXPECT_TRUE(imagesRefused({CandidateSpec{}}, false).isEmpty());
}

TEST(PlaygroundPage, DroppedImagesShowAsThumbnailsAndANonImageIsRefused) {
    test::TempDir dir;
    const QString png = writePng(dir, "blue.png", 120, 40);
    const QString notes = QString::fromStdString(dir / "notes.png"); // the name says PNG, the bytes do not
    std::ofstream(dir / "notes.png") << "not an image\n";
    MainWindow w(settingsFor(QString::fromStdString(dir / "runs.db"), {}));
    PlaygroundPage* page = w.playground();
    ImageStrip* strip = page->images();
    ASSERT_NE(page->findChild<QToolButton*>(QStringLiteral("playground.images.add")), nullptr);
    QSignalSpy changed(strip, &ImageStrip::imagesChanged);

    dropFiles(page, {notes});
    EXPECT_TRUE(strip->paths().isEmpty());
    EXPECT_TRUE(changed.isEmpty());
    const QString refused = statusOf(page, "playground.status");
    EXPECT_TRUE(refused.contains(QStringLiteral("notes.png is not a PNG or JPEG image"))) << refused.toStdString();

    dropFiles(page, {png, png}); // the same file twice: attached once
    ASSERT_EQ(strip->paths().size(), 1);
    EXPECT_EQ(strip->paths()[0], png);
    EXPECT_EQ(changed.size(), 1);
    auto* thumb = page->findChild<QLabel*>(QStringLiteral("playground.images.thumb.0"));
    ASSERT_NE(thumb, nullptr);
    EXPECT_EQ(thumb->pixmap().width(), ImageStrip::kThumbPx); // scaled down, aspect kept
    EXPECT_EQ(thumb->pixmap().height(), ImageStrip::kThumbPx * 40 / 120);
    EXPECT_EQ(thumb->toolTip(), png);

    auto* remove = page->findChild<QToolButton*>(QStringLiteral("playground.images.remove.0"));
    ASSERT_NE(remove, nullptr);
    remove->click();
    EXPECT_TRUE(strip->paths().isEmpty());
    EXPECT_EQ(page->findChild<QLabel*>(QStringLiteral("playground.images.thumb.0")), nullptr);
}

TEST(PlaygroundPage, ImagesWithoutAnMmprojAreRefusedBeforeRunning) {
    test::TempDir dir;
    MainWindow w(settingsFor(QString::fromStdString(dir / "runs.db"), QString::fromStdString(dir / "none.gguf")));
    PlaygroundPage* page = w.playground();
    ASSERT_TRUE(page->addImages({writePng(dir, "a.png", 8, 8)}).isEmpty());
    page->findChild<CandidateEditor*>(QStringLiteral("playground.candidate.a"))
        ->setMmprojPath(QString::fromStdString(dir / "mmproj.gguf"));
    QSignalSpy running(&page->controller(), &PlaygroundController::runningChanged);
    page->runBoth();
    EXPECT_TRUE(running.isEmpty());
    EXPECT_FALSE(page->controller().running());
    const QString status = statusOf(page, "playground.status");
    std::vector<lab::Candidate> lab(2);
    lab[0].label = "a";
    lab[0].mmprojPath = "mmproj.gguf";
    lab[1].label = "b";
    lab::WorkloadRequest request;
    request.images.push_back({});
    const QString words = QString::fromStdString(lab::imagesRefused(lab, {request}));
    ASSERT_FALSE(words.isEmpty());
    EXPECT_TRUE(status.contains(words)) << status.toStdString();
    EXPECT_TRUE(status.startsWith(QStringLiteral("Not started: candidate b:"))) << status.toStdString();
}

TEST(Gui, PlaygroundRunsAnImagePromptOnTheTinyLlavaPair) {
    MB_REQUIRE_DATA(model, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    MB_REQUIRE_DATA(image, "mm/images/grad64.png");
    test::TempDir dir;
    const QString db = QString::fromStdString(dir / "runs.db");
    MainWindow w(settingsFor(db, QString::fromStdString(model.string())));
    if (w.store()->path().isEmpty()) {
        QSignalSpy ready(&w, &MainWindow::storeReady);
        ASSERT_TRUE(ready.wait(10000));
    }
    PlaygroundPage* page = w.playground();
    page->setPrompt(QStringLiteral("Describe the image."));
    w.findChild<QSpinBox*>(QStringLiteral("playground.max_tokens"))->setValue(4);
    page->setMmprojPath(QString::fromStdString(mmproj.string()));
    dropFiles(page, {QString::fromStdString(image.string())});
    ASSERT_EQ(page->images()->paths().size(), 1);
    // Updates of each side that brought tokens before it finished: the reply streams.
    std::map<QString, int> tokenEvents;
    QObject::connect(&page->controller(), &PlaygroundController::sideChanged, page, [&](const QString& label) {
        const SideState& s = page->controller().side(label.toStdString());
        if (!s.outcome && !s.tokens.empty()) ++tokenEvents[label];
    });
    QSignalSpy finished(&page->controller(), &PlaygroundController::finished);
    QSignalSpy failed(&page->controller(), &PlaygroundController::failed);
    page->runBoth();
    ASSERT_TRUE(finished.wait(120000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());

    for (const char* label : {"a", "b"}) {
        const SideState& s = page->controller().side(label);
        ASSERT_TRUE(s.outcome) << label;
        EXPECT_EQ(s.outcome->status, QStringLiteral("ok")) << label << ": " << s.outcome->error.toStdString();
        EXPECT_GE(s.outcome->outputTokens, 1) << label;
        EXPECT_EQ(s.tokenMs.size(), static_cast<size_t>(s.outcome->outputTokens)) << label;
        EXPECT_GE(tokenEvents[QLatin1String(label)], 1) << label << ": no token arrived before the end";
        EXPECT_GT(s.tokenMs.front(), s.outcome->encodeMs) << label << ": the first token follows the encoding";
        const auto* out = page->findChild<QTextBrowser*>(QStringLiteral("playground.output.") + QLatin1String(label));
        ASSERT_NE(out, nullptr);
        EXPECT_TRUE(out->toPlainText().endsWith(s.text)) << label;
        EXPECT_EQ(s.outcome->images, 1) << label;
        EXPECT_EQ(s.outcome->imageTokens, 16) << label; // (64 / 16)^2 patches
        EXPECT_GT(s.outcome->encodeMs, 0) << label;
        EXPECT_GT(s.outcome->promptTokens, 16) << label; // the text's tokens and the image's
        const QString stats = statusOf(page, label == std::string("a") ? "playground.stats.a" : "playground.stats.b");
        EXPECT_TRUE(stats.contains(QStringLiteral("image tokens 16"))) << stats.toStdString();
        EXPECT_TRUE(stats.contains(QStringLiteral("encode "))) << stats.toStdString();
    }
    // The stored run records each side's vision encoder (RunConfig::Side::mmproj), absolute.
    const int64_t runId = finished.at(0).at(0).value<JobOutcome>().storedRunId;
    ASSERT_GT(runId, 0);
    const auto run = db::RunStore::open(db.toStdString()).getRun(runId);
    const lab::RunConfig config = lab::runConfigFromJson(nlohmann::json::parse(run.info.configJson));
    ASSERT_EQ(config.candidates.size(), 2u);
    for (const auto& side : config.candidates)
        EXPECT_EQ(side.mmproj, std::filesystem::absolute(mmproj).string()) << side.label;
}

TEST(WorkloadDesigner, SyntheticImagesRoundTrip) {
    WorkloadDesigner designer;
    auto* perRequest = designer.findChild<QSpinBox*>(QStringLiteral("workload.images.per_request"));
    auto* width = designer.findChild<QSpinBox*>(QStringLiteral("workload.images.width"));
    ASSERT_TRUE(perRequest && width && designer.findChild<QSpinBox*>(QStringLiteral("workload.images.height")) &&
                designer.findChild<QSpinBox*>(QStringLiteral("workload.images.distinct")));
    EXPECT_EQ(designer.spec().images.perRequest, 0);
    EXPECT_FALSE(width->isEnabled());
    lab::WorkloadSpec spec = designer.spec();
    spec.images = {2, 64, 48, 1};
    designer.setSpec(spec);
    EXPECT_TRUE(width->isEnabled());
    const lab::WorkloadSpec back = designer.spec();
    EXPECT_EQ(back.images.perRequest, 2);
    EXPECT_EQ(back.images.width, 64);
    EXPECT_EQ(back.images.height, 48);
    EXPECT_EQ(back.images.distinct, 1);
    EXPECT_EQ(back.validate(), "");
    EXPECT_EQ(lab::toJson(back)["images"]["per_request"], 2);
}

TEST(BenchmarkPage, SyntheticImagesWithoutAnMmprojAreRefusedBeforeRunning) {
    test::TempDir dir;
    MainWindow w(settingsFor(QString::fromStdString(dir / "runs.db"), QString::fromStdString(dir / "none.gguf")));
    BenchmarkPage* page = w.benchmark();
    page->findChild<QSpinBox*>(QStringLiteral("workload.images.per_request"))->setValue(1);
    page->run();
    EXPECT_FALSE(page->controller().running());
    const QString status = statusOf(page, "benchmark.status");
    EXPECT_TRUE(status.contains(QStringLiteral("candidate a: the workload's requests carry images"))) << status.toStdString();
}

TEST(Gui, BenchmarkWithSyntheticImagesShowsTheImageRows) {
    MB_REQUIRE_DATA(model, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    test::TempDir dir;
    MainWindow w(settingsFor(QString::fromStdString(dir / "runs.db"), QString::fromStdString(model.string())));
    if (w.store()->path().isEmpty()) {
        QSignalSpy ready(&w, &MainWindow::storeReady);
        ASSERT_TRUE(ready.wait(10000));
    }
    BenchmarkPage* page = w.benchmark();
    lab::WorkloadSpec spec = *lab::builtinWorkload("chat");
    spec.requests = 3;
    spec.input = {lab::LengthDist::Kind::Fixed, 8, 0, 1, 8};
    spec.output = {lab::LengthDist::Kind::Fixed, 2, 0, 1, 2};
    spec.sharedPrefix = {};
    spec.multiTurn = {};
    spec.arrival = {};
    spec.warmupRequests = 0;
    spec.images = {1, 64, 64, 1}; // one image, the same for every request
    page->designer()->setSpec(spec);
    for (const char* side : {"benchmark.candidate.a", "benchmark.candidate.b"})
        page->findChild<CandidateEditor*>(QString::fromLatin1(side))->setMmprojPath(QString::fromStdString(mmproj.string()));
    QSignalSpy finished(&page->controller(), &BenchmarkController::finished);
    QSignalSpy failed(&page->controller(), &BenchmarkController::failed);
    page->run();
    ASSERT_TRUE(finished.wait(300000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());
    const SummaryTableModel& table = page->summaryModel();
    const int tokens = table.rowOf(QStringLiteral("image tokens p50"));
    ASSERT_GE(tokens, 0);
    EXPECT_DOUBLE_EQ(table.value(tokens, 0), 16);
    EXPECT_DOUBLE_EQ(table.value(tokens, 1), 16);
    EXPECT_GT(table.value(table.rowOf(QStringLiteral("encode p50 (ms)")), 0), 0);
    EXPECT_DOUBLE_EQ(table.value(table.rowOf(QStringLiteral("images")), 0), 3);
}

TEST(SummaryTableModel, ShowsImageRowsWhenARunHadImages) {
    SummaryTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    lab::RunSummary a, b;
    model.setSummaries({a, b}, {QStringLiteral("A fast"), QStringLiteral("B regular")});
    EXPECT_EQ(model.rowOf(QStringLiteral("image tokens p50")), -1);

    lab::ImageSummary im;
    im.requests = 4;
    im.images = 4;
    im.dropped = 1;
    im.imageTokens = {.count = 4, .p50 = 16};
    im.encodeMs = {.count = 4, .p50 = 2.5, .p95 = 4.0};
    im.encodeShare = {.count = 4, .p50 = 0.25};
    im.ttftMs = {.count = 4, .p50 = 10};
    im.cachedTokens = {.count = 4, .p50 = 17};
    a.images = im;
    im.encodeMs = {.count = 4, .p50 = 5.0, .p95 = 8.0};
    b.images = im;
    model.setSummaries({a, b}, {QStringLiteral("A fast"), QStringLiteral("B regular")});
    for (const char* name : {"image tokens p50", "encode p50 (ms)", "encode p95 (ms)", "encode share of TTFT p50",
                             "image requests' TTFT p50 (ms)", "cached tokens p50 (image requests)", "images",
                             "images dropped"})
        ASSERT_GE(model.rowOf(QString::fromLatin1(name)), 0) << name;
    EXPECT_DOUBLE_EQ(model.value(model.rowOf(QStringLiteral("image tokens p50")), 0), 16);
    const int p95 = model.rowOf(QStringLiteral("encode p95 (ms)"));
    EXPECT_DOUBLE_EQ(model.value(p95, 1), 8.0);
    EXPECT_EQ(model.data(model.index(p95, 1)).toString(), QStringLiteral("4.00"));
    EXPECT_EQ(model.data(model.index(p95, 3)).toString(), QStringLiteral("2.00")); // B/A
    EXPECT_EQ(model.data(model.index(model.rowOf(QStringLiteral("encode share of TTFT p50")), 1)).toString(),
              QStringLiteral("0.250"));
    EXPECT_DOUBLE_EQ(model.value(model.rowOf(QStringLiteral("cached tokens p50 (image requests)")), 0), 17);
    EXPECT_DOUBLE_EQ(model.value(model.rowOf(QStringLiteral("images dropped")), 1), 1);

    b.images.reset(); // only A's requests carried images: B's cells are "-"
    model.setSummaries({a, b}, {QStringLiteral("A fast"), QStringLiteral("B regular")});
    const int tokens = model.rowOf(QStringLiteral("image tokens p50"));
    EXPECT_TRUE(std::isnan(model.value(tokens, 1)));
    EXPECT_EQ(model.data(model.index(tokens, 2)).toString(), QStringLiteral("-"));
}

} // namespace
} // namespace mb::gui
