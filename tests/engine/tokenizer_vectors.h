// Reading llama.cpp's tokenizer vectors (.inp/.out) and checking a tokenizer against them.
#pragma once

#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace mb::engine::test {

inline constexpr size_t kVectorCases = 46;
inline constexpr std::string_view kCaseSeparator = "\n__ggml_vocab_test__\n";

inline std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

struct VectorCase {
    std::string text;
    std::vector<int32_t> ids;
};

// The .inp/.out pair: each input string is followed by the separator; each output line
// holds the ids of one string.
inline std::vector<VectorCase> readVectors(const std::filesystem::path& inp,
                                           const std::filesystem::path& out) {
    const std::string inputs = readFile(inp);
    std::vector<VectorCase> cases;
    for (size_t pos = 0;;) {
        const size_t end = inputs.find(kCaseSeparator, pos);
        if (end == std::string::npos) break;
        cases.push_back({inputs.substr(pos, end - pos), {}});
        pos = end + kCaseSeparator.size();
    }
    std::istringstream lines(readFile(out));
    std::string line;
    for (VectorCase& c : cases) {
        if (!std::getline(lines, line)) break;
        std::istringstream ids(line);
        for (int32_t id; ids >> id;) c.ids.push_back(id);
    }
    return cases;
}

inline std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path& path) {
    const GgufFile file = GgufFile::open(path.string());
    return Tokenizer::create(Vocab::fromGguf(file));
}

// Every case encodes to `prefix` followed by the expected ids; returns the number that
// did. With addBos, prefix should be the BOS id (the vectors themselves carry no BOS).
inline size_t checkVectors(const Tokenizer& tokenizer, const std::vector<VectorCase>& cases,
                           bool addBos = false, const std::vector<int32_t>& prefix = {}) {
    size_t passed = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE("case " + std::to_string(i) + ": \"" + cases[i].text + "\"");
        std::vector<int32_t> expected = prefix;
        expected.insert(expected.end(), cases[i].ids.begin(), cases[i].ids.end());
        const std::vector<int32_t> ids = tokenizer.encode(cases[i].text, addBos);
        EXPECT_EQ(ids, expected);
        passed += ids == expected;
    }
    return passed;
}

} // namespace mb::engine::test
