// A prompt file's kind, spec, arrivals and warm-ups, and a spec's request count: each computed
// once, in lab.
#include "lab/workload.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

using namespace mb::lab;
namespace fs = std::filesystem;

namespace {

struct TempFile {
    TempFile(const std::string& name, const std::string& content)
        : path((fs::temp_directory_path() / ("mb_pf_" + std::to_string(::getpid()) + "_" + name))
                   .string()) {
        std::ofstream(path, std::ios::binary) << content;
    }
    ~TempFile() { fs::remove(path); }
    std::string path;
};

std::vector<int32_t> byteTokenize(const std::string& text) {
    std::vector<int32_t> ids = {1};
    for (unsigned char c : text) ids.push_back(c);
    return ids;
}

std::string textOf(const WorkloadRequest& r) {
    return std::string(r.prompt.begin() + 1, r.prompt.end());
}

std::vector<WorkloadRequest> prompts(std::initializer_list<const char*> texts) {
    std::vector<WorkloadRequest> out;
    for (const char* t : texts)
        out.push_back({.index = out.size(), .prompt = byteTokenize(t), .maxTokens = 8});
    return out;
}

} // namespace

TEST(MeasuredRequestCount, FollowsTheSpecsShape) {
    WorkloadSpec plain;
    plain.requests = 12;
    EXPECT_EQ(measuredRequestCount(plain), 12);
    WorkloadSpec shared = plain;
    shared.sharedPrefix = {3, 5, 16, 4};
    EXPECT_EQ(measuredRequestCount(shared), 15) << "groups x per-group, whatever `requests` says";
    WorkloadSpec turns = plain;
    turns.multiTurn.conversations = 4;
    turns.multiTurn.turns = 3;
    turns.multiTurn.userTokens = {LengthDist::Kind::Fixed, 4, 0};
    EXPECT_EQ(measuredRequestCount(turns), 12);
    for (const auto& name : builtinWorkloadNames()) {
        const WorkloadSpec s = *builtinWorkload(name);
        size_t measured = 0;
        for (const auto& r : buildWorkload(s, {1, 100, 32000})) measured += r.warmup ? 0 : 1;
        EXPECT_EQ(measuredRequestCount(s), static_cast<int64_t>(measured)) << name;
    }
}

TEST(PromptFileSpec, DescribesTheFilesOwnPrompts) {
    const auto p = prompts({"ab", "abcdef", "abcd"});
    const WorkloadSpec s = promptFileSpec("p.txt", p, 24);
    EXPECT_EQ(s.name, "file:p.txt");
    EXPECT_EQ(s.requests, 3);
    EXPECT_EQ(s.input.kind, LengthDist::Kind::Uniform);
    EXPECT_EQ(s.input.min, 3); // BOS + 2
    EXPECT_EQ(s.input.max, 7);
    EXPECT_EQ(s.output.a, 24);
    EXPECT_EQ(s.arrival.kind, ArrivalSpec::Kind::Closed);
    EXPECT_EQ(s.warmupRequests, 0);
    EXPECT_TRUE(s.validate().empty()) << s.validate();
    EXPECT_THROW(promptFileSpec("empty.txt", {}, 24), std::invalid_argument);
}

TEST(PromptFileWorkload, WarmupsFirstThenThePromptsWithTheirArrivals) {
    WorkloadSpec s = promptFileSpec("p.txt", prompts({"one", "two", "three"}), 8);
    s.arrival.kind = ArrivalSpec::Kind::Poisson;
    s.arrival.rate = 10;
    s.seed = 5;
    s.warmupRequests = 4;
    const auto reqs = promptFileWorkload(s, prompts({"one", "two", "three"}));
    ASSERT_EQ(reqs.size(), 7u);
    const char* expected[] = {"one", "two", "three", "one", "one", "two", "three"};
    Rng rng(5);
    const auto times = arrivalTimesMs(s.arrival, 3, rng);
    for (size_t i = 0; i < reqs.size(); ++i) {
        EXPECT_EQ(reqs[i].index, i);
        EXPECT_EQ(textOf(reqs[i]), expected[i]) << i;
        EXPECT_EQ(reqs[i].warmup, i < 4) << i;
        EXPECT_EQ(reqs[i].arrivalMs, i < 4 ? 0.0 : times[i - 4]) << i;
    }
    // The same spec and file: the same requests (compare, the replay, the GUI).
    const auto again = promptFileWorkload(s, prompts({"one", "two", "three"}));
    for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(again[i].arrivalMs, reqs[i].arrivalMs);
    EXPECT_THROW(promptFileWorkload(s, {}), std::invalid_argument);
}

// The extension says what a prompt file is; only other names are told by their first character.
TEST(PromptFileKind, TheExtensionDecides) {
    TempFile text("braces.txt", "{\"prompt\": \"literally this line\"}\nsecond\n");
    const auto t = loadPromptFile(text.path, byteTokenize, 4);
    ASSERT_EQ(t.size(), 2u) << ".txt is plain text even when a line looks like JSON";
    EXPECT_EQ(textOf(t[0]), "{\"prompt\": \"literally this line\"}");

    TempFile jsonl("plain.jsonl", "not an object\n");
    try {
        loadPromptFile(jsonl.path, byteTokenize, 4);
        ADD_FAILURE() << ".jsonl is JSONL: a plain line is an error, not a text prompt";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("plain.jsonl:1: malformed JSON"), std::string::npos)
            << e.what();
    }

    TempFile other("prompts.dat", "  {\"prompt\": \"hi\", \"max_tokens\": 2}\n");
    const auto o = loadPromptFile(other.path, byteTokenize, 4);
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(textOf(o[0]), "hi");
    EXPECT_EQ(o[0].maxTokens, 2);
    TempFile otherText("prompts.list", "hi there\n");
    EXPECT_EQ(textOf(loadPromptFile(otherText.path, byteTokenize, 4).at(0)), "hi there");
}

// A 17 MiB line is refused in one line naming the file and line, before it is read whole or
// tokenized (it once ended in a raw std::bad_alloc); lines around the limit still read, and
// the line numbers and lines match std::getline's across the reader's 64 KiB blocks.
TEST(PromptFileLines, ALineOverTheLimitIsRefusedBeforeItIsTokenized) {
    std::string content = "first\r\n\n" + std::string(70000, 'b') + "\nthird\n";
    content += std::string(kMaxPromptLineBytes + (size_t{1} << 20), 'x') + "\nlast\n";
    TempFile file("long.txt", content);
    size_t tokenized = 0;
    const auto count = [&](const std::string& text) {
        ++tokenized;
        return byteTokenize(text);
    };
    try {
        loadPromptFile(file.path, count, 4);
        ADD_FAILURE() << "a line over " << kMaxPromptLineBytes << " bytes was read";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("long.txt:5: "), std::string::npos) << what.substr(0, 200);
        EXPECT_NE(what.find("longer than 16 MiB"), std::string::npos) << what.substr(0, 200);
        EXPECT_LT(what.size(), 300u);
    }
    EXPECT_EQ(tokenized, 3u) << "the lines before it, not the long one";

    TempFile fits("fits.txt", "a\n" + std::string(kMaxPromptLineBytes, 'y') + "\nb");
    const auto reqs = loadPromptFile(fits.path, byteTokenize, 4);
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(reqs[1].prompt.size(), kMaxPromptLineBytes + 1);
    EXPECT_EQ(textOf(reqs[2]), "b") << "a last line without a newline";
}
