// llama.cpp's goldens for the tiny models of ../shared/data/arch: prompt and greedy-run logits, and how far a run is from them.
#pragma once

#include "forward_test_util.h"
#include "test_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace mb::test {

constexpr size_t kArchVocab = 512; // every tiny arch model's vocabulary

// NAME.json's prompt, greedy tokens and margins; NAME.logits.f32 (64, 512) and
// NAME.gen_logits.f32 (32, 512).
struct ArchGolden {
    std::vector<int32_t> prompt, greedy;
    std::vector<double> margins;
    std::vector<float> logits, genLogits;
};

inline ArchGolden readArchGolden(const std::string& name) {
    const auto dir = dataDir() / "arch";
    const auto j = nlohmann::json::parse(std::ifstream(dir / (name + ".json")));
    ArchGolden g;
    g.prompt = j["prompt"]["token_ids"].get<std::vector<int32_t>>();
    g.greedy = j["greedy"]["tokens"].get<std::vector<int32_t>>();
    g.margins = j["greedy"]["margin"].get<std::vector<double>>();
    g.logits = readFloats(dir / (name + ".logits.f32"));
    g.genLogits = readFloats(dir / (name + ".gen_logits.f32"));
    return g;
}

// Worst |got - ref| and mean KL(ref || got) over `rows` rows of kArchVocab logits.
struct Agreement {
    double maxAbs = 0, meanKl = 0;
};
inline Agreement agreement(const std::vector<float>& got, const std::vector<float>& ref, size_t rows) {
    Agreement a;
    for (size_t r = 0; r < rows; ++r) {
        a.maxAbs = std::max(a.maxAbs, compare(got.data() + r * kArchVocab, ref.data() + r * kArchVocab, kArchVocab).maxAbs);
        a.meanKl += klDivergence(ref.data() + r * kArchVocab, got.data() + r * kArchVocab, kArchVocab) /
                    static_cast<double>(rows);
    }
    return a;
}

} // namespace mb::test
