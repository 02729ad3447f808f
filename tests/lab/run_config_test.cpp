// RunConfig: the stored run configuration round-trips and reads what older CLI and GUI builds
// wrote.
#include "lab/run_config.h"

#include <gtest/gtest.h>

using namespace mb::lab;
using nlohmann::json;

namespace {

RunConfig everything() {
    RunConfig c;
    c.source = "cli";
    c.candidates = {{"a", "/m/q8.gguf", "fast", std::nullopt},
                    {"b", "remote:http://h:8000/v1", "remote", std::nullopt}};
    mb::engine::SamplerParams s;
    s.temperature = 0.5f;
    s.topK = 7;
    s.seed = 42;
    c.sampling = s;
    s.temperature = 0.0f; // B samples greedily
    c.candidates[1].sampling = s;
    ArrivalSpec arrival;
    arrival.kind = ArrivalSpec::Kind::Gamma;
    arrival.rate = 3;
    arrival.burstiness = 0.5;
    c.arrival = arrival;
    c.interleave = true;
    c.slices = 4;
    c.threads = 2;
    c.device = "cpu";
    c.primers = 8;
    c.precisionPrompts = 5;
    c.precisionGenTokens = 12;
    c.promptFile = "/data/prompts.jsonl";
    c.maxTokens = 48;
    c.sloTtftMs = 500;
    c.sloE2eMs = 4000;
    c.repeats = 3;
    c.replaysRun = 17;
    c.extra = {{"sweep", {{"rates", {1, 2, 4}}}}};
    return c;
}

} // namespace

TEST(RunConfig, RoundTripsEveryField) {
    const RunConfig c = everything();
    const RunConfig back = runConfigFromJson(json::parse(toJson(c).dump()));
    EXPECT_EQ(toJson(back), toJson(c));
    ASSERT_EQ(back.candidates.size(), 2u);
    EXPECT_EQ(back.candidates[1].model, "remote:http://h:8000/v1");
    EXPECT_EQ(back.candidates[1].profile, "remote");
    ASSERT_TRUE(back.candidates[1].sampling);
    EXPECT_EQ(back.candidates[1].sampling->temperature, 0.0f);
    EXPECT_FALSE(back.candidates[0].sampling) << "A samples as the run: not written twice";
    ASSERT_TRUE(back.sampling);
    EXPECT_EQ(back.sampling->topK, 7);
    EXPECT_EQ(back.sampling->seed, 42u);
    ASSERT_TRUE(back.arrival);
    EXPECT_EQ(back.arrival->kind, ArrivalSpec::Kind::Gamma);
    EXPECT_EQ(back.arrival->burstiness, 0.5);
    EXPECT_EQ(back.maxTokens, 48);
    EXPECT_EQ(back.sloTtftMs, 500);
    EXPECT_FALSE(back.sloTpotMs);
    EXPECT_EQ(back.replaysRun, 17);
    EXPECT_EQ(back.repeats, 3);
    EXPECT_EQ(back.extra["sweep"]["rates"][2], 4)
        << "a newer build's keys survive a read and a write";
}

TEST(RunConfig, KeepsTheKeysOlderReadersRead) {
    const auto j = toJson(everything());
    EXPECT_EQ(j["prompts"], "/data/prompts.jsonl");
    EXPECT_EQ(j["max_tokens"], 48);
    EXPECT_EQ(j["primers"], 8);
    EXPECT_EQ(j["models"]["a"], "/m/q8.gguf");
    EXPECT_FALSE(j.contains("model_b")) << "one shape for every front end";
    EXPECT_FALSE(j["slo"].contains("tpot_ms")) << "unset bounds are left out, never -1";
}

TEST(RunConfig, SloConvertsToAndFromTheRunsNegativeUnset) {
    RunConfig c;
    Slo s;
    s.ttftMs = 250;
    c.setSlo(s);
    EXPECT_EQ(c.sloTtftMs, 250);
    EXPECT_FALSE(c.sloE2eMs);
    EXPECT_EQ(c.slo().ttftMs, 250);
    EXPECT_LT(c.slo().e2eMs, 0);
    EXPECT_LT(c.slo().tpotMs, 0);
}

// What cli/cmd_compare.cpp wrote before RunConfig.
TEST(RunConfig, ReadsTheOldCliShape) {
    const auto old = json::parse(R"({"model": "/m/a.gguf", "model_b": "/m/b.gguf",
        "profiles": {"a": "fast", "b": "regular"},
        "sampling": {"temperature": 0.0, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "seed": 9},
        "arrival": {"kind": "poisson", "concurrency": 1, "rate": 2.5, "burstiness": 1.0, "ramp_seconds": 0.0},
        "interleave": false, "slices": 4, "threads": 2, "device": "cpu", "primers": 8,
        "precision_check": {"prompts": 0, "gen_tokens": 16}, "prompts": "", "max_tokens": 64,
        "slo": {"ttft_ms": null, "e2e_ms": 2000.0}})");
    const RunConfig c = runConfigFromJson(old);
    ASSERT_EQ(c.candidates.size(), 2u);
    EXPECT_EQ(c.candidates[0].label, "a");
    EXPECT_EQ(c.candidates[0].model, "/m/a.gguf");
    EXPECT_EQ(c.candidates[1].model, "/m/b.gguf");
    EXPECT_EQ(c.candidates[1].profile, "regular");
    ASSERT_TRUE(c.sampling);
    EXPECT_EQ(c.sampling->temperature, 0.0f);
    EXPECT_EQ(c.sampling->seed, 9u);
    EXPECT_EQ(c.sampling->repeatPenalty, 1.0f) << "not written then: the sampler's default";
    ASSERT_TRUE(c.arrival);
    EXPECT_EQ(c.arrival->kind, ArrivalSpec::Kind::Poisson);
    EXPECT_EQ(c.arrival->rate, 2.5);
    EXPECT_EQ(c.slices, 4);
    EXPECT_EQ(c.threads, 2);
    EXPECT_EQ(c.device, "cpu");
    EXPECT_EQ(c.primers, 8);
    EXPECT_TRUE(c.promptFile.empty());
    EXPECT_EQ(c.maxTokens, 64);
    EXPECT_FALSE(c.sloTtftMs) << "null was the CLI's unset";
    EXPECT_EQ(c.sloE2eMs, 2000);
    EXPECT_TRUE(c.extra.empty()) << c.extra.dump();
}

TEST(RunConfig, ReadsTheOldCliShapeWithoutModelB) {
    const RunConfig c = runConfigFromJson(
        json{{"model", "/m/a.gguf"}, {"profiles", {{"a", "fast"}, {"b", "regular"}}}});
    ASSERT_EQ(c.candidates.size(), 2u);
    EXPECT_EQ(c.candidates[1].model, "/m/a.gguf") << "B ran --model when --model-b was not given";
}

// What gui/engine_worker.cpp wrote before RunConfig: a benchmark (a migration replay).
TEST(RunConfig, ReadsTheOldGuiShape) {
    const auto old = json::parse(R"({"primers": 0, "slo": {"ttft_ms": -1.0, "e2e_ms": -1.0},
        "prompts": "/data/p.txt", "replays_run": 7, "models": {"a": "/m/a.gguf"},
        "profiles": {"a": "fast"}, "threads": 3, "source": "gui"})");
    const RunConfig c = runConfigFromJson(old);
    EXPECT_EQ(c.source, "gui");
    ASSERT_EQ(c.candidates.size(), 1u);
    EXPECT_EQ(c.candidates[0].model, "/m/a.gguf");
    EXPECT_EQ(c.candidates[0].profile, "fast");
    EXPECT_FALSE(c.sampling) << "the GUI did not record sampling";
    EXPECT_FALSE(c.sloTtftMs) << "-1 was the GUI's unset";
    EXPECT_FALSE(c.sloE2eMs);
    EXPECT_EQ(c.promptFile, "/data/p.txt");
    EXPECT_FALSE(c.maxTokens);
    EXPECT_EQ(c.replaysRun, 7);
    EXPECT_EQ(c.threads, 3);
    EXPECT_TRUE(c.extra.empty()) << c.extra.dump();
}

TEST(RunConfig, ReadsTheOldPlayground) {
    const auto old =
        json::parse(R"({"prompt": "Once", "chat_turns": 2, "max_tokens": 16, "concurrent": true,
        "models": {"a": "/m.gguf", "b": "/m.gguf"}, "profiles": {"a": "fast", "b": "regular"}, "threads": 1,
        "source": "gui"})");
    const RunConfig c = runConfigFromJson(old);
    ASSERT_TRUE(c.playground);
    EXPECT_EQ(c.playground->prompt, "Once");
    EXPECT_EQ(c.playground->chatTurns, 2);
    EXPECT_TRUE(c.playground->concurrent);
    EXPECT_EQ(c.maxTokens, 16);
    EXPECT_EQ(c.candidates.size(), 2u);
}

TEST(RunConfig, WrongTypesAndBadTextAreReadAsAbsent) {
    const RunConfig c = runConfigFromJson(json{{"max_tokens", "many"},
                                               {"threads", -4},
                                               {"slo", 5},
                                               {"models", 3},
                                               {"sampling", "greedy"},
                                               {"arrival", {{"kind", "tidal"}}}});
    EXPECT_FALSE(c.maxTokens);
    EXPECT_EQ(c.threads, 1);
    EXPECT_FALSE(c.sloTtftMs);
    EXPECT_TRUE(c.candidates.empty());
    EXPECT_FALSE(c.sampling);
    EXPECT_FALSE(c.arrival);
    EXPECT_TRUE(runConfigFromText("").candidates.empty());
    EXPECT_TRUE(runConfigFromText("{not json").promptFile.empty());
    EXPECT_EQ(runConfigFromText(R"({"prompts": "/p.txt"})").promptFile, "/p.txt");
}
