// The remote client against our own server on loopback (and against scripted servers for failures).
#include "cli/cli_runner.h"
#include "engine/gguf.h"
#include "engine/session.h"
#include "lab/remote_target.h"
#include "lab/runner.h"
#include "lab/sse_parser.h"
#include "server/openai_server.h"
#include "loopback_util.h"
#include "test_data.h"

#include <httplib.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <thread>

namespace mb {
namespace {

using Json = nlohmann::json;
using test::LiveServer;
using test::ScriptedServer;
using test::request;
using test::runOne;


TEST(Loopback, CompletionsMatchTheGoldenTextAndUsageCountsTokens) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(golden, "golden/stories260K.json");
    const auto g = Json::parse(std::ifstream(golden))["generation"][0];
    LiveServer s(model.string(), "regular");
    auto c = s.client();
    const auto res = c.Post("/v1/completions", Json{{"model", "stories"}, {"prompt", "Once upon a time"},
                                                    {"max_tokens", 20}, {"temperature", 0}}.dump(),
                            "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const Json j = Json::parse(res->body);
    EXPECT_EQ("Once upon a time" + j["choices"][0]["text"].get<std::string>(), g["text"].get<std::string>());
    EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
    EXPECT_EQ(j["usage"]["completion_tokens"], 20);
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");

    // The chat endpoint answers too (plain template: stories260K has no chat markers).
    const auto chat = c.Post("/v1/chat/completions",
                             Json{{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}}.dump(),
                             "application/json");
    ASSERT_TRUE(chat);
    ASSERT_EQ(chat->status, 200) << chat->body;
    EXPECT_EQ(Json::parse(chat->body)["choices"][0]["message"]["role"], "assistant");
}

TEST(Loopback, StreamsFramesUsageAndDone) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "fast");
    auto c = s.client();
    std::string raw;
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = Json{{"messages", {{{"role", "user"}, {"content", "Once upon a time"}}}},
                    {"max_tokens", 8},
                    {"stream", true},
                    {"stream_options", {{"include_usage", true}}}}
                   .dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char* d, size_t n, uint64_t, uint64_t) {
        raw.append(d, n);
        return true;
    };
    const auto res = c.send(req);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
    lab::SseParser p;
    auto events = p.feed(raw);
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(events.back(), "[DONE]");
    EXPECT_EQ(Json::parse(events.front())["choices"][0]["delta"]["role"], "assistant");
    const Json usage = Json::parse(events[events.size() - 2]);
    EXPECT_TRUE(usage["choices"].empty());
    EXPECT_EQ(usage["usage"]["completion_tokens"], 8);
    EXPECT_TRUE(usage["usage"]["prompt_tokens_details"].contains("cached_tokens"));
    // Every frame is "data: ...\n\n".
    EXPECT_TRUE(std::regex_search(raw, std::regex("^data: \\{")));
    EXPECT_EQ(raw.substr(raw.size() - 14), "data: [DONE]\n\n");
}

TEST(Loopback, CachedTokensRiseOnARepeatedPrefix) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "fast");
    lab::RemoteTarget t(lab::RemoteSpec::parse(s.url()), "loopback");
    std::vector<int32_t> prompt{1};
    for (int i = 0; i < 70; ++i) prompt.push_back(300 + i % 50);
    const auto first = runOne(t, request(prompt, 4));
    ASSERT_EQ(first.finished.status, engine::FinishStatus::Ok) << first.finished.error;
    EXPECT_TRUE(first.scheduled);
    EXPECT_EQ(first.finished.promptTokens, 71);
    const auto second = runOne(t, request(prompt, 4));
    ASSERT_EQ(second.finished.status, engine::FinishStatus::Ok) << second.finished.error;
    EXPECT_GE(second.finished.cachedTokens, 64); // four full 16-token blocks
    EXPECT_GT(second.finished.cachedTokens, first.finished.cachedTokens);
    EXPECT_EQ(second.finished.outputTokens, 4);
    EXPECT_EQ(t.stats().prefixHits, static_cast<uint64_t>(first.finished.cachedTokens + second.finished.cachedTokens));
}

TEST(Loopback, TextPromptsAreDecodedLocallyAndReEncodedByTheServer) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "regular");
    auto spec = lab::RemoteSpec::parse("remote:http://127.0.0.1:" + std::to_string(s.port) + "/v1?prompt=text");
    lab::RemoteTarget t(spec, "text");
    const auto& tok = s.session->tokenizer();
    t.setPromptDecoder([&](const std::vector<int32_t>& ids) { return tok.decode(ids); });
    const auto o = runOne(t, request(tok.encode("Once upon a time", true), 20));
    ASSERT_EQ(o.finished.status, engine::FinishStatus::Ok) << o.finished.error;
    EXPECT_EQ(o.finished.promptTokens, 5); // the same ids after the round trip through text
    EXPECT_EQ("Once upon a time" + o.finished.text,
              "Once upon a time, there was a little girl named Lily. She loved to play outsid");
}

TEST(Loopback, CancelMidStreamStopsTheServersRequestToo) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "regular");
    lab::RemoteTarget t(lab::RemoteSpec::parse(s.url()), "loopback");
    const auto o = runOne(t, request({1, 403, 407}, 200, false), [&](uint64_t id) { t.cancel(id); });
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Cancelled);
    EXPECT_LT(o.pieces.size(), 200u);
    // The server noticed the closed connection and cancelled its request.
    s.session->waitIdle();
    EXPECT_EQ(s.session->stats().running, 0);
}

TEST(Loopback, ThirtyTwoConcurrentStreamsCompleteTwoHundredRequests) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "regular");
    lab::RemoteTarget t(lab::RemoteSpec::parse(s.url()), "loopback");
    std::vector<lab::WorkloadRequest> work(200);
    for (size_t i = 0; i < work.size(); ++i) {
        work[i].index = i;
        work[i].prompt = {1, static_cast<int32_t>(300 + i % 100), 400, 401};
        work[i].maxTokens = 6;
    }
    lab::RunOptions o;
    o.arrival.concurrency = 32;
    o.sampling.temperature = 0;
    o.stopAtEos = false;
    const auto r = lab::runWorkload(t, work, o);
    ASSERT_EQ(r.records.size(), 200u);
    for (const auto& rec : r.records) {
        EXPECT_EQ(rec.status, lab::RequestStatus::Ok) << rec.error;
        EXPECT_EQ(rec.outputTokens, 6);
        EXPECT_GE(rec.firstTokenMs, rec.submittedMs);
    }
}

TEST(Loopback, MetricsAreValidAndCountersOnlyGrow) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "fast");
    auto c = s.client();
    auto scrape = [&] {
        const auto res = c.Get("/metrics");
        EXPECT_TRUE(res && res->status == 200);
        std::map<std::string, double> v;
        const std::regex line(R"(^([a-z_]+(?:_total|_count|_sum))\{[^}]*\} ([0-9.e+-]+)$)");
        std::istringstream in(res ? res->body : "");
        std::string l;
        while (std::getline(in, l)) {
            std::smatch m;
            if (std::regex_match(l, m, line)) v[m[1]] = std::stod(m[2]);
        }
        return v;
    };
    const auto before = scrape();
    ASSERT_TRUE(before.count("modebench_prefix_cache_queries_total"));
    for (int i = 0; i < 3; ++i)
        c.Post("/v1/completions",
               Json{{"prompt", "Once upon a time there was a little girl named Lily. She loved to play outside in "
                               "the park with her big red ball and her friend Tom."},
                    {"max_tokens", 3}}
                   .dump(),
               "application/json");
    c.Post("/v1/completions", "not json", "application/json");
    const auto after = scrape();
    for (const auto& [name, value] : before) EXPECT_GE(after.at(name), value) << name;
    EXPECT_EQ(after.at("modebench_generation_tokens_total") - before.at("modebench_generation_tokens_total"), 9);
    EXPECT_EQ(after.at("modebench_request_errors_total") - before.at("modebench_request_errors_total"), 1);
    EXPECT_GT(after.at("modebench_prefix_cache_hits_total"), before.at("modebench_prefix_cache_hits_total"));
    EXPECT_EQ(after.at("modebench_time_to_first_token_seconds_count"), 3);
}

TEST(Loopback, ClearErrorsForBadRequestsKeysAndModels) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "regular", "sekrit");
    auto c = s.client();
    auto post = [&](const std::string& body, const std::string& key) {
        httplib::Headers h;
        if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
        return c.Post("/v1/completions", h, body, "application/json");
    };
    auto r = post(R"({"prompt": "x"})", "");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);
    r = post(R"({"prompt": "x"})", "wrong");
    EXPECT_EQ(r->status, 401);
    r = post(R"({"prompt": "x", "model": "gpt-9"})", "sekrit");
    EXPECT_EQ(r->status, 404);
    EXPECT_NE(Json::parse(r->body)["error"]["message"].get<std::string>().find("gpt-9"), std::string::npos);
    r = post(R"({"prompt": 5})", "sekrit");
    EXPECT_EQ(r->status, 400);
    r = post("{", "sekrit");
    EXPECT_EQ(r->status, 400);
    std::string longPrompt = "[1";
    for (int i = 0; i < 600; ++i) longPrompt += ",300";
    r = post(R"({"prompt": )" + longPrompt + "]}", "sekrit"); // over stories260K's 512 context
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find("tokens"), std::string::npos);
    r = post(R"({"prompt": "Once", "max_tokens": 2})", "sekrit");
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(c.Get("/health")->status, 200); // open without the key
    // The remote target reads its key from the environment and fails clearly without it.
    auto spec = lab::RemoteSpec::parse(s.url());
    spec.apiKeyEnv = "MB_TEST_UNSET_KEY_VARIABLE";
    EXPECT_THROW(lab::RemoteTarget(spec, "x"), std::invalid_argument);
    setenv("MB_TEST_KEY", "sekrit", 1);
    spec.apiKeyEnv = "MB_TEST_KEY";
    lab::RemoteTarget keyed(spec, "keyed");
    EXPECT_EQ(runOne(keyed, request({1, 403}, 2)).finished.status, engine::FinishStatus::Ok);
    spec.apiKeyEnv.clear();
    lab::RemoteTarget unkeyed(spec, "unkeyed");
    const auto denied = runOne(unkeyed, request({1, 403}, 2)).finished;
    EXPECT_EQ(denied.status, engine::FinishStatus::Error);
    EXPECT_NE(denied.error.find("HTTP 401"), std::string::npos) << denied.error;
    EXPECT_NE(denied.error.find("API key"), std::string::npos) << denied.error;
}

TEST(RemoteTarget, AnErrorObjectInsideTheStreamFailsTheRequest) {
    ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_content("data: {\"choices\":[{\"text\":\"Hel\"}]}\n\n"
                        ": comment\n\n"
                        "data:{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\"}}\n\n",
                        "text/event-stream");
    });
    lab::RemoteTarget t(s.spec(), "scripted");
    const auto o = runOne(t, request({1, 2}, 5));
    EXPECT_EQ(o.pieces, std::vector<std::string>{"Hel"});
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Error);
    EXPECT_NE(o.finished.error.find("out of memory"), std::string::npos) << o.finished.error;
}

TEST(RemoteTarget, AStreamWithoutDoneAndLlamaCppTimingsAreHandled) {
    ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_content("data: {\"choices\":[{\"text\":\"a\"}],\"timings\":{\"cache_n\":3}}\n\n", "text/event-stream");
    });
    lab::RemoteTarget t(s.spec(), "scripted");
    const auto o = runOne(t, request({1, 2, 3, 4}, 5));
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Error);
    EXPECT_NE(o.finished.error.find("without [DONE]"), std::string::npos) << o.finished.error;
    EXPECT_EQ(o.finished.cachedTokens, 3);
}

TEST(RemoteTarget, ConnectionRefusedAndTimeoutsAreClear) {
    // A port the kernel just handed out and that nothing listens on.
    int freePort = 0;
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
        freePort = ntohs(a.sin_port);
        ::close(fd);
    }
    lab::RemoteTarget refused(lab::RemoteSpec::parse("http://127.0.0.1:" + std::to_string(freePort)), "nobody");
    const auto r = runOne(refused, request({1, 2}, 2)).finished;
    EXPECT_EQ(r.status, engine::FinishStatus::Error);
    EXPECT_NE(r.error.find("cannot reach"), std::string::npos) << r.error;

    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    ScriptedServer silent([&](const httplib::Request&, httplib::Response& res) {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return release; }); // says nothing until the test is over
        res.set_content("data: [DONE]\n\n", "text/event-stream");
    });
    auto spec = silent.spec();
    spec.readTimeoutS = 0.3;
    {
        lab::RemoteTarget t(spec, "silent");
        const auto o = runOne(t, request({1, 2}, 2)).finished;
        EXPECT_EQ(o.status, engine::FinishStatus::Error);
        EXPECT_NE(o.error.find("no response from"), std::string::npos) << o.error;
        EXPECT_NE(o.error.find("went silent for 0.3 s: timed out"), std::string::npos) << o.error;
    }
    {
        std::lock_guard g(m);
        release = true;
    }
    cv.notify_all();
}

// The port is the server's own: a second server cannot bind it (httplib's SO_REUSEPORT would
// let it, and the kernel would split connections between the two).
TEST(Loopback, ASecondServerOnAPortInUseFailsToBind) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer first(model.string(), "fast");
    server::ServerOptions o;
    o.port = first.port;
    server::OpenAiServer second(*first.session, o);
    try {
        second.bind();
        FAIL() << "a second server bound port " << first.port << ", which is in use";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("port in use"), std::string::npos) << e.what();
    }
    // The command says so and exits 2 (`timeout` only so a regression fails instead of hanging).
    const auto r = test::runCli({"serve", "--model", model.string(), "--port", std::to_string(first.port),
                                 "--threads", "1"},
                                "timeout 60");
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("port in use"), std::string::npos) << r.err;
    // The first server still answers.
    auto c = first.client();
    const auto health = c.Get("/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
}

// `serve` checks at start-up that the model loads: a file with a tensor missing is a one-line
// error and exit code 2, not a server whose /health says ok while every completion fails.
TEST(Loopback, ServeRefusesAModelThatCannotLoad) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const std::string broken =
        (std::filesystem::temp_directory_path() / ("mb_serve_broken_" + std::to_string(::getpid()) + ".gguf")).string();
    {
        const auto src = engine::GgufFile::open(model.string());
        engine::GgufWriter w(broken, src.version(), src.alignment());
        for (const auto& [key, value] : src.metadata())
            if (key != "general.alignment") w.set(key, value);
        for (const auto& t : src.tensors())
            if (t.name != "blk.0.ffn_up.weight")
                w.addTensor(t.name, t.type, t.shape, std::span<const uint8_t>(t.data, t.bytes));
        w.finish();
    }
    for (const char* profile : {"regular", "fast"}) {
        // `timeout` only so a regression fails instead of serving forever.
        const auto r = test::runCli({"serve", "--model", broken, "--port", "0", "--threads", "1", "--profile", profile},
                                    "timeout 60");
        EXPECT_EQ(r.exitCode, 2) << profile << ": " << r.err;
        EXPECT_NE(r.err.find("blk.0.ffn_up.weight"), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    std::filesystem::remove(broken);
}

TEST(Loopback, CompareAcceptsARemoteCandidate) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    LiveServer s(model.string(), "fast");
    const auto r = test::runCli({"compare", "--model", model.string(), "--a", s.url(), "--b", "regular",
                                 "--workload", "chat", "--requests", "4", "--output-tokens", "4", "--no-store",
                                 "--threads", "1"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("A remote"), std::string::npos) << r.out;
    const auto bad = test::runCli({"compare", "--model", model.string(), "--a", "remote:localhost:1", "--no-store"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("http://HOST:PORT"), std::string::npos) << bad.err;
}

} // namespace
} // namespace mb
