// serve with an output plugin chain: streamed and whole responses post-processed, content_filter ends, failures.
#include "lab/runner.h"
#include "loopback_util.h"
#include "plugins/builtins.h"
#include "plugins/fake_plugins.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>

namespace mb {
namespace {

using Json = nlohmann::json;
using plugins::test::FakeSpec;
using plugins::test::fakeChain;
using test::LiveServer;

// The golden greedy continuation of "Once upon a time" (20 tokens), without the prompt.
std::string goldenContinuation(const std::filesystem::path& golden) {
    const std::string all = Json::parse(std::ifstream(golden))["generation"][0]["text"].get<std::string>();
    return all.substr(std::string("Once upon a time").size());
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

Json body(bool stream) {
    return Json{{"prompt", "Once upon a time"}, {"max_tokens", 20}, {"temperature", 0}, {"stream", stream}};
}

// The streamed text of an SSE body, its finish_reason and any error message.
struct Streamed {
    std::string text, finishReason, error;
    bool done = false;
};
Streamed readStream(const std::string& sse) {
    Streamed s;
    size_t at = 0;
    while ((at = sse.find("data: ", at)) != std::string::npos) {
        const size_t end = sse.find("\n\n", at);
        const std::string data = sse.substr(at + 6, end - at - 6);
        at = end;
        if (data == "[DONE]") {
            s.done = true;
            continue;
        }
        const Json j = Json::parse(data);
        if (j.contains("error")) s.error = j["error"]["message"];
        if (!j.contains("choices") || j["choices"].empty()) continue;
        s.text += j["choices"][0].value("text", "");
        if (j["choices"][0]["finish_reason"].is_string()) s.finishReason = j["choices"][0]["finish_reason"];
    }
    return s;
}

LiveServer serverWith(const std::filesystem::path& model, std::shared_ptr<const plugins::Chain> chain) {
    return LiveServer(model.string(), "regular", {}, [&](server::ServerOptions& o) { o.plugins = chain; });
}

TEST(ServePlugins, WholeAndStreamedResponsesArePostProcessed) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(golden, "golden/stories260K.json");
    LiveServer s = serverWith(model, std::make_shared<const plugins::Chain>(
                                         fakeChain({FakeSpec{.hold = true}, FakeSpec{.upper = true}})));
    auto c = s.client();
    const auto whole = c.Post("/v1/completions", body(false).dump(), "application/json");
    ASSERT_TRUE(whole);
    ASSERT_EQ(whole->status, 200) << whole->body;
    const Json j = Json::parse(whole->body);
    EXPECT_EQ(j["choices"][0]["text"], upper(goldenContinuation(golden)));
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");

    const auto streamed = c.Post("/v1/completions", body(true).dump(), "application/json");
    ASSERT_TRUE(streamed);
    const Streamed st = readStream(streamed->body);
    EXPECT_EQ(st.text, upper(goldenContinuation(golden)));
    EXPECT_EQ(st.finishReason, "length");
    EXPECT_TRUE(st.done);
}

TEST(ServePlugins, APluginEndingTheResponseGivesContentFilter) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(golden, "golden/stories260K.json");
    const std::string raw = goldenContinuation(golden);
    ASSERT_NE(raw.find("Lily"), std::string::npos);
    LiveServer s = serverWith(model, std::make_shared<const plugins::Chain>(plugins::Chain(
                                         {plugins::makeWordFilter(Json{{"type", "word_filter"}, {"words", {"lily"}},
                                                                      {"action", "refuse"}})})));
    auto c = s.client();
    const std::string before = raw.substr(0, raw.find("Lily"));
    for (bool stream : {false, true}) {
        SCOPED_TRACE(stream ? "streamed" : "whole");
        const auto res = c.Post("/v1/completions", body(stream).dump(), "application/json");
        ASSERT_TRUE(res);
        ASSERT_EQ(res->status, 200) << res->body;
        if (stream) {
            const Streamed st = readStream(res->body);
            EXPECT_EQ(st.text, before);
            EXPECT_EQ(st.finishReason, "content_filter");
            EXPECT_TRUE(st.done);
        } else {
            const Json j = Json::parse(res->body);
            EXPECT_EQ(j["choices"][0]["text"], before);
            EXPECT_EQ(j["choices"][0]["finish_reason"], "content_filter");
        }
    }
}

TEST(ServePlugins, AFailingPluginFailsThatResponseAndTheServerGoesOn) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s = serverWith(model, std::make_shared<const plugins::Chain>(fakeChain({FakeSpec{.hold = true, .failOn = "girl"}})));
    auto c = s.client();
    const auto whole = c.Post("/v1/completions", body(false).dump(), "application/json");
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->status, 500);
    EXPECT_NE(whole->body.find("post-processing failed: fake: failed on girl"), std::string::npos) << whole->body;
    const auto streamed = c.Post("/v1/completions", body(true).dump(), "application/json");
    ASSERT_TRUE(streamed);
    const Streamed st = readStream(streamed->body);
    EXPECT_EQ(st.error, "post-processing failed: fake: failed on girl");
    EXPECT_EQ(st.text.find("girl"), std::string::npos); // nothing past the failure
    EXPECT_TRUE(st.done);
    // A prompt whose continuation never says the word is served as usual.
    const auto other = c.Post("/v1/completions",
                              Json{{"prompt", "Once upon a time"}, {"max_tokens", 2}, {"temperature", 0}}.dump(),
                              "application/json");
    ASSERT_TRUE(other);
    EXPECT_EQ(other->status, 200) << other->body;
}

// A remote candidate's chain runs on what the remote returned, as an embedded one's does.
TEST(ServePlugins, ARemoteCandidatesTextIsPostProcessedByTheRunner) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "regular");
    lab::RemoteTarget t(lab::RemoteSpec::parse(s.url()), "loopback");
    std::vector<lab::WorkloadRequest> work(4);
    for (size_t i = 0; i < work.size(); ++i) {
        work[i].index = i;
        work[i].prompt = {1, static_cast<int32_t>(300 + i), 400, 401};
        work[i].maxTokens = 12;
    }
    const plugins::Chain chain = fakeChain({FakeSpec{.upper = true, .hold = true}});
    lab::RunOptions o;
    o.sampling.temperature = 0;
    o.plugins = &chain;
    o.mode = "remote";
    const auto r = lab::runWorkload(t, work, o);
    ASSERT_EQ(r.records.size(), 4u);
    for (const auto& rec : r.records) {
        ASSERT_EQ(rec.status, lab::RequestStatus::Ok) << rec.error;
        EXPECT_TRUE(rec.postprocessed);
        EXPECT_FALSE(rec.text.empty());
        EXPECT_EQ(rec.output, upper(rec.text));
    }
}

} // namespace
} // namespace mb
