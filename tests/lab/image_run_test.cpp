// Images in runs: workload images, the ImageTarget's encoder, records, the cache effect of a repeated image.
#include "engine/clip_model.h"
#include "engine/prompt_images.h"
#include "engine/session.h"
#include "kernels/cpu/thread_pool.h"
#include "lab/comparison.h"
#include "lab/image_target.h"
#include "lab/migration_warmup.h"
#include "lab/runner.h"
#include "lab/workload_images.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

using namespace mb;
using namespace mb::lab;

namespace {

const TokenSpace kSpace{1, 3, 500}; // the tiny llama's 512-token SPM vocabulary

WorkloadSpec plainWithImages(int64_t requests, int32_t distinct) {
    WorkloadSpec spec;
    spec.requests = requests;
    spec.input = {LengthDist::Kind::Fixed, 8, 0, 1, 8};
    spec.output = {LengthDist::Kind::Fixed, 4, 0, 1, 4};
    spec.images.perRequest = 1;
    spec.images.width = 64;
    spec.images.height = 48;
    spec.images.distinct = distinct;
    spec.seed = 7;
    return spec;
}

std::filesystem::path tempDir(const std::string& name) {
    auto d = std::filesystem::temp_directory_path() / ("mb_image_run_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
}

// Events of one request, collected; wait() blocks until its Finished.
struct Events {
    std::mutex m;
    std::condition_variable cv;
    std::map<uint64_t, engine::RequestEvent> finished;
    engine::EventSink sink() {
        return [this](const engine::RequestEvent& e) {
            if (e.kind != engine::EventKind::Finished) return;
            std::lock_guard g(m);
            finished[e.id] = e;
            cv.notify_all();
        };
    }
    engine::RequestEvent wait(uint64_t id) {
        std::unique_lock l(m);
        cv.wait(l, [&] { return finished.count(id) > 0; });
        return finished[id];
    }
    size_t waitCount(size_t n) {
        std::unique_lock l(m);
        cv.wait(l, [&] { return finished.size() >= n; });
        return finished.size();
    }
};

} // namespace

TEST(WorkloadImages, SpecRoundTripsAndValidates) {
    WorkloadSpec spec = plainWithImages(4, 1);
    const WorkloadSpec back = parseWorkloadSpec(nlohmann::json::parse(toJson(spec).dump()));
    EXPECT_EQ(back.images.perRequest, 1);
    EXPECT_EQ(back.images.width, 64);
    EXPECT_EQ(back.images.height, 48);
    EXPECT_EQ(back.images.distinct, 1);
    spec.images.perRequest = WorkloadSpec::Images::kMaxPerRequest + 1;
    EXPECT_NE(spec.validate().find("images.per_request"), std::string::npos);
    spec.images.perRequest = 1;
    spec.images.width = 0;
    EXPECT_NE(spec.validate().find("images.width"), std::string::npos);
    spec.images.width = 64;
    spec.images.distinct = -1;
    EXPECT_NE(spec.validate().find("images.distinct"), std::string::npos);
    EXPECT_THROW(parseWorkloadSpec(nlohmann::json::parse(R"({"images": {"per_image": 1}})")), std::runtime_error);
}

TEST(WorkloadImages, DistinctDecidesWhoSharesAndWarmupsNeverShare) {
    WorkloadSpec spec = plainWithImages(6, 1);
    spec.warmupRequests = 2;
    auto same = buildWorkload(spec, kSpace);
    std::set<uint64_t> measured, warm;
    for (const auto& r : same) {
        ASSERT_EQ(r.images.size(), 1u);
        (r.warmup ? warm : measured).insert(r.images[0].seed);
    }
    EXPECT_EQ(measured.size(), 1u);
    EXPECT_EQ(warm.size(), 2u);
    for (uint64_t s : warm) EXPECT_FALSE(measured.count(s));

    spec.images.distinct = 0;
    measured.clear();
    for (const auto& r : buildWorkload(spec, kSpace))
        if (!r.warmup) measured.insert(r.images[0].seed);
    EXPECT_EQ(measured.size(), 6u);
    EXPECT_EQ(buildWorkload(spec, kSpace)[3].images, buildWorkload(spec, kSpace)[3].images); // reproducible

    WorkloadSpec turns = plainWithImages(0, 0);
    turns.multiTurn = {3, 2, {LengthDist::Kind::Fixed, 4, 0, 1, 4}};
    for (const auto& r : buildWorkload(turns, kSpace)) // every turn repeats its conversation's image
        for (const auto& other : buildWorkload(turns, kSpace))
            EXPECT_EQ(r.conversation == other.conversation, r.images == other.images);
}

TEST(WorkloadImages, SyntheticImagesAreSeededPixels) {
    WorkloadImage a{.width = 40, .height = 30, .seed = 1}, b{.width = 40, .height = 30, .seed = 2};
    const engine::RgbImage x = syntheticImage(a), y = syntheticImage(a), z = syntheticImage(b);
    EXPECT_EQ(x.width, 40);
    EXPECT_EQ(x.height, 30);
    EXPECT_EQ(x.rgb.size(), 40u * 30 * 3);
    EXPECT_EQ(x.rgb, y.rgb);
    EXPECT_NE(x.rgb, z.rgb);
    EXPECT_THROW(syntheticImage({.width = 0, .height = 4}), std::invalid_argument);
}

TEST(WorkloadImages, PromptFileLinesListImagesFromTheirFolder) {
    const auto dir = tempDir("jsonl");
    const auto file = dir / "p.jsonl";
    std::ofstream(file) << R"({"prompt": "hello", "images": ["a.png", "/abs/b.jpg"]})" << "\n"
                        << R"({"prompt": "no image"})" << "\n";
    const auto tokenize = [](const std::string& s) { return std::vector<int32_t>(s.size(), 5); };
    const auto requests = loadPromptFile(file.string(), tokenize, 4);
    ASSERT_EQ(requests.size(), 2u);
    ASSERT_EQ(requests[0].images.size(), 2u);
    EXPECT_EQ(requests[0].images[0].path, (dir / "a.png").string());
    EXPECT_EQ(requests[0].images[1].path, "/abs/b.jpg");
    EXPECT_TRUE(requests[1].images.empty());
    std::ofstream(file) << R"({"prompt": "x", "images": "a.png"})" << "\n";
    try {
        loadPromptFile(file.string(), tokenize, 4);
        FAIL() << "a string for images was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(":1: \"images\" must be an array"), std::string::npos) << e.what();
    }
    std::filesystem::remove_all(dir);
}

TEST(ImageRuns, CandidatesWithoutAnEncoderAreRefusedClearly) {
    WorkloadRequest r;
    r.prompt = {1, 5};
    r.images = {{.path = "x.png"}};
    Candidate remote{.label = "b", .remote = "remote:http://127.0.0.1:9/v1"};
    Candidate plain{.label = "a", .modelPath = "m.gguf"};
    EXPECT_NE(imagesRefused({plain}, {r}).find("give it a vision encoder (--mmproj FILE)"), std::string::npos);
    EXPECT_NE(imagesRefused({remote}, {r}).find("remote candidates take none"), std::string::npos);
    EXPECT_EQ(imagesRefused({plain}, {WorkloadRequest{}}), "");
    EXPECT_THROW(runComparison({plain}, {r}, {}), std::invalid_argument);
}

#define MB_REQUIRE_MM_DATA()                                                                                            \
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");                                                                 \
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");                                                         \
    MB_REQUIRE_DATA(grad, "mm/images/grad64.png")

TEST(ImageRuns, GreedyTokensMatchTheEngineGivenTheSameEmbeddings) {
    MB_REQUIRE_MM_DATA();
    auto clip = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(mmproj.string()));
    engine::Profile p = engine::Profile::regular();
    p.precision = engine::Precision::F32;
    ImageTarget target(std::make_unique<EmbeddedTarget>(engine::Session::start(lm.string(), p), "t"), clip, 256, 1);
    WorkloadRequest w;
    w.prompt = {1, 10, 20, 30, 40};
    w.images = {{.path = grad.string()}};
    target.prepare({w});
    engine::InferenceRequest req;
    req.prompt = w.prompt;
    req.maxTokens = 8;
    req.stopAtEos = false;
    Events ev;
    const uint64_t id = target.submitImages(req, w.images, ev.sink());
    const engine::RequestEvent got = ev.wait(id);
    ASSERT_EQ(got.status, engine::FinishStatus::Ok) << got.error;
    EXPECT_EQ(got.images, 1);
    EXPECT_EQ(got.imageTokens, 16);
    EXPECT_EQ(got.promptTokens, 5 + 16);
    EXPECT_GT(got.encodeMs, 0.0);

    // The same layout straight into a session: BOS, the image's rows, the text.
    auto session = engine::Session::start(lm.string(), p);
    std::vector<engine::PromptPart> parts(3);
    parts[0].tokens = {1};
    parts[1].embeddings = clip->encodeImage(engine::loadImage(grad.string()), *std::make_unique<kernels::ThreadPool>(1));
    parts[2].tokens = {10, 20, 30, 40};
    engine::InferenceRequest direct = engine::fromParts(parts, 256);
    direct.maxTokens = 8;
    direct.stopAtEos = false;
    Events ev2;
    const uint64_t id2 = session->submit(std::move(direct), ev2.sink());
    EXPECT_EQ(ev2.wait(id2).tokens, got.tokens);
}

TEST(ImageRuns, ARepeatedImageHitsTheCacheInFastModeOnly) {
    MB_REQUIRE_MM_DATA();
    const auto requests = buildWorkload(plainWithImages(4, 1), kSpace);
    engine::Profile fast = engine::Profile::fast(), regular = engine::Profile::regular();
    ComparisonOptions o;
    o.run.sampling.temperature = 0.0f;
    const auto results = runComparison({{.label = "a", .modelPath = lm.string(), .profile = fast, .mmprojPath = mmproj.string()},
                                        {.label = "b", .modelPath = lm.string(), .profile = regular, .mmprojPath = mmproj.string()}},
                                       requests, o);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        ASSERT_EQ(r.run.records.size(), 4u);
        for (const RequestRecord& rec : r.run.records) {
            ASSERT_EQ(rec.status, RequestStatus::Ok) << rec.error;
            EXPECT_EQ(rec.images, 1);
            EXPECT_EQ(rec.imageTokens, 16);
            EXPECT_GT(rec.encodeMs, 0.0);
            EXPECT_GE(rec.encodeShare(), 0.0);
            EXPECT_LE(rec.encodeShare(), 1.0);
        }
        ASSERT_TRUE(r.summary.images);
        EXPECT_EQ(r.summary.images->requests, 4);
        EXPECT_EQ(r.summary.images->imageTokens.p50, 16.0);
        EXPECT_NE(r.description.find("vision encoder tiny-mmproj-f32.gguf"), std::string::npos) << r.description;
    }
    // BOS + 16 image positions: the first block (16 positions) of a repeated image is cached.
    const auto& fastRecords = results[0].run.records;
    EXPECT_EQ(fastRecords[0].cachedTokens, 0);
    for (size_t i = 1; i < fastRecords.size(); ++i) EXPECT_GE(fastRecords[i].cachedTokens, 16) << i;
    for (const RequestRecord& rec : results[1].run.records) EXPECT_EQ(rec.cachedTokens, 0);
    const nlohmann::ordered_json j = toJson(fastRecords[1]);
    EXPECT_EQ(j["image_tokens"], 16);
    EXPECT_GT(j["encode_ms"].get<double>(), 0.0);
}

TEST(ImageRuns, DifferentImagesDoNotHitTheCache) {
    MB_REQUIRE_MM_DATA();
    const auto requests = buildWorkload(plainWithImages(3, 0), kSpace);
    const auto results =
        runComparison({{.label = "a", .modelPath = lm.string(), .profile = engine::Profile::fast(), .mmprojPath = mmproj.string()}},
                      requests, {});
    for (const RequestRecord& rec : results[0].run.records) EXPECT_LT(rec.cachedTokens, 16) << rec.id; // BOS block only
}

// Migration node D primes a request with its image (encoded by the candidate's mmproj, laid
// out as ImageTarget lays it out): the request then hits the primed image block. Without an
// mmproj the request is skipped, not primed as text.
TEST(ImageRuns, MigrationWarmupPrimesRequestsWithTheirImages) {
    MB_REQUIRE_MM_DATA();
    std::vector<WorkloadRequest> requests = buildWorkload(plainWithImages(2, 0), kSpace);
    ASSERT_EQ(requests.size(), 2u);
    auto session = engine::Session::start(lm.string(), engine::Profile::fast());
    const WarmupResult w = warmUp(*session, {requests[0]}, mmproj.string(), lm.string(), 1);
    EXPECT_EQ(w.primedPrompts, 1);
    EXPECT_EQ(w.imagePrompts, 1);
    EXPECT_EQ(w.imagePromptsSkipped, 0);
    EXPECT_TRUE(w.reloadRefused) << w.reloadMessage;
    EXPECT_GT(w.cachedBytes, 0u);

    auto clip = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(mmproj.string()));
    ImageTarget target(std::make_unique<EmbeddedTarget>(std::move(session), "t"), clip, 256, 1);
    Events ev;
    for (size_t i = 0; i < 2; ++i) {
        engine::InferenceRequest req;
        req.prompt = requests[i].prompt;
        req.maxTokens = 2;
        const engine::RequestEvent got = ev.wait(target.submitImages(req, requests[i].images, ev.sink()));
        ASSERT_EQ(got.status, engine::FinishStatus::Ok) << got.error;
        // BOS + 16 image positions + 8 text: one full block, BOS and the image's first 15 rows.
        EXPECT_EQ(got.cachedTokens, i == 0 ? 16 : 0) << "request " << i << " (only the first was primed)";
    }

    auto noEncoder = engine::Session::start(lm.string(), engine::Profile::fast());
    const WarmupResult skipped = warmUp(*noEncoder, requests, "", lm.string(), 1);
    EXPECT_EQ(skipped.primedPrompts, 0);
    EXPECT_EQ(skipped.imagePromptsSkipped, 2);
}

TEST(ImageRuns, BadImagesFailBeforeTheRunOrAsOneRequest) {
    MB_REQUIRE_MM_DATA();
    const auto dir = tempDir("bad");
    const auto bad = dir / "broken.png";
    std::ofstream(bad, std::ios::binary) << "\x89PNG\r\n\x1a\n not really";
    WorkloadRequest w;
    w.prompt = {1, 7, 8};
    w.maxTokens = 2;
    w.images = {{.path = bad.string()}};
    Candidate c{.label = "a", .modelPath = lm.string(), .profile = engine::Profile::regular(), .mmprojPath = mmproj.string()};
    try {
        runComparison({c}, {w}, {});
        FAIL() << "a corrupt image was accepted";
    } catch (const engine::ImageError& e) {
        EXPECT_NE(std::string(e.what()).find("broken.png"), std::string::npos) << e.what();
    }
    // Corrupted after prepare(): that request fails with a one-line error, the next runs.
    auto clip = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(mmproj.string()));
    ImageTarget target(std::make_unique<EmbeddedTarget>(engine::Session::start(lm.string(), engine::Profile::regular()), "t"),
                       clip, 256, 1);
    engine::InferenceRequest req;
    req.prompt = w.prompt;
    req.maxTokens = 2;
    Events ev;
    const uint64_t failed = target.submitImages(req, w.images, ev.sink());
    const uint64_t fine = target.submitImages(req, {{.path = grad.string()}}, ev.sink());
    const auto e1 = ev.wait(failed), e2 = ev.wait(fine);
    EXPECT_EQ(e1.status, engine::FinishStatus::Error);
    EXPECT_NE(e1.error.find("image 1 of 1 (" + bad.string() + ")"), std::string::npos) << e1.error;
    EXPECT_EQ(e2.status, engine::FinishStatus::Ok) << e2.error;
    // A mismatched projector is refused when the target is made.
    EXPECT_THROW(ImageTarget(std::make_unique<EmbeddedTarget>(engine::Session::start(lm.string(), engine::Profile::regular()), "t"),
                             clip, 128, 1),
                 engine::ClipError);
    std::filesystem::remove_all(dir);
}

TEST(ImageRuns, CancelledWhileWaitingForTheEncoderEndsCancelled) {
    MB_REQUIRE_MM_DATA();
    auto clip = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(mmproj.string()));
    ImageTarget target(std::make_unique<EmbeddedTarget>(engine::Session::start(lm.string(), engine::Profile::regular()), "t"),
                       clip, 256, 1);
    engine::InferenceRequest req;
    req.prompt = {1, 7, 8};
    req.maxTokens = 64;
    req.stopAtEos = false;
    Events ev;
    std::vector<uint64_t> ids;
    for (int i = 0; i < 12; ++i)
        ids.push_back(target.submitImages(req, {{.width = 640, .height = 480, .seed = uint64_t(i)}}, ev.sink()));
    for (uint64_t id : ids) EXPECT_TRUE(target.cancel(id));
    ev.waitCount(ids.size());
    int cancelled = 0;
    for (uint64_t id : ids) {
        const auto e = ev.wait(id);
        EXPECT_NE(e.status, engine::FinishStatus::Error) << e.error;
        cancelled += e.status == engine::FinishStatus::Cancelled;
    }
    EXPECT_GE(cancelled, 10); // the first may have finished its encode and be cancelled in the engine
    target.waitIdle();
    EXPECT_EQ(target.stats().waiting, 0);
    EXPECT_FALSE(target.cancel(ids[0]));
}
