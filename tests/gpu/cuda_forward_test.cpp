// The CUDA backend on the real stories260K model: logits vs the CPU, greedy goldens, graphs, batching, sessions.
#include "engine/cuda_forward.h"
#include "engine/forward.h"
#include "engine/generator.h"
#include "engine/session.h"
#include "gpu_test_util.h"
#include "test_data.h"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <numeric>

using namespace mb::engine;
using mb::kernels::ThreadPool;
using mb::test::nmse;

namespace {

const Device kGpu{Device::Kind::Cuda, 0};

nlohmann::json golden() {
    std::ifstream in(mb::test::dataDir() / "golden/stories260K.json");
    return nlohmann::json::parse(in);
}

// One sequence in a cache of its own storage kind: prefill `tokens`, return the last logits.
std::vector<float> lastLogits(ForwardBackend& f, const std::vector<int32_t>& tokens) {
    const int64_t bs = 16;
    KvCache cache(f.model().config(), blocksFor(static_cast<int64_t>(tokens.size()), bs), bs, f.kvStorage());
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<float> logits(static_cast<size_t>(f.model().config().vocabSize));
    f.runSequence(tokens, 0, cache, table, logits.data());
    return logits;
}

// Prefill, then `steps` greedy decode steps; every step's logits, concatenated.
std::vector<float> decodeTrace(ForwardBackend& f, const std::vector<int32_t>& prompt, int steps) {
    const ModelConfig& c = f.model().config();
    const int64_t bs = 16, n = static_cast<int64_t>(prompt.size());
    KvCache cache(c, blocksFor(n + steps, bs), bs, f.kvStorage());
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<float> logits(static_cast<size_t>(c.vocabSize)), trace;
    f.runSequence(prompt, 0, cache, table, logits.data());
    for (int i = 0; i < steps; ++i) {
        trace.insert(trace.end(), logits.begin(), logits.end());
        const int32_t next[1] = {argmax(logits)};
        f.runSequence(next, n + i, cache, table, logits.data());
    }
    return trace;
}

const std::vector<int32_t> kPrompt = {1, 403, 407, 261, 378}; // BOS + "Once upon a time"

} // namespace

class CudaForwardModel : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaForwardModel, LogitsMatchTheCpu) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/" + GetParam());
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    Forward cpu(*m, pool);
    CudaForward gpu(*m, {}, 0);
    // 5 tokens: the matvec kernels (F32 accumulation as on the CPU).
    EXPECT_LT(nmse(lastLogits(gpu, kPrompt), lastLogits(cpu, kPrompt)), 1e-9) << GetParam();
    // 40 tokens: the cuBLAS F16 path (activations rounded to F16).
    std::vector<int32_t> longer(40);
    for (size_t i = 0; i < longer.size(); ++i) longer[i] = static_cast<int32_t>(1 + (i * 37) % 500);
    EXPECT_LT(nmse(lastLogits(gpu, longer), lastLogits(cpu, longer)), 1e-4) << GetParam();
}

TEST_P(CudaForwardModel, GreedyGoldens) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/" + GetParam());
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    const auto all = golden();
    for (const auto& g : all["generation"]) {
        GenerateOptions opts;
        opts.maxTokens = static_cast<int32_t>(g["generated_tokens"].size());
        opts.sampling.temperature = 0.0f;
        opts.device = kGpu;
        const auto prompt = g["prompt_tokens"].get<std::vector<int32_t>>();
        EXPECT_EQ(generate(*m, pool, prompt, opts).tokens, g["generated_tokens"].get<std::vector<int32_t>>())
            << GetParam() << " with " << opts.maxTokens << " tokens";
    }
}

INSTANTIATE_TEST_SUITE_P(Stories260K, CudaForwardModel,
                         ::testing::Values("stories260K.gguf", "stories260K-f16.gguf"));

TEST(CudaForward, LogitsMatchTheGoldenFile) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(refPath, "golden/stories260K_logits_once_upon_a_time_pos4.f32");
    const auto m = LlamaModel::load(path.string());
    std::vector<float> ref(512);
    std::ifstream(refPath, std::ios::binary).read(reinterpret_cast<char*>(ref.data()), 512 * sizeof(float));
    CudaForward gpu(*m, {}, 0);
    const auto logits = lastLogits(gpu, kPrompt);
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(logits[i], ref[i], 1e-3) << "logit " << i;
}

TEST(CudaForward, GraphReplayEqualsPlainLaunches) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const RopeTable rope(m->config(), m->config().contextLength);
    ForwardOptions plain{.fused = true, .rope = &rope};
    ForwardOptions graphed = plain;
    graphed.graphs = true;
    CudaForward a(*m, plain, 0), b(*m, graphed, 0);
    const int steps = 40; // crosses block boundaries: the block table grows under the graph
    const auto ta = decodeTrace(a, kPrompt, steps), tb = decodeTrace(b, kPrompt, steps);
    EXPECT_EQ(ta, tb) << "the same kernels replayed must give the same bits";
    EXPECT_EQ(b.graphCaptures(), 1u);
    EXPECT_EQ(b.graphReplays(), static_cast<uint64_t>(steps));
    EXPECT_EQ(a.graphReplays(), 0u);
    // A second sequence in a fresh cache reuses the captured graph (its pointers live in device memory).
    const auto again = decodeTrace(b, kPrompt, 3);
    EXPECT_EQ(std::vector<float>(ta.begin(), ta.begin() + static_cast<std::ptrdiff_t>(again.size())), again);
    EXPECT_EQ(b.graphCaptures(), 1u);
}

TEST(CudaForward, FusedEqualsUnfusedAndTableEqualsComputedAngles) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const RopeTable rope(m->config(), m->config().contextLength);
    CudaForward regular(*m, {}, 0), fast(*m, {.fused = true, .rope = &rope, .graphs = true}, 0);
    EXPECT_LT(nmse(decodeTrace(fast, kPrompt, 12), decodeTrace(regular, kPrompt, 12)), 1e-12);
}

TEST(CudaForward, BatchedEqualsUnbatchedInOnePagedPool) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const ModelConfig& c = m->config();
    ThreadPool pool(1);
    Forward cpu(*m, pool);
    CudaForward gpu(*m, {}, 0);
    const std::vector<int32_t> pa = {1, 403, 407, 261, 378}, pb = {1, 30, 31, 32, 33, 34, 35};
    // One pool per backend, the two sequences on interleaved, out-of-order blocks.
    KvCache gpuPool(c, 8, 16, KvStorage::Device), cpuPool(c, 8, 16);
    const std::vector<int32_t> ta = {5, 2}, tb = {0, 7};
    std::vector<float> la(c.vocabSize), lb(c.vocabSize);
    gpu.runSequence(pa, 0, gpuPool, ta, la.data());
    gpu.runSequence(pb, 0, gpuPool, tb, lb.data());
    // One decode step of both together...
    const std::vector<int32_t> tokens = {argmax(la), argmax(lb)};
    const std::vector<int64_t> positions = {5, 7};
    const std::vector<int32_t> seqIds = {0, 1};
    const std::vector<uint8_t> want = {1, 1};
    KvCache* const caches[2] = {&gpuPool, &gpuPool};
    const std::span<const int32_t> tables[2] = {ta, tb};
    std::vector<float> batched(2 * c.vocabSize);
    gpu.run({tokens, positions, seqIds, caches, tables, want}, batched.data());
    // ...equals each alone (from a copy of the state: replay the prefills)...
    KvCache alone(c, 8, 16, KvStorage::Device);
    std::vector<float> single(c.vocabSize), ignore(c.vocabSize);
    gpu.runSequence(pa, 0, alone, ta, ignore.data());
    gpu.runSequence(std::span(tokens).first(1), 5, alone, ta, single.data());
    EXPECT_LT(nmse(std::vector<float>(batched.begin(), batched.begin() + c.vocabSize), single), 1e-12);
    gpu.runSequence(pb, 0, alone, tb, ignore.data());
    gpu.runSequence(std::span(tokens).subspan(1, 1), 7, alone, tb, single.data());
    EXPECT_LT(nmse(std::vector<float>(batched.begin() + c.vocabSize, batched.end()), single), 1e-12);
    // ...and equals the CPU on the same batch.
    cpu.runSequence(pa, 0, cpuPool, ta, la.data());
    cpu.runSequence(pb, 0, cpuPool, tb, lb.data());
    KvCache* const cpuCaches[2] = {&cpuPool, &cpuPool};
    std::vector<float> cpuBatched(2 * c.vocabSize);
    cpu.run({tokens, positions, seqIds, cpuCaches, tables, want}, cpuBatched.data());
    EXPECT_LT(nmse(batched, cpuBatched), 1e-9);
}

TEST(CudaForward, SessionsOnTheGpuGiveTheCpuGreedyTokens) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto g = golden()["generation"][0];
    const auto expected = g["generated_tokens"].get<std::vector<int32_t>>();
    for (Profile profile : {Profile::fast(), Profile::regular()}) {
        profile.precision = Precision::Native; // the goldens are the F32 file's (fast defaults to mixed)
        auto session = Session::start(path.string(), profile, {.threads = 1, .device = kGpu});
        std::mutex mu;
        std::condition_variable cv;
        std::optional<RequestEvent> done;
        InferenceRequest req;
        req.prompt = g["prompt_tokens"].get<std::vector<int32_t>>();
        req.maxTokens = static_cast<int32_t>(expected.size());
        req.sampling.temperature = 0.0f;
        req.stopAtEos = false;
        session->submit(req, [&](const RequestEvent& e) {
            if (e.kind != EventKind::Finished) return;
            std::lock_guard lock(mu);
            done = e;
            cv.notify_all();
        });
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return done.has_value(); });
        EXPECT_EQ(done->status, FinishStatus::Ok) << profile.name << ": " << done->error;
        EXPECT_EQ(done->tokens, expected) << profile.name;
    }
}

TEST(CudaForward, RefusesHostKvAndUnknownDevices) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    CudaForward gpu(*m, {}, 0);
    KvCache host(m->config(), 1, 16);
    const std::vector<int32_t> table = {0};
    std::vector<float> logits(m->config().vocabSize);
    EXPECT_THROW(gpu.runSequence(kPrompt, 0, host, table, logits.data()), ModelError);
    EXPECT_THROW(CudaForward(*m, {}, mb::kernels::cuda::deviceCount()), std::invalid_argument);
}
