// Every device weight type on the GPU: matvec, F16 expansion and embedding gather against the CPU, and each
// kquant/ file's logits on CUDA against the CPU forward pass and the float64 reference (label `gpu`).
#include "engine/cuda_forward.h"
#include "engine/forward.h"
#include "engine/forward_test_util.h"
#include "gpu_test_util.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"
#include "kernels/cuda/cuda_ops.h"
#include "test_data.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <numeric>

using namespace mb::kernels;
using namespace mb::engine;
using mb::test::nmse;
using mb::test::randomFloats;
using mb::test::toDevice;
using mb::test::toHost;

namespace {

// Every type the device computes with, from the table.
std::vector<TensorType> deviceTypes() {
    std::vector<TensorType> out;
    for (const TensorTypeTraits& row : tensorTypeTable())
        if (cuda::deviceWeightType(row.type)) out.push_back(row.type);
    return out;
}

// (rows, cols) stored as `type` from random values, with its CPU-dequantised values.
struct Matrix {
    std::vector<uint8_t> bytes;
    std::vector<float> values;
};
Matrix makeMatrix(TensorType type, int64_t rows, int64_t cols, uint64_t seed) {
    const std::vector<float> src = randomFloats(static_cast<size_t>(rows * cols), seed);
    Matrix m;
    m.bytes.resize(static_cast<size_t>(rows) * rowBytes(type, cols));
    m.values.resize(src.size());
    for (int64_t r = 0; r < rows; ++r) {
        uint8_t* row = m.bytes.data() + static_cast<size_t>(r) * rowBytes(type, cols);
        quantizeRow(type, src.data() + r * cols, row, cols);
        dequantizeRow(type, row, m.values.data() + r * cols, cols);
    }
    return m;
}

// Awkward shapes: a row count that is not a multiple of the 4 rows per CUDA block, and a row
// longer than one pass of the warp (more than 32 groups) for the block types.
int64_t colsFor(TensorType type) { return blockSize(type) == 1 ? 67 : blockSize(type) * (blockSize(type) == 32 ? 37 : 5); }

} // namespace

TEST(CudaQuant, EveryTableTypeButQ8_KIsADeviceWeightType) {
    // No device needed: the list the launchers accept.
    for (const TensorTypeTraits& row : tensorTypeTable())
        EXPECT_EQ(cuda::deviceWeightType(row.type), row.type != TensorType::Q8_K) << row.name;
}

TEST(CudaQuant, MatvecOfEveryTypeMatchesTheDequantisedCpuProduct) {
    MB_REQUIRE_GPU();
    for (TensorType type : deviceTypes()) {
        const int64_t rows = 37, cols = colsFor(type);
        const Matrix m = makeMatrix(type, rows, cols, 7);
        const auto w = toDevice(m.bytes);
        std::vector<float> alone;
        for (int64_t n : {int64_t{1}, int64_t{3}, cuda::kMatvecMaxTokens}) {
            const std::vector<float> x = randomFloats(static_cast<size_t>(cuda::kMatvecMaxTokens * cols), 11);
            const auto dx = toDevice(x);
            cuda::DeviceBuffer dy(static_cast<size_t>(n * rows) * sizeof(float));
            cuda::matvec({type, rows, cols, w.data()}, dx.as<float>(), n, dy.as<float>(), nullptr);
            const auto y = toHost<float>(dy, static_cast<size_t>(n * rows));
            std::vector<double> want(y.size());
            for (int64_t t = 0; t < n; ++t)
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t k = 0; k < cols; ++k)
                        want[static_cast<size_t>(t * rows + r)] +=
                            double(m.values[static_cast<size_t>(r * cols + k)]) * x[static_cast<size_t>(t * cols + k)];
            EXPECT_LT(nmse(y, want), 1e-10) << tensorTypeName(type) << " n=" << n;
            // Token 0 gets the same bits whatever the batch (one accumulation order).
            if (n == 1) alone = y;
            else EXPECT_TRUE(std::equal(alone.begin(), alone.end(), y.begin())) << tensorTypeName(type) << " n=" << n;
        }
    }
}

TEST(CudaQuant, F16ExpansionOfEveryTypeIsTheCpuValueRounded) {
    MB_REQUIRE_GPU();
    for (TensorType type : deviceTypes()) {
        const int64_t rows = 19, cols = colsFor(type);
        const Matrix m = makeMatrix(type, rows, cols, 5);
        const auto w = toDevice(m.bytes);
        cuda::DeviceBuffer wh(static_cast<size_t>(rows * cols) * 2);
        cuda::dequantizeToF16({type, rows, cols, w.data()}, wh.data(), nullptr);
        const auto got = toHost<uint16_t>(wh, static_cast<size_t>(rows * cols));
        size_t bad = 0;
        std::vector<float> gotF(got.size());
        for (size_t i = 0; i < got.size(); ++i) {
            gotF[i] = fp16ToFloat(got[i]);
            bad += got[i] != floatToFp16(m.values[i]);
        }
        EXPECT_EQ(bad, 0u) << tensorTypeName(type) << ": halves differing from the CPU value rounded";
        EXPECT_LT(nmse(gotF, m.values), 1e-6) << tensorTypeName(type);
    }
}

TEST(CudaQuant, EmbeddingGatherOfEveryTypeEqualsTheCpuRows) {
    MB_REQUIRE_GPU();
    for (TensorType type : deviceTypes()) {
        const int64_t vocab = 41, dim = colsFor(type);
        const Matrix m = makeMatrix(type, vocab, dim, 9);
        const auto w = toDevice(m.bytes);
        const std::vector<int32_t> ids = {40, 0, 17, 17, 3};
        const auto dids = toDevice(ids);
        cuda::DeviceBuffer dx(ids.size() * static_cast<size_t>(dim) * sizeof(float));
        cuda::EmbedArgs args{{type, vocab, dim, w.data()}, dids.as<int32_t>()};
        cuda::embedRows(args, static_cast<int64_t>(ids.size()), dx.as<float>(), nullptr);
        std::vector<float> want;
        for (int32_t id : ids) want.insert(want.end(), m.values.begin() + id * dim, m.values.begin() + (id + 1) * dim);
        EXPECT_EQ(toHost<float>(dx, want.size()), want) << tensorTypeName(type);
    }
}

namespace {

// Logits of every position of `tokens` through `f` (one batch, every row wanted).
std::vector<float> batchLogits(ForwardBackend& f, const std::vector<int32_t>& tokens) {
    const int64_t bs = 16, n = static_cast<int64_t>(tokens.size());
    KvCache cache(f.model().config(), blocksFor(n, bs), bs, f.kvStorage());
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<int64_t> positions(tokens.size());
    std::iota(positions.begin(), positions.end(), 0);
    const std::vector<int32_t> seqIds(tokens.size(), 0);
    const std::vector<uint8_t> want(tokens.size(), 1);
    KvCache* caches[] = {&cache};
    const std::span<const int32_t> tables[] = {table};
    std::vector<float> logits(tokens.size() * static_cast<size_t>(f.model().config().vocabSize));
    f.run({tokens, positions, seqIds, caches, tables, want}, logits.data());
    return logits;
}

// The same one token per step (the matvec path), each step's logits concatenated.
std::vector<float> stepLogits(ForwardBackend& f, const std::vector<int32_t>& tokens) {
    const int64_t bs = 16, n = static_cast<int64_t>(tokens.size());
    const auto vocab = static_cast<size_t>(f.model().config().vocabSize);
    KvCache cache(f.model().config(), blocksFor(n, bs), bs, f.kvStorage());
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<float> out(tokens.size() * vocab);
    for (size_t i = 0; i < tokens.size(); ++i)
        f.runSequence(std::span(&tokens[i], 1), static_cast<int64_t>(i), cache, table, out.data() + i * vocab);
    return out;
}

class CudaKQuantFile : public ::testing::TestWithParam<const char*> {};

} // namespace

// The weights as stored in the file on the device: decode steps (matvec) against the float64
// reference on the dequantised weights and the CPU with F32 activations; the 16-token prefill
// (F16 cuBLAS) against the CPU within the F16 path's bound; device memory = the file's matrices.
TEST_P(CudaKQuantFile, LogitsMatchTheCpuAndTheReference) {
    MB_REQUIRE_GPU();
    const std::string name = std::string("kquant/tiny-llama-") + GetParam();
    MB_REQUIRE_DATA(gguf, name + ".gguf");
    const auto meta = nlohmann::json::parse(std::ifstream(mb::test::dataDir() / (name + ".json")));
    const auto tokens = meta["tokens"].get<std::vector<int32_t>>();
    const auto ref = mb::test::readFloats(mb::test::dataDir() / (name + ".dequant_ref_logits.f32"));
    const auto m = LlamaModel::load(gguf.string());
    mb::kernels::ThreadPool pool(2);
    ForwardOptions exact;
    exact.f32Activations = true;
    Forward cpu(*m, pool, exact);
    CudaForward gpu(*m, {}, 0);

    uint64_t matrixBytes = m->tokenEmbedding().bytes() + (m->tiedOutput() ? 0 : m->output().bytes());
    for (const LayerWeights& w : m->layers())
        for (size_t i = 0; i < 7; ++i) matrixBytes += (w.*kProjections[i]).bytes();
    EXPECT_EQ(gpu.deviceWeightBytes(), matrixBytes) << "weights not uploaded as stored";

    const auto steps = stepLogits(gpu, tokens);
    const auto cpuSteps = stepLogits(cpu, tokens);
    const mb::test::Diff vsRef = mb::test::compare(steps.data(), ref.data(), steps.size()); // ref rows 0..15
    EXPECT_LE(vsRef.maxAbs, 1e-3) << GetParam();
    EXPECT_LT(nmse(steps, cpuSteps), 1e-9) << GetParam();

    const auto prefill = batchLogits(gpu, tokens);
    EXPECT_LT(nmse(prefill, batchLogits(cpu, tokens)), 1e-4) << GetParam();
    std::cout << GetParam() << ": decode steps vs reference " << vsRef.maxAbs << " max abs\n";
}

// The k-quant files (F32, Q8_0 and Q4_0 are the arch/ and stories260K tests'; prepare_carry.sh
// carries these five).
INSTANTIATE_TEST_SUITE_P(KQuant, CudaKQuantFile, ::testing::Values("Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "Q2_K"),
                         [](const auto& info) { return std::string(info.param); });
