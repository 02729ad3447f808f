// The remote client and the server against misbehaving peers: odd usage, stalls, oversized bodies, nulls.
#include "loopback_util.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace mb {
namespace {

using Json = nlohmann::json;
using test::LiveServer;
using test::request;
using test::runOne;
using test::ScriptedServer;

TEST(RemoteTarget, UsageOfUnexpectedTypesNeitherCrashesNorCounts) {
    ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_content("data: {\"choices\":\"not an array\"}\n\n"
                        "data: {\"choices\":[{\"text\":5}]}\n\n"
                        "data: {\"choices\":[{\"text\":\"ok\"}]}\n\n"
                        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":null,\"completion_tokens\":\"3\","
                        "\"prompt_tokens_details\":{\"cached_tokens\":null}},\"timings\":\"x\"}\n\n"
                        "data: [DONE]\n\n",
                        "text/event-stream");
    });
    lab::RemoteTarget t(s.spec(), "scripted");
    const auto o = runOne(t, request({1, 2, 3}, 5));
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Ok) << o.finished.error;
    EXPECT_EQ(o.pieces, std::vector<std::string>{"ok"});
    EXPECT_EQ(o.finished.promptTokens, 3); // null: the ids sent
    EXPECT_EQ(o.finished.outputTokens, 0); // a string is no count
    EXPECT_EQ(o.finished.cachedTokens, 0);
}

TEST(RemoteTarget, AServerThatCutsThePromptShowsTruncatedTokensAndCachedIsBounded) {
    ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_content("data: {\"choices\":[{\"text\":\"a\"}]}\n\n"
                        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":1,"
                        "\"prompt_tokens_details\":{\"cached_tokens\":20}}}\n\n"
                        "data: [DONE]\n\n",
                        "text/event-stream");
    });
    lab::RemoteTarget t(s.spec(), "scripted");
    const auto o = runOne(t, request({1, 2, 3, 4, 5}, 1));
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Ok) << o.finished.error;
    EXPECT_EQ(o.finished.promptTokens, 2);
    EXPECT_EQ(o.finished.truncatedTokens, 3); // 5 ids sent, 2 read
    EXPECT_EQ(o.finished.cachedTokens, 2);    // not 20 of a 2-token prompt
}

TEST(RemoteTarget, KeepAliveCommentsAloneTimeOut) {
    ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
            const std::string first = "data: {\"choices\":[{\"text\":\"a\"}]}\n\n";
            if (!sink.write(first.data(), first.size())) return false;
            // A stalled generation behind a proxy that keeps the connection alive (bounded:
            // the test server must end too).
            for (int i = 0; i < 100; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                const std::string ping = ": keep-alive\n\n";
                if (!sink.write(ping.data(), ping.size())) return false;
            }
            sink.done();
            return true;
        });
    });
    auto spec = s.spec();
    spec.readTimeoutS = 0.4;
    lab::RemoteTarget t(spec, "keep-alive");
    const auto o = runOne(t, request({1, 2}, 5));
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Error);
    EXPECT_NE(o.finished.error.find("only keep-alive comments): timed out"), std::string::npos) << o.finished.error;
}

TEST(RemoteTarget, AJsonAnswerToAStreamingRequestIsNamed) {
    ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"choices":[{"text":"whole"}]})", "application/json");
    });
    lab::RemoteTarget t(s.spec(), "no-stream");
    const auto o = runOne(t, request({1, 2}, 5));
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Error);
    EXPECT_NE(o.finished.error.find("without an event stream"), std::string::npos) << o.finished.error;
}

TEST(Loopback, NullsBoundsAndBodySizeAreHandledLikeTheOpenAiApi) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "regular", "sekrit");
    auto c = s.client();
    auto post = [&](const std::string& body, const std::string& auth = "Bearer sekrit") {
        return c.Post("/v1/completions", {{"Authorization", auth}}, body, "application/json");
    };
    auto r = post(R"({"prompt": "Once", "max_tokens": null, "temperature": null, "n": null, "stop": null})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body; // null is "not set"
    r = post(R"({"prompt": "Once"})", "bearer   sekrit"); // the scheme in any case
    EXPECT_EQ(r->status, 200) << r->body;
    r = post(R"({"prompt": "Once", "max_tokens": 5.9})");
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find("max_tokens: must be an integer"), std::string::npos) << r->body;
    r = post(R"({"prompt": "Once", "n": 1.7})");
    EXPECT_EQ(r->status, 400);
    r = post(R"({"prompt": [1, 4294967297]})"); // would wrap to token 1
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find("4294967297 is not a token id"), std::string::npos) << r->body;
    r = post(R"({"prompt": "Once", "temperature": 1e300})");
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find("finite"), std::string::npos) << r->body;
    const std::string huge = R"({"prompt": ")" + std::string((size_t{16} << 20) + 1, 'a') + R"("})";
    r = post(huge);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
    EXPECT_NE(r->body.find("larger than 16 MiB"), std::string::npos) << r->body;
    EXPECT_EQ(c.Get("/health")->status, 200); // and it still serves
}


// Under `reject`, a prompt that cannot fit the context gets the session's 400 at once: a
// multi-megabyte one by its byte length alone ("at least"), a shorter one by an encode that
// stops one token over the limit ("more than"), where the whole prompt was once encoded first
// (15 MB held a thread for 34 s). Chat messages the same, on the sum of their contents.
TEST(Loopback, PromptsThatCannotFitAreRefusedBeforeTheyAreEncoded) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "regular");
    auto c = s.client();
    ASSERT_EQ(s.session->profile().truncation, engine::Truncation::Reject);
    const int64_t limit = s.session->contextLimit();
    const auto& tok = s.session->tokenizer();
    auto post = [&](const std::string& path, const Json& body) { return c.Post(path, body.dump(), "application/json"); };
    auto expectOver = [&](const httplib::Result& r, const std::string& count) {
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 400) << r->body.substr(0, 300);
        const std::string message = Json::parse(r->body)["error"]["message"].get<std::string>();
        EXPECT_EQ(message.rfind("the prompt has " + count, 0), 0u) << message;
        EXPECT_NE(message.find("tokens; this profile accepts at most " + std::to_string(limit)), std::string::npos)
            << message;
    };
    std::string story;
    while (story.size() < (size_t{12} << 20)) story += "Once upon a time, there was a little girl named Lily. ";
    const std::string leastOf = "at least " + std::to_string(tok.minTokens(story.size()) + 1);
    expectOver(post("/v1/completions", {{"prompt", story}}), leastOf);
    expectOver(post("/v1/completions", {{"prompt", Json::array({story})}}), leastOf);
    // Few enough bytes to pass the byte bound, too many tokens: the capped encode says so.
    const std::string medium = story.substr(0, tok.longestTokenBytes() * static_cast<size_t>(limit - 2));
    ASSERT_GT(tok.encode(medium, true).size(), static_cast<size_t>(limit));
    expectOver(post("/v1/completions", {{"prompt", medium}}), "more than " + std::to_string(limit) + " tokens");
    expectOver(post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", story}}}}}),
               "at least " + std::to_string(tok.minTokens(story.size())));
    // Four messages, each within the byte bound, that together are not.
    const std::string third = story.substr(0, tok.longestTokenBytes() * static_cast<size_t>(limit - 2) / 3);
    const Json turn = {{"role", "user"}, {"content", third}};
    expectOver(post("/v1/chat/completions", {{"messages", {turn, turn, turn, turn}}}),
               "at least " + std::to_string(tok.minTokens(4 * third.size())));
    expectOver(post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", medium}}}}}),
               "more than " + std::to_string(limit) + " tokens");
    // What fits is still served.
    auto r = post("/v1/completions", {{"prompt", story.substr(0, 200)}, {"max_tokens", 2}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 2}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
}

} // namespace
} // namespace mb
