// Running a built-in plugin over chunks, and checking that every chunking gives the same output.
#pragma once

#include "plugins/plugin.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace mb::plugins::test {

struct Result {
    std::string text;
    bool end = false;
    std::string reason;
    std::vector<std::string> emits; // what each text() call gave, then end()'s
};

inline Result runChunks(const PluginFactory& f, const std::vector<std::string>& chunks) {
    auto p = f.make();
    p->start(RequestInfo{});
    Result r;
    for (const std::string& c : chunks) {
        Emit e = p->text(c);
        r.text += e.text;
        r.emits.push_back(e.text);
        if (e.end) {
            r.end = true;
            r.reason = e.reason;
            return r;
        }
    }
    Emit e = p->end();
    r.text += e.text;
    r.emits.push_back(e.text);
    r.end = e.end;
    r.reason = e.reason;
    return r;
}

inline Result runWhole(const PluginFactory& f, const std::string& text) { return runChunks(f, {text}); }

// `text` cut at random byte offsets (inside UTF-8 characters too, with empty chunks).
inline std::vector<std::string> randomChunks(const std::string& text, uint32_t seed, size_t maxLen = 5) {
    std::mt19937 rng(seed);
    std::vector<std::string> out;
    for (size_t i = 0; i < text.size();) {
        const size_t n = std::min(text.size() - i, static_cast<size_t>(rng() % (maxLen + 1)));
        out.push_back(text.substr(i, n));
        i += n;
    }
    return out;
}

// Whole, byte by byte and eight random chunkings agree on text, end and reason.
inline void expectChunkingInvariant(const PluginFactory& f, const std::string& text) {
    const Result whole = runWhole(f, text);
    std::vector<std::vector<std::string>> chunkings;
    std::vector<std::string> bytes;
    for (char c : text) bytes.emplace_back(1, c);
    chunkings.push_back(bytes);
    for (uint32_t seed = 1; seed <= 8; ++seed) chunkings.push_back(randomChunks(text, seed, seed * 3));
    for (const auto& chunks : chunkings) {
        const Result r = runChunks(f, chunks);
        EXPECT_EQ(r.text, whole.text) << "input: " << text;
        EXPECT_EQ(r.end, whole.end) << "input: " << text;
        EXPECT_EQ(r.reason, whole.reason) << "input: " << text;
    }
}

} // namespace mb::plugins::test
