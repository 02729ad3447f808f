// Models whose every matrix is Q4_1, Q5_0, Q5_1 or IQ4_NL (synthetic, tiny): the integer kernels'
// logits against the F32-activation path, and the same bits on 1 and 2 threads.
#include "engine/synthetic_model.h"
#include "forward_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace mb::engine;
using mb::kernels::TensorType;
using mb::test::allLogits;
using mb::test::compare;
using mb::test::Diff;

namespace {

// The tiny preset (width 64, 2 layers, 512-token vocabulary) with an FFN of 96, a multiple of
// 32, so that ffn_down too is the type under test (with 80 it falls back to F16).
SyntheticPreset tinyPreset() {
    SyntheticPreset p = *findSyntheticPreset("tiny");
    p.config.ffnDim = 96;
    return p;
}

std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("mb_legacy_" + std::to_string(::getpid()) + "_" + name)).string();
}

const std::vector<int32_t> kTokens = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 374, 395, 317,
                                      426, 338, 394, 300, 11,  77,  500, 261, 402, 3,   290, 133};

// Logits of every position with the engine's kernels and with F32 activations, for one weight type.
struct TypeRun {
    Diff diff;
    double logitRms = 0.0; // of the F32-activation logits
    bool threadsAgree = false;
};
TypeRun runType(TensorType t) {
    const std::string path = tempPath(std::string(mb::kernels::tensorTypeName(t)) + ".gguf");
    writeSyntheticModel(tinyPreset(), t, 5, path);
    const auto m = LlamaModel::load(path);
    EXPECT_EQ(m->file().findTensor("blk.1.ffn_down.weight")->type, t);
    EXPECT_EQ(m->file().findTensor("output.weight")->type, t);
    const auto ints = allLogits(*m, kTokens, 1, false);
    const auto ints2 = allLogits(*m, kTokens, 2, false);
    const auto f32 = allLogits(*m, kTokens, 2, true);
    std::filesystem::remove(path);
    TypeRun r;
    r.diff = compare(ints.data(), f32.data(), ints.size());
    for (float v : f32) r.logitRms += static_cast<double>(v) * v;
    r.logitRms = std::sqrt(r.logitRms / static_cast<double>(f32.size()));
    r.threadsAgree = ints == ints2;
    return r;
}

} // namespace

// The integer path differs from the F32-activation path only by the activations' rounding to
// Q8_0 (each element within amax/254 of its 32-element block: a relative error of order 1e-2 per
// matrix product, as for Q8_0 and Q4_0 weights). The bound is the Q4_0 model's own difference
// (the integer kernels that existed before) times 2, at least 0.02 of the logits' rms: a wrong
// value, scale or min in a kernel moves logits by about their whole size (an rms near 1), and
// a kernel not used at all would give a difference of exactly 0.
TEST(LegacyQuantModel, LogitsNearTheF32ActivationPath) {
    const TypeRun base = runType(TensorType::Q4_0);
    ASSERT_GT(base.diff.maxAbs, 0.0);
    const double rmsBound = std::max(2 * base.diff.rms, 0.02 * base.logitRms);
    const double maxBound = std::max(2 * base.diff.maxAbs, 0.1 * base.logitRms);
    std::cout << "q4_0: max abs " << base.diff.maxAbs << ", rms " << base.diff.rms << " (logits rms "
              << base.logitRms << ")\n";
    for (TensorType t : {TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::IQ4_NL}) {
        const TypeRun r = runType(t);
        const char* name = mb::kernels::tensorTypeName(t).data();
        std::cout << name << ": max abs " << r.diff.maxAbs << ", rms " << r.diff.rms << " (logits rms " << r.logitRms
                  << ")\n";
        EXPECT_GT(r.diff.maxAbs, 0.0) << name << ": the integer kernels did not run";
        EXPECT_LE(r.diff.rms, rmsBound) << name;
        EXPECT_LE(r.diff.maxAbs, maxBound) << name;
        EXPECT_TRUE(r.threadsAgree) << name;
    }
}
