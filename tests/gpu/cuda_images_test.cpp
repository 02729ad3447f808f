// Input embeddings (image positions) on the CUDA backend: batches mixing rows and token ids, one-row decode steps and
// llava-layout sessions, each against the CPU.
//
// The rows and token ids are llava's (../shared/data/mm: grad64 through llama.cpp's encoder, 16 rows of 256) fed to
// tiny-llama31 (../shared/data/arch, also 256 wide and a 512-token vocabulary), so the device run needs only the arch
// data; the CPU's own agreement with llama.cpp on image prompts is tests/engine/session_images_test.cpp's.
#include "engine/cuda_forward.h"
#include "engine/forward.h"
#include "engine/forward_test_util.h"
#include "engine/prompt_images.h"
#include "engine/session.h"
#include "engine/session_test_util.h"
#include "gpu_test_util.h"
#include "test_data.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <numeric>

using namespace mb::engine;
using namespace mb::engine::test_util;
using mb::kernels::ThreadPool;
using mb::test::nmse;
using mb::test::readFloats;

namespace {

const Device kGpu{Device::Kind::Cuda, 0};

struct LlavaPrompt {
    std::vector<int32_t> system, user;
    std::vector<float> image; // 16 rows of 256, from llama.cpp's encoder
};

LlavaPrompt llavaPrompt(const std::string& stem) {
    const auto dir = mb::test::dataDir() / "mm" / "golden";
    const auto meta = nlohmann::json::parse(std::ifstream(dir / "lm_kvf32" / (stem + ".lm.json")));
    return {meta["system_tokens"].get<std::vector<int32_t>>(), meta["user_tokens"].get<std::vector<int32_t>>(),
            readFloats(dir / (stem + ".embd.f32"))};
}

#define MB_REQUIRE_IMAGE_DATA()                                                                                        \
    MB_REQUIRE_DATA(lm, "arch/tiny-llama31.f32.gguf");                                                                \
    MB_REQUIRE_DATA(json, "mm/golden/lm_kvf32/grad64.lm.json");                                                       \
    MB_REQUIRE_DATA(rows, "mm/golden/grad64.embd.f32")

// 16 greedy tokens of llava's layout through a session; `prefillChunk` 8 keeps CUDA's prompt
// on the F32 products (more tokens per chunk take the F16 GEMM, whose rounding could flip a
// close greedy choice between the backends).
std::vector<int32_t> sessionTokens(const std::string& model, Profile profile, const Device& device,
                                   const LlavaPrompt& p, int runs, std::string& failure) {
    profile.prefillChunk = 8;
    auto s = Session::start(model, profile, {.threads = 2, .device = device});
    std::vector<PromptPart> parts(3);
    parts[0].tokens = p.system;
    parts[1].embeddings = p.image;
    parts[2].tokens = p.user;
    InferenceRequest r = fromParts(parts, s->config().dim);
    r.maxTokens = 16;
    r.sampling.temperature = 0.0f;
    r.stopAtEos = false;
    std::vector<int32_t> all;
    for (int run = 0; run < runs; ++run) { // again: from the fast profile's prefix cache
        Collector c;
        const uint64_t id = s->submit(r, c.sink());
        c.wait(1);
        const RequestEvent e = c.result(id);
        if (e.status != FinishStatus::Ok || e.imageTokens != 16) failure += profile.name + ": " + e.error + "; ";
        all.insert(all.end(), e.tokens.begin(), e.tokens.end());
    }
    return all;
}

// Token ids with `rows` input rows from position `at` on; logits of the last `want` positions.
std::vector<float> mixedLogits(ForwardBackend& f, const std::vector<int32_t>& tokens, const std::vector<float>& rows,
                               size_t at, size_t want) {
    const ModelConfig& c = f.model().config();
    const size_t n = tokens.size(), dim = static_cast<size_t>(c.dim), count = rows.size() / dim;
    KvCache cache(c, blocksFor(static_cast<int64_t>(n), 16), 16, f.kvStorage());
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<int64_t> positions(n);
    std::iota(positions.begin(), positions.end(), 0);
    const std::vector<int32_t> seqIds(n, 0);
    std::vector<uint8_t> wanted(n, 0);
    std::fill(wanted.end() - static_cast<std::ptrdiff_t>(want), wanted.end(), 1);
    std::vector<const float*> embeddings(n, nullptr);
    for (size_t i = 0; i < count; ++i) embeddings[at + i] = rows.data() + i * dim;
    KvCache* const caches[] = {&cache};
    const std::span<const int32_t> tables[] = {table};
    std::vector<float> logits(want * static_cast<size_t>(c.vocabSize));
    f.run({tokens, positions, seqIds, caches, tables, wanted, embeddings}, logits.data());
    return logits;
}

} // namespace

// llava's layout as one batch (system, 16 image rows, user), through chunks of 8 that start and end
// inside the image, and as one chunk (cuBLAS): the logits of the last positions against the CPU.
TEST(CudaImages, BatchesMixingInputRowsAndTokensMatchTheCpu) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_IMAGE_DATA();
    const LlavaPrompt g = llavaPrompt("grad64");
    std::vector<int32_t> tokens = g.system;
    tokens.resize(tokens.size() + 16, 0); // ids at image positions are ignored
    tokens.insert(tokens.end(), g.user.begin(), g.user.end());
    const auto m = LlamaModel::load(lm.string());
    ThreadPool pool(2);
    Forward cpu(*m, pool);
    const auto want = mixedLogits(cpu, tokens, g.image, g.system.size(), 4);
    CudaForward chunked(*m, {.maxChunk = 8}, 0), whole(*m, {}, 0);
    EXPECT_LT(nmse(mixedLogits(chunked, tokens, g.image, g.system.size(), 4), want), 1e-9) << "chunks of 8";
    EXPECT_LT(nmse(mixedLogits(whole, tokens, g.image, g.system.size(), 4), want), 1e-4) << "one chunk";
}

// An input row in a one-token step goes through the captured decode graph, before and after
// token steps replayed on the same graph.
TEST(CudaImages, OneRowStepsReplayTheDecodeGraph) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_IMAGE_DATA();
    const LlavaPrompt g = llavaPrompt("grad64");
    const auto m = LlamaModel::load(lm.string());
    const auto dim = static_cast<size_t>(m->config().dim);
    const RopeTable rope(m->config(), 64);
    ThreadPool pool(1);
    Forward cpu(*m, pool);
    CudaForward gpu(*m, {.fused = true, .rope = &rope, .graphs = true}, 0);
    KvCache gpuCache(m->config(), 4, 16, KvStorage::Device), cpuCache(m->config(), 4, 16);
    const std::vector<int32_t> table = {2, 0, 3, 1};
    std::vector<float> a(static_cast<size_t>(m->config().vocabSize)), b(a.size());
    int64_t pos = 0;
    for (int step = 0; step < 12; ++step, ++pos) { // token, row, token, row, ...
        if (step % 2 == 0) {
            const int32_t id[1] = {g.system[static_cast<size_t>(step)]};
            gpu.runSequence(id, pos, gpuCache, table, a.data());
            cpu.runSequence(id, pos, cpuCache, table, b.data());
        } else {
            const std::span<const float> row(g.image.data() + static_cast<size_t>(step / 2) * dim, dim);
            gpu.runEmbeddings(row, pos, gpuCache, table, a.data());
            cpu.runEmbeddings(row, pos, cpuCache, table, b.data());
        }
        EXPECT_LT(nmse(a, b), 1e-9) << "step " << step;
    }
    EXPECT_EQ(gpu.graphCaptures(), 1u);
    EXPECT_EQ(gpu.graphReplays(), 12u);
}

// A CUDA session serves image requests (no longer refused) and gives the CPU session's greedy
// tokens, in both profiles, the fast one a second time from its prefix cache.
TEST(CudaImages, SessionsWithAnImageGiveTheCpuTokens) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_IMAGE_DATA();
    const LlavaPrompt p = llavaPrompt("grad64");
    for (const Profile& profile : {Profile::regular(), fastNative()}) {
        std::string failure;
        const auto cpu = sessionTokens(lm.string(), profile, Device{}, p, 2, failure);
        const auto gpu = sessionTokens(lm.string(), profile, kGpu, p, 2, failure);
        EXPECT_EQ(failure, "");
        EXPECT_EQ(cpu.size(), 32u) << profile.name;
        EXPECT_EQ(gpu, cpu) << profile.name;
    }
}
