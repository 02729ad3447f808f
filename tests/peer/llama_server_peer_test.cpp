// Peer tests: ModeBench's remote client against llama.cpp's server on loopback (label `peer`; skipped without LLAMA_CPP_BIN).
#include "cli/cli_runner.h"
#include "lab/remote_target.h"
#include "peer/llama_server.h"
#include "server/loopback_util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cmath>

namespace mb {
namespace {

using Json = nlohmann::json;

// A synthetic stories15m (Q8_0, context 2048) written once for the suite.
const std::string& syntheticModel() {
    static const std::string path = [] {
        const auto p = std::filesystem::temp_directory_path() / ("mb_peer_s15_" + std::to_string(::getpid()) + ".gguf");
        const auto r = test::runCli({"make-model", "--preset", "stories15m", "--dtype", "q8_0", "--context", "2048",
                                     "-o", p.string(), "--force"});
        EXPECT_EQ(r.exitCode, 0) << r.err;
        return p.string();
    }();
    return path;
}

// One request through our client, timed on its events as `compare` times them.
struct Timed {
    engine::RequestEvent finished;
    double ttftMs = -1;       // submit to the first token
    double tpotMs = -1;       // first to last token over the tokens between
    int tokenEvents = 0;
};

Timed timedRequest(lab::RemoteTarget& t, std::vector<int32_t> prompt, int maxTokens) {
    const test::Outcome o = test::runOne(t, test::request(std::move(prompt), maxTokens, /*stopAtEos=*/false));
    Timed out;
    out.finished = o.finished;
    out.tokenEvents = static_cast<int>(o.tokenTimesNs.size());
    if (out.tokenEvents > 0) out.ttftMs = double(o.tokenTimesNs.front() - o.submittedNs) / 1e6;
    if (out.tokenEvents > 1)
        out.tpotMs = double(o.tokenTimesNs.back() - o.tokenTimesNs.front()) / 1e6 / (out.tokenEvents - 1);
    return out;
}

std::vector<int32_t> promptOf(int tokens, int salt) {
    std::vector<int32_t> p = {1};
    for (int i = 1; i < tokens; ++i) p.push_back(100 + (i * 37 + salt * 101) % 4000);
    return p;
}

TEST(PeerLlamaServer, CompareWithARemoteCandidateCompletes) {
    MB_REQUIRE_LLAMA_SERVER(bin);
    test::LlamaServer peer(bin, syntheticModel(), {"-c", "2048", "-np", "1"});
    ASSERT_TRUE(peer.ready) << "llama-server did not become healthy";
    const auto r = test::runCli({"compare", "-m", syntheticModel(), "--a", peer.url(), "--b", "regular", "-w", "chat",
                                 "--requests", "6", "--output-tokens", "16", "--no-store", "--json", "-"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const Json j = Json::parse(r.out);
    ASSERT_TRUE(j.contains("a")) << r.out.substr(0, 400);
    int ok = 0;
    for (const Json& q : j["a"]["requests"]) ok += q.value("status", "") == "ok";
    EXPECT_EQ(ok, 6) << j["a"].dump().substr(0, 600);
}

TEST(PeerLlamaServer, OurTtftAndTpotAgreeWithTheServersTimings) {
    MB_REQUIRE_LLAMA_SERVER(bin);
    test::LlamaServer peer(bin, syntheticModel(), {"-c", "2048", "-np", "1"});
    ASSERT_TRUE(peer.ready);
    lab::RemoteTarget t(lab::RemoteSpec::parse(peer.url()), "llama.cpp");
    for (int i = 0; i < 6; ++i) {
        const Timed got = timedRequest(t, promptOf(96 + 64 * i, i), 32);
        ASSERT_EQ(got.finished.status, engine::FinishStatus::Ok) << got.finished.error;
        ASSERT_GE(got.finished.serverPromptMs, 0) << "the server sent no timings";
        ASSERT_GE(got.finished.serverPerTokenMs, 0);
        std::printf("request %d: prompt %lld tokens; TTFT ours %.2f ms, server prompt_ms %.2f; TPOT ours %.3f ms, "
                    "server predicted_per_token_ms %.3f\n",
                    i, static_cast<long long>(got.finished.promptTokens), got.ttftMs, got.finished.serverPromptMs,
                    got.tpotMs, got.finished.serverPerTokenMs);
        // Ours includes the HTTP exchange and tokenizing nothing (ids are sent): within 5% + 10 ms.
        EXPECT_NEAR(got.ttftMs, got.finished.serverPromptMs, 0.05 * got.finished.serverPromptMs + 10)
            << "request " << i;
        EXPECT_NEAR(got.tpotMs, got.finished.serverPerTokenMs, 0.05 * got.finished.serverPerTokenMs + 10)
            << "request " << i << " (" << got.tokenEvents << " token events)";
    }
}

TEST(PeerLlamaServer, CachedTokensOnARepeatedPrefixComeFromItsTimings) {
    MB_REQUIRE_LLAMA_SERVER(bin);
    test::LlamaServer peer(bin, syntheticModel(), {"-c", "2048", "-np", "1"});
    ASSERT_TRUE(peer.ready);
    lab::RemoteTarget t(lab::RemoteSpec::parse(peer.url()), "llama.cpp");
    const auto prompt = promptOf(200, 7);
    const Timed cold = timedRequest(t, prompt, 4);
    ASSERT_EQ(cold.finished.status, engine::FinishStatus::Ok) << cold.finished.error;
    EXPECT_EQ(cold.finished.cachedTokens, 0);
    const Timed warm = timedRequest(t, prompt, 4);
    ASSERT_EQ(warm.finished.status, engine::FinishStatus::Ok) << warm.finished.error;
    // It re-evaluates at least the last prompt token; the rest comes from its cache.
    EXPECT_GE(warm.finished.cachedTokens, 190);
    EXPECT_LE(warm.finished.cachedTokens, 199);
    EXPECT_EQ(t.stats().prefixHits, static_cast<uint64_t>(warm.finished.cachedTokens));
}

TEST(PeerLlamaServer, ItsErrorsBecomeClearPerRequestErrors) {
    MB_REQUIRE_LLAMA_SERVER(bin);
    test::LlamaServer peer(bin, syntheticModel(), {"-c", "512", "-np", "1"});
    ASSERT_TRUE(peer.ready);
    lab::RemoteTarget t(lab::RemoteSpec::parse(peer.url()), "llama.cpp");
    // A token id past its vocabulary: an "error:" line inside its stream.
    const Timed bad = timedRequest(t, {1, 99999999}, 4);
    EXPECT_EQ(bad.finished.status, engine::FinishStatus::Error);
    EXPECT_NE(bad.finished.error.find("the server reported an error"), std::string::npos) << bad.finished.error;
    EXPECT_EQ(bad.finished.error.find('\n'), std::string::npos) << bad.finished.error;
    // A prompt over its context: this build cuts it rather than refusing it; the record says how much.
    const Timed over = timedRequest(t, promptOf(900, 3), 4);
    ASSERT_EQ(over.finished.status, engine::FinishStatus::Ok) << over.finished.error;
    EXPECT_GT(over.finished.truncatedTokens, 0);
    EXPECT_EQ(over.finished.promptTokens + over.finished.truncatedTokens, 900);
}

} // namespace
} // namespace mb
