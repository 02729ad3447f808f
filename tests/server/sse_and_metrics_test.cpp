// Server-sent-event parsing, remote URLs, the Prometheus text and chat templates, without a network.
#include "engine/gguf.h"
#include "engine/vocab.h"
#include "lab/remote_target.h"
#include "lab/sse_parser.h"
#include "loopback_util.h"
#include "engine/chat_template.h"
#include "server/server_metrics.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace mb {
namespace {

TEST(SseParser, SurvivesReadsCutAnywhere) {
    const std::string stream = ": keep-alive\r\ndata: {\"a\":1}\r\n\r\ndata:{\"b\":2}\n\nevent: x\nid: 7\ndata: one\ndata: two\n\n"
                               "retry: 5\n\ndata: [DONE]\n\n";
    for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, stream.size()}) {
        lab::SseParser p;
        std::vector<std::string> got;
        for (size_t i = 0; i < stream.size(); i += piece)
            for (auto& e : p.feed(std::string_view(stream).substr(i, piece))) got.push_back(e);
        for (auto& e : p.finish()) got.push_back(e);
        ASSERT_EQ(got.size(), 4u) << "piece " << piece;
        EXPECT_EQ(got[0], "{\"a\":1}");
        EXPECT_EQ(got[1], "{\"b\":2}"); // no space after the colon
        EXPECT_EQ(got[2], "one\ntwo");  // data lines join with LF
        EXPECT_EQ(got[3], "[DONE]");
    }
}

TEST(SseParser, HandlesBareCrBomAndAnUnterminatedLastEvent) {
    lab::SseParser p;
    auto got = p.feed("\xEF\xBB\xBF" "data: x\r\rdata: y");
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], "x");
    got = p.finish();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], "y");
    EXPECT_TRUE(p.finish().empty());
}

TEST(SseParser, ReadsLlamaCppsErrorLines) {
    lab::SseParser p;
    const auto got = p.feed("data: {\"a\":1}\n\nerror: {\"code\":500,\"message\":\"too big\"}\n\nerror: plain\n\ndata: [DONE]\n\n");
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[1], R"({"error":{"code":500,"message":"too big"}})");
    EXPECT_EQ(got[2], R"({"error":"plain"})");
    EXPECT_EQ(got[3], "[DONE]");
}

TEST(RemoteTarget, AnErrorLineInTheStreamFailsTheRequestWithItsMessage) {
    test::ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_content("error: {\"code\":500,\"message\":\"Input prompt is too big\",\"type\":\"server_error\"}\n\n"
                        "data: [DONE]\n\n",
                        "text/event-stream");
    });
    lab::RemoteTarget t(s.spec(), "llama.cpp-like");
    const auto o = test::runOne(t, test::request({1, 2}, 5));
    EXPECT_EQ(o.finished.status, engine::FinishStatus::Error);
    EXPECT_NE(o.finished.error.find("Input prompt is too big"), std::string::npos) << o.finished.error;
}

TEST(RemoteTarget, CachedTokensComeFromLlamaCppsPromptN) {
    test::ScriptedServer s([](const httplib::Request&, httplib::Response& res) {
        res.set_content("data: {\"choices\":[{\"text\":\"a\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1},"
                        "\"timings\":{\"prompt_n\":3,\"prompt_ms\":4.5,\"predicted_per_token_ms\":1.25}}\n\ndata: [DONE]\n\n",
                        "text/event-stream");
    });
    lab::RemoteTarget t(s.spec(), "llama.cpp-like");
    const auto o = test::runOne(t, test::request({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1));
    ASSERT_EQ(o.finished.status, engine::FinishStatus::Ok) << o.finished.error;
    EXPECT_EQ(o.finished.cachedTokens, 7);
    EXPECT_DOUBLE_EQ(o.finished.serverPromptMs, 4.5);
    EXPECT_DOUBLE_EQ(o.finished.serverPerTokenMs, 1.25);
}

TEST(RemoteSpec, ParsesTheForms) {
    auto r = lab::RemoteSpec::parse("remote:http://127.0.0.1:8000/v1#meta-llama/Llama-3.2-1B");
    EXPECT_EQ(r.host, "127.0.0.1");
    EXPECT_EQ(r.port, 8000);
    EXPECT_EQ(r.prefix, "/v1");
    EXPECT_EQ(r.model, "meta-llama/Llama-3.2-1B");
    r = lab::RemoteSpec::parse("http://box:9000");
    EXPECT_EQ(r.prefix, "/v1");
    EXPECT_EQ(r.model, "");
    r = lab::RemoteSpec::parse("remote:http://box:9000/");
    EXPECT_EQ(r.prefix, "");
    r = lab::RemoteSpec::parse("https://api.example.com/openai/v1/");
    EXPECT_EQ(r.port, 443);
    EXPECT_EQ(r.prefix, "/openai/v1");
    r = lab::RemoteSpec::parse("remote:http://tgi:3000/v1?prompt=text#tgi");
    EXPECT_TRUE(r.textPrompts);
    EXPECT_EQ(r.prefix, "/v1");
    EXPECT_EQ(r.model, "tgi");
    EXPECT_EQ(r.url(), "http://tgi:3000/v1?prompt=text#tgi");
    EXPECT_THROW(lab::RemoteSpec::parse("http://box:1/v1?prompt=pictures"), std::invalid_argument);
    EXPECT_THROW(lab::RemoteSpec::parse("remote:box:9000"), std::invalid_argument);
    EXPECT_THROW(lab::RemoteSpec::parse("ftp://box:9000"), std::invalid_argument);
    EXPECT_THROW(lab::RemoteSpec::parse("http://box:99999"), std::invalid_argument);
    EXPECT_THROW(lab::RemoteSpec::parse("http://:80"), std::invalid_argument);
}

// Checks the text exposition format line by line and returns sample name+labels -> value.
std::map<std::string, double> parseExposition(const std::string& text) {
    std::map<std::string, double> samples;
    const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([-+0-9.eE]+|\+Inf|NaN)$)");
    const std::regex meta(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (line.rfind('#', 0) == 0) {
            EXPECT_TRUE(std::regex_match(line, meta)) << line;
            continue;
        }
        EXPECT_TRUE(std::regex_match(line, m, sample)) << line;
        if (!m.empty()) samples[m[1].str() + m[2].str()] = std::stod(m[3].str());
    }
    return samples;
}

TEST(ServerMetrics, RendersValidExpositionWithCumulativeBuckets) {
    server::ServerMetrics metrics;
    metrics.requestFinished(0.03, 0.2, 10, 5);
    metrics.requestFinished(2.0, 4.0, 20, 7);
    metrics.requestFailed();
    engine::SessionStats stats;
    stats.prefixQueries = 30;
    stats.prefixHits = 12;
    stats.kvBytesInUse = 25;
    stats.kvBytesCapacity = 100;
    stats.running = 1;
    const auto s = parseExposition(metrics.render(stats, "m\"x"));
    const std::string l = "{model_name=\"m\\\"x\"}";
    EXPECT_EQ(s.at("modebench_prefix_cache_queries_total" + l), 30);
    EXPECT_EQ(s.at("modebench_prefix_cache_hits_total" + l), 12);
    EXPECT_EQ(s.at("modebench_kv_cache_usage_ratio" + l), 0.25);
    EXPECT_EQ(s.at("modebench_requests_running" + l), 1);
    EXPECT_EQ(s.at("modebench_requests_waiting" + l), 0);
    EXPECT_EQ(s.at("modebench_prompt_tokens_total" + l), 30);
    EXPECT_EQ(s.at("modebench_generation_tokens_total" + l), 12);
    EXPECT_EQ(s.at("modebench_request_errors_total" + l), 1);
    EXPECT_EQ(s.at("modebench_time_to_first_token_seconds_count" + l), 2);
    EXPECT_DOUBLE_EQ(s.at("modebench_time_to_first_token_seconds_sum" + l), 2.03);
    EXPECT_EQ(s.at("modebench_time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"0.05\"}"), 1);
    EXPECT_EQ(s.at("modebench_time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"2.5\"}"), 2);
    EXPECT_EQ(s.at("modebench_e2e_request_latency_seconds_bucket{model_name=\"m\\\"x\",le=\"+Inf\"}"), 2);
}

TEST(ChatTemplate, DetectsFamiliesAndFallsBackWhenMarkersAreMissing) {
    using engine::ChatFamily;
    EXPECT_EQ(engine::detectChatFamily("{{ '<|start_header_id|>' + message['role'] }}"), ChatFamily::Llama3);
    EXPECT_EQ(engine::detectChatFamily("{% for m in messages %}<|im_start|>{{ m.role }}"), ChatFamily::ChatMl);
    EXPECT_EQ(engine::detectChatFamily("<|user|>\n{{ message['content'] }}"), ChatFamily::Zephyr);
    EXPECT_EQ(engine::detectChatFamily("[INST] {{ content }} [/INST]"), ChatFamily::Mistral); // Llama 2 has <<SYS>>
    EXPECT_EQ(engine::detectChatFamily(""), ChatFamily::Plain);

    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto vocab = engine::Vocab::fromGguf(engine::GgufFile::open(model.string()));
    const auto plainTok = engine::Tokenizer::create(vocab);
    const std::vector<engine::ChatMessage> msgs{{"system", "Be brief."}, {"user", "Tell a story."}};
    // stories260K has no <|im_start|>: the plain form is used.
    const auto fallback = engine::chatPrompt(*plainTok, ChatFamily::ChatMl, msgs);
    EXPECT_EQ(fallback, engine::chatPrompt(*plainTok, ChatFamily::Plain, msgs));
    EXPECT_EQ(plainTok->decode(fallback), "system: Be brief.\nuser: Tell a story.\nassistant:");
    EXPECT_THROW(engine::chatPrompt(*plainTok, ChatFamily::Plain, {}), std::invalid_argument);
    EXPECT_THROW(engine::chatPrompt(*plainTok, ChatFamily::Plain, {{"tool", "x"}}), std::invalid_argument);

    // The same vocabulary with ChatML's markers added: they become single ids.
    const auto start = static_cast<int32_t>(vocab.tokens.size());
    vocab.tokens.push_back("<|im_start|>");
    vocab.tokens.push_back("<|im_end|>");
    for (int i = 0; i < 2; ++i) {
        if (!vocab.scores.empty()) vocab.scores.push_back(0);
        if (!vocab.kinds.empty()) vocab.kinds.push_back(engine::TokenKind::Control);
    }
    const auto chatml = engine::Tokenizer::create(vocab);
    const auto ids = engine::chatPrompt(*chatml, ChatFamily::ChatMl, msgs);
    EXPECT_EQ(ids.front(), start);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), start), 3);     // system, user, assistant
    EXPECT_EQ(std::count(ids.begin(), ids.end(), start + 1), 2); // two closed turns
}

} // namespace
} // namespace mb
