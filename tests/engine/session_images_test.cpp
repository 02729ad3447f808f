// Sessions with images in the prompt on the tiny llama: llava's greedy tokens, cache keys by content, truncation, checks.
#include "engine/prompt_images.h"
#include "engine/session.h"
#include "forward_test_util.h"
#include "session_test_util.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace mb::engine;
using namespace mb::engine::test_util;
using mb::test::readFloats;

namespace {

struct Golden {
    std::vector<int32_t> system, user, greedy;
    std::vector<float> image; // 16 rows of the model's width
};

Golden golden(const std::string& stem) {
    const auto dir = mb::test::dataDir() / "mm" / "golden";
    const auto meta = nlohmann::json::parse(std::ifstream(dir / "lm_kvf32" / (stem + ".lm.json")));
    return {meta["system_tokens"].get<std::vector<int32_t>>(), meta["user_tokens"].get<std::vector<int32_t>>(),
            meta["greedy_tokens"].get<std::vector<int32_t>>(), readFloats(dir / (stem + ".embd.f32"))};
}

// llava's layout as one session request: system text, the image, the user's text; 16 greedy tokens.
InferenceRequest llavaRequest(const Golden& g, int64_t dim) {
    std::vector<PromptPart> parts(3);
    parts[0].tokens = g.system;
    parts[1].embeddings = g.image;
    parts[2].tokens = g.user;
    InferenceRequest r = fromParts(parts, dim);
    r.maxTokens = 16;
    r.sampling.temperature = 0.0f;
    r.stopAtEos = false;
    return r;
}

RequestEvent runOne(Session& s, InferenceRequest r) {
    Collector c;
    const uint64_t id = s.submit(std::move(r), c.sink());
    c.wait(1);
    return c.result(id);
}

#define MB_REQUIRE_IMAGE_DATA()                                                                                         \
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");                                                                 \
    MB_REQUIRE_DATA(grad, "mm/golden/lm_kvf32/grad64.lm.json");                                                        \
    MB_REQUIRE_DATA(checker, "mm/golden/lm_kvf32/checker100x50.lm.json")

} // namespace

TEST(SessionImages, PlaceholdersAreNegativeAndFollowTheContent) {
    const PromptImage a = makePromptImage(std::vector<float>(8, 1.0f), 4);
    const PromptImage b = makePromptImage(std::vector<float>(8, 2.0f), 4);
    EXPECT_EQ(a.count, 2);
    EXPECT_NE(a.hash, b.hash);
    EXPECT_EQ(a.hash, makePromptImage(std::vector<float>(8, 1.0f), 4).hash);
    EXPECT_LT(imagePlaceholder(a.hash, 0), 0);
    EXPECT_LT(imagePlaceholder(a.hash, 1), 0);
    EXPECT_NE(imagePlaceholder(a.hash, 0), imagePlaceholder(a.hash, 1));
    EXPECT_NE(imagePlaceholder(a.hash, 0), imagePlaceholder(b.hash, 0));
    EXPECT_THROW(makePromptImage(std::vector<float>(7, 1.0f), 4), std::invalid_argument);
    const InferenceRequest r = fromParts({PromptPart{{1, 2}, {}}, PromptPart{{}, std::vector<float>(8, 1.0f)},
                                          PromptPart{{3}, {}}},
                                         4);
    EXPECT_EQ(r.prompt, (std::vector<int32_t>{1, 2, imagePlaceholder(a.hash, 0), imagePlaceholder(a.hash, 1), 3}));
    ASSERT_EQ(r.images.size(), 1u);
    EXPECT_EQ(r.images[0].position, 2);
}

// (a) and (c): the regular profile (F32 KV for an F32 model, no prefix cache) gives llava-cli's tokens.
TEST(SessionImages, RegularProfileGivesLlamaCppsGreedyTokens) {
    MB_REQUIRE_IMAGE_DATA();
    const Golden g = golden("grad64");
    auto s = Session::start(lm.string(), Profile::regular(), {.threads = 2});
    const int64_t dim = s->config().dim;
    for (int run = 0; run < 2; ++run) {
        const RequestEvent r = runOne(*s, llavaRequest(g, dim));
        ASSERT_EQ(r.status, FinishStatus::Ok) << r.error;
        EXPECT_EQ(r.tokens, g.greedy);
        EXPECT_EQ(r.promptTokens, 150);
        EXPECT_EQ(r.imageTokens, 16);
        EXPECT_EQ(r.cachedTokens, 0); // no prefix cache in regular mode
    }
    EXPECT_EQ(s->stats().prefixHits, 0u);
}

// (b): in fast mode a repeated image is a cache hit over its blocks; another image hits the
// system prompt's full blocks only.
TEST(SessionImages, FastModeCachesImageBlocksByContent) {
    MB_REQUIRE_IMAGE_DATA();
    const Golden g = golden("grad64"), other = golden("checker100x50");
    ASSERT_EQ(g.system, other.system);
    auto s = Session::start(lm.string(), fastNative(), {.threads = 2});
    const int64_t dim = s->config().dim, bs = s->profile().blockSize;
    ASSERT_EQ(bs, 16);
    const int64_t len = static_cast<int64_t>(g.system.size() + 16 + g.user.size()); // 150
    const int64_t systemBlocks = static_cast<int64_t>(g.system.size()) / bs * bs;   // 96: the image starts at 109

    const RequestEvent first = runOne(*s, llavaRequest(g, dim));
    ASSERT_EQ(first.status, FinishStatus::Ok) << first.error;
    EXPECT_EQ(first.tokens, g.greedy);
    EXPECT_EQ(first.cachedTokens, 0);

    const RequestEvent again = runOne(*s, llavaRequest(g, dim));
    ASSERT_EQ(again.status, FinishStatus::Ok) << again.error;
    EXPECT_EQ(again.tokens, g.greedy);
    EXPECT_EQ(again.cachedTokens, (len - 1) / bs * bs); // 144: past the system prompt and the image
    EXPECT_GT(again.cachedTokens, static_cast<int64_t>(g.system.size()) + 16);

    const RequestEvent otherRun = runOne(*s, llavaRequest(other, dim));
    ASSERT_EQ(otherRun.status, FinishStatus::Ok) << otherRun.error;
    EXPECT_EQ(otherRun.cachedTokens, systemBlocks); // no hit over the other image's blocks
    EXPECT_EQ(otherRun.tokens, other.greedy);       // and its own K/V, not grad64's

    const RequestEvent back = runOne(*s, llavaRequest(g, dim));
    EXPECT_EQ(back.cachedTokens, (len - 1) / bs * bs);
    EXPECT_EQ(back.tokens, g.greedy);
}

// Priming a prompt with its image caches the image's blocks: the request that follows hits past
// them and still gives llava-cli's tokens; the same prompt primed as token ids alone (what
// priming did before it took images) hits the system prompt's blocks only.
TEST(SessionImages, PrimingWithTheImageCachesItsBlocks) {
    MB_REQUIRE_IMAGE_DATA();
    const Golden g = golden("grad64");
    const int64_t bs = 16;
    const int64_t len = static_cast<int64_t>(g.system.size() + 16 + g.user.size()); // 150
    const int64_t systemBlocks = static_cast<int64_t>(g.system.size()) / bs * bs;   // 96

    auto primed = Session::start(lm.string(), fastNative(), {.threads = 2});
    const int64_t dim = primed->config().dim;
    primed->primePrompts({llavaRequest(g, dim)});
    primed->waitIdle();
    EXPECT_GT(primed->stats().kvBytesInUse, 0u);
    const RequestEvent hit = runOne(*primed, llavaRequest(g, dim));
    ASSERT_EQ(hit.status, FinishStatus::Ok) << hit.error;
    EXPECT_EQ(hit.cachedTokens, (len - 1) / bs * bs); // 144: past the image
    EXPECT_EQ(hit.tokens, g.greedy);

    auto textOnly = Session::start(lm.string(), fastNative(), {.threads = 2});
    std::vector<int32_t> text = g.system; // the prompt's token ids, without the image
    text.insert(text.end(), g.user.begin(), g.user.end());
    textOnly->primePrefixes({text});
    textOnly->waitIdle();
    const RequestEvent miss = runOne(*textOnly, llavaRequest(g, dim));
    ASSERT_EQ(miss.status, FinishStatus::Ok) << miss.error;
    EXPECT_EQ(miss.cachedTokens, systemBlocks);
    EXPECT_EQ(miss.tokens, g.greedy);

    // An image that does not fit its prompt is skipped, not primed.
    auto bad = Session::start(lm.string(), fastNative(), {.threads = 2});
    InferenceRequest outside = llavaRequest(g, dim);
    outside.images[0].position = len - 4; // runs past the prompt's end
    bad->primePrompts({outside});
    bad->waitIdle();
    EXPECT_EQ(runOne(*bad, llavaRequest(g, dim)).cachedTokens, 0);
}

// Chunked prefill splits the image over iterations and batches it with a text-only request.
TEST(SessionImages, ChunkedAndBatchedWithTextGivesTheSameTokens) {
    MB_REQUIRE_IMAGE_DATA();
    const Golden g = golden("grad64");
    Profile p = fastNative();
    p.prefillChunk = 7; // chunks end at 112, 119, 126: inside the image [109, 125)
    p.maxWaitMs = 50;   // the two requests start together
    auto s = Session::start(lm.string(), p, {.threads = 2});
    const int64_t dim = s->config().dim;
    InferenceRequest text = greedy(g.system, 8);
    text.stopAtEos = false;
    Collector c;
    const uint64_t a = s->submit(llavaRequest(g, dim), c.sink());
    const uint64_t b = s->submit(text, c.sink());
    c.wait(2);
    const RequestEvent r = c.result(a);
    ASSERT_EQ(r.status, FinishStatus::Ok) << r.error;
    EXPECT_EQ(r.tokens, g.greedy);
    EXPECT_EQ(c.result(b).status, FinishStatus::Ok) << c.result(b).error;
    EXPECT_EQ(c.result(b).tokens.size(), 8u);
}

// (d): truncation keeps or drops an image whole and says so.
TEST(SessionImages, TruncationNeverCutsAnImage) {
    MB_REQUIRE_IMAGE_DATA();
    const Golden g = golden("grad64");
    Profile tail = fastNative();
    tail.maxContext = 30; // keep_tail would cut at position 121, inside the image [109, 125)
    auto s = Session::start(lm.string(), tail, {.threads = 2});
    const int64_t dim = s->config().dim;
    RequestEvent r = runOne(*s, llavaRequest(g, dim));
    ASSERT_EQ(r.status, FinishStatus::Ok) << r.error;
    EXPECT_EQ(r.imagesDropped, 1);
    EXPECT_EQ(r.imageTokens, 0);
    EXPECT_EQ(r.truncatedTokens, 124); // [1, 125): up to the image's end, not 120
    EXPECT_EQ(r.promptTokens, 26);     // BOS and the user's text

    Profile headTail = fastNative();
    headTail.truncation = Truncation::KeepHeadTail;
    headTail.maxContext = 64; // the middle [32, 118) ends inside the image: it goes whole
    s = Session::start(lm.string(), headTail, {.threads = 2});
    r = runOne(*s, llavaRequest(g, dim));
    ASSERT_EQ(r.status, FinishStatus::Ok) << r.error;
    EXPECT_EQ(r.imagesDropped, 1);
    EXPECT_EQ(r.imageTokens, 0);
    EXPECT_EQ(r.truncatedTokens, 125 - 32);
    EXPECT_EQ(r.promptTokens, 150 - 93);

    // A middle [32, 75) that starts inside an image at [31, 47): the cut moves back to 31.
    InferenceRequest early = llavaRequest(g, dim);
    early.prompt.assign(107, 300);
    early.prompt[0] = 1;
    early.images[0].position = 31;
    r = runOne(*s, early);
    ASSERT_EQ(r.status, FinishStatus::Ok) << r.error;
    EXPECT_EQ(r.imagesDropped, 1);
    EXPECT_EQ(r.truncatedTokens, 75 - 31);

    // A middle that misses the image keeps it whole, shifted.
    headTail.maxContext = 140; // [70, 80) is before the image
    s = Session::start(lm.string(), headTail, {.threads = 2});
    r = runOne(*s, llavaRequest(g, dim));
    ASSERT_EQ(r.status, FinishStatus::Ok) << r.error;
    EXPECT_EQ(r.imagesDropped, 0);
    EXPECT_EQ(r.imageTokens, 16);
    EXPECT_EQ(r.truncatedTokens, 10);

    // Under reject, image positions count toward the context.
    Profile reject = Profile::regular();
    reject.maxContext = 140;
    s = Session::start(lm.string(), reject, {.threads = 2});
    r = runOne(*s, llavaRequest(g, dim));
    EXPECT_EQ(r.status, FinishStatus::Rejected);
    EXPECT_NE(r.error.find("the prompt has 150 tokens"), std::string::npos) << r.error;
}

// (e): bad images are rejected with a one-line reason.
TEST(SessionImages, InvalidImagesAreRejected) {
    MB_REQUIRE_IMAGE_DATA();
    const Golden g = golden("grad64");
    auto s = Session::start(lm.string(), Profile::regular(), {.threads = 1});
    const int64_t dim = s->config().dim;
    const auto expectRejected = [&](InferenceRequest r, const std::string& words) {
        const RequestEvent e = runOne(*s, std::move(r));
        EXPECT_EQ(e.status, FinishStatus::Rejected);
        EXPECT_NE(e.error.find(words), std::string::npos) << e.error;
        EXPECT_EQ(e.error.find('\n'), std::string::npos) << e.error;
    };
    InferenceRequest wrongRows = llavaRequest(g, dim);
    wrongRows.images[0].count = 15;
    expectRejected(wrongRows, "need");
    InferenceRequest noRows = llavaRequest(g, dim);
    noRows.images[0].rows.reset();
    expectRejected(noRows, "has 0 floats");
    InferenceRequest overlapping = llavaRequest(g, dim);
    overlapping.images.push_back(overlapping.images[0]);
    overlapping.images[1].position += 8;
    expectRejected(overlapping, "overlaps");
    InferenceRequest beyond = llavaRequest(g, dim);
    beyond.images[0].position = 140;
    expectRejected(beyond, "outside the prompt");
    InferenceRequest negative = llavaRequest(g, dim);
    negative.images[0].position = -1;
    expectRejected(negative, "outside the prompt");
    // A placeholder left where no image stands is an id outside the vocabulary.
    InferenceRequest stray = llavaRequest(g, dim);
    stray.images.clear();
    expectRejected(stray, "outside the vocabulary");
}
