// Input embeddings at image positions: llava's prompt layout on the tiny llama gives llama.cpp's logits.
#include "engine/clip_model.h"
#include "engine/forward.h"
#include "engine/image.h"
#include "engine/image_prompt.h"
#include "engine/generator.h"
#include "engine/llama_model.h"
#include "forward_test_util.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <numeric>

using namespace mb::engine;
using mb::kernels::ThreadPool;
using mb::test::compare;
using mb::test::readFloats;

namespace {

// system tokens (BOS first) + the image's 16 embedding rows + user tokens, as llava-cli lays
// them out, then teacher-forced greedy steps; an F32 KV cache against the lm_kvf32 goldens.
void checkImagePrompt(const std::string& stem) {
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(golden, "mm/golden/lm_kvf32/" + stem + ".lm.json");
    const auto meta = nlohmann::json::parse(std::ifstream(golden));
    const auto system = meta["system_tokens"].get<std::vector<int32_t>>();
    const auto user = meta["user_tokens"].get<std::vector<int32_t>>();
    const auto greedy = meta["greedy_tokens"].get<std::vector<int32_t>>();
    const auto dir = mb::test::dataDir() / "mm" / "golden";
    const auto image = readFloats(dir / (stem + ".embd.f32"));
    const auto prefix = readFloats(dir / "lm_kvf32" / (stem + ".prefix_logits.f32"));
    const auto steps = readFloats(dir / "lm_kvf32" / (stem + ".greedy_logits.f32"));
    const auto m = LlamaModel::load(lm.string());
    const size_t vocab = static_cast<size_t>(m->config().vocabSize);
    ASSERT_EQ(image.size(), 16u * static_cast<size_t>(m->config().dim));
    ThreadPool pool(2);
    Forward fwd(*m, pool);
    const int64_t bs = 16;
    KvCache cache(m->config(), blocksFor(256, bs), bs);
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<float> logits(vocab);
    const auto p0 = static_cast<int64_t>(system.size());
    ASSERT_EQ(p0, meta["image_pos0"].get<int64_t>());
    fwd.runSequence(system, 0, cache, table, logits.data());
    fwd.runEmbeddings(image, p0, cache, table, logits.data());
    fwd.runSequence(user, meta["user_pos0"].get<int64_t>(), cache, table, logits.data());
    EXPECT_LE(compare(logits.data(), prefix.data(), vocab).maxAbs, 2e-3) << stem << " prefix";
    double worst = 0;
    int64_t pos = meta["prefix_len"].get<int64_t>();
    for (size_t j = 0; j < greedy.size(); ++j) {
        worst = std::max(worst, compare(logits.data(), steps.data() + j * vocab, vocab).maxAbs);
        if (j + 1 == greedy.size()) break;
        fwd.runSequence(std::span(&greedy[j], 1), pos++, cache, table, logits.data());
    }
    EXPECT_LE(worst, 2e-3) << stem << " greedy steps";
    std::cout << "[ image    ] " << stem << ": logits within " << worst << " of llama.cpp's (F32 KV)\n";
}

} // namespace

TEST(ImageEmbeddings, LlavaPromptLayoutMatchesLlamaCpp) {
    for (const char* stem : {"grad64", "checker100x50", "gray48x80", "tiny7x9", "blobs80x60"}) checkImagePrompt(stem);
}

// engine::generateFromParts with the same three parts gives llava-cli's greedy tokens.
TEST(ImageEmbeddings, AGenerationWithAnImageGivesLlamaCppsGreedyTokens) {
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(golden, "mm/golden/lm_kvf32/grad64.lm.json");
    const auto meta = nlohmann::json::parse(std::ifstream(golden));
    const auto m = LlamaModel::load(lm.string());
    ThreadPool pool(2);
    std::vector<PromptPart> parts(3);
    parts[0].tokens = meta["system_tokens"].get<std::vector<int32_t>>();
    parts[1].embeddings = readFloats(mb::test::dataDir() / "mm" / "golden" / "grad64.embd.f32");
    parts[2].tokens = meta["user_tokens"].get<std::vector<int32_t>>();
    GenerateOptions o;
    o.maxTokens = 16;
    o.sampling.temperature = 0;
    o.stopAtEos = false;
    const GenerateResult r = generateFromParts(*m, pool, parts, o);
    EXPECT_EQ(r.tokens, meta["greedy_tokens"].get<std::vector<int32_t>>());
    parts[1].embeddings.pop_back(); // not whole rows
    EXPECT_THROW(generateFromParts(*m, pool, parts, o), std::invalid_argument);
}

TEST(ImageEmbeddings, RowsMustBeWholeAndTokensStillChecked) {
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");
    const auto m = LlamaModel::load(lm.string());
    ThreadPool pool(1);
    Forward fwd(*m, pool);
    KvCache cache(m->config(), 4, 16);
    std::vector<int32_t> table = {0, 1, 2, 3};
    std::vector<float> logits(static_cast<size_t>(m->config().vocabSize));
    std::vector<float> rows(static_cast<size_t>(m->config().dim) + 3, 0.0f);
    EXPECT_THROW(fwd.runEmbeddings(rows, 0, cache, table, logits.data()), ModelError);
    // An id outside the vocabulary is still refused where no embedding stands for it.
    const int32_t bad = 100000;
    EXPECT_THROW(fwd.runSequence(std::span(&bad, 1), 0, cache, table, logits.data()), ModelError);
}

// The whole path: decode, preprocess, our encoder, llava's layout from the prompt text, the
// language model; against llama.cpp's prefix logits (F32 KV) for all five images.
TEST(ImageEmbeddings, OurEncoderAndLayoutGiveLlamaCppsPrefixLogits) {
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    if (!haveImageDecoder()) GTEST_SKIP() << "this build has no image decoder (libstb-dev)";
    const auto m = LlamaModel::load(lm.string());
    const ClipModel clip = ClipModel::load(mmproj.string());
    ThreadPool pool(2);
    const auto dir = mb::test::dataDir() / "mm";
    for (const char* name : {"grad64.png", "checker100x50.png", "gray48x80.png", "tiny7x9.png", "blobs80x60.jpg"}) {
        const std::string stem = std::string(name).substr(0, std::string(name).find('.'));
        const auto meta = nlohmann::json::parse(std::ifstream(dir / "golden" / "lm_kvf32" / (stem + ".lm.json")));
        const auto parts = imagePrompt(m->tokenizer(), "Describe the image.",
                                       {clip.encodeImage(loadImage((dir / "images" / name).string()), pool)});
        ASSERT_EQ(parts.size(), 3u);
        EXPECT_EQ(parts[0].tokens, meta["system_tokens"].get<std::vector<int32_t>>()) << stem;
        EXPECT_EQ(parts[2].tokens, meta["user_tokens"].get<std::vector<int32_t>>()) << stem;
        Forward fwd(*m, pool);
        KvCache cache(m->config(), blocksFor(256, 16), 16);
        std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
        std::iota(table.begin(), table.end(), 0);
        std::vector<float> logits(static_cast<size_t>(m->config().vocabSize));
        int64_t at = 0;
        for (const auto& p : parts) {
            if (p.tokens.empty()) fwd.runEmbeddings(p.embeddings, at, cache, table, logits.data());
            else fwd.runSequence(p.tokens, at, cache, table, logits.data());
            at += p.positions(m->config().dim);
        }
        const auto prefix = readFloats(dir / "golden" / "lm_kvf32" / (stem + ".prefix_logits.f32"));
        const double diff = compare(logits.data(), prefix.data(), logits.size()).maxAbs;
        EXPECT_LE(diff, 2e-3) << stem;
        std::cout << "[ image    ] " << stem << ": our encoder -> prefix logits within " << diff << " of llama.cpp's\n";
    }
    EXPECT_THROW(imagePrompt(m->tokenizer(), "<image> and <image>", {{}}), std::invalid_argument);
}
