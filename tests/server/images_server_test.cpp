// serve with --mmproj: OpenAI image_url parts (data: URLs) in chat, the engine's answer for the same parts, refusals.
#include "cli/cli_runner.h"
#include "engine/clip_model.h"
#include "engine/gguf.h"
#include "engine/image.h"
#include "engine/prompt_images.h"
#include "engine/synthetic_mmproj.h"
#include "engine/vocab.h"
#include "kernels/cpu/thread_pool.h"
#include "lab/sse_parser.h"
#include "loopback_util.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <fstream>
#include <future>
#include <iterator>

namespace mb {
namespace {

using Json = nlohmann::json;

std::string fileBytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string base64(const std::string& bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<size_t>(n));
    return out;
}

std::string dataUrl(const std::string& bytes, const std::string& type = "image/png") {
    return "data:" + type + ";base64," + base64(bytes);
}

// One user message: text, the image, more text (OpenAI's part shapes).
Json imageChat(const std::string& url, bool stream = false, int maxTokens = 8) {
    const Json content = Json::array({{{"type", "text"}, {"text", "Describe "}},
                                      {{"type", "image_url"}, {"image_url", {{"url", url}}}},
                                      {{"type", "text"}, {"text", " the image."}}});
    Json body{{"messages", {{{"role", "user"}, {"content", content}}}},
              {"max_tokens", maxTokens},
              {"temperature", 0},
              {"ignore_eos", true},
              {"stream", stream}};
    if (stream) body["stream_options"] = {{"include_usage", true}};
    return body;
}

// The prompt the plain chat form gives imageChat: "user: " + text + image + text + "\n" + "assistant:",
// the text on each side of the image encoded on its own, BOS first.
std::vector<engine::PromptPart> expectedParts(const engine::Tokenizer& tok, std::vector<float> rows) {
    std::vector<int32_t> head{tok.bos()};
    const auto user = tok.encode("user: Describe ", false);
    head.insert(head.end(), user.begin(), user.end());
    return {{head, {}}, {{}, std::move(rows)}, {tok.encode(" the image.\nassistant:", false), {}}};
}

// The text as the server sends it: invalid UTF-8 (the random model emits single bytes) replaced.
std::string asServed(const std::string& text) {
    return Json::parse(Json(text).dump(-1, ' ', false, Json::error_handler_t::replace)).get<std::string>();
}

// Submits to the session directly and waits for the Finished event.
engine::RequestEvent finishedOf(engine::Session& session, engine::InferenceRequest r) {
    std::promise<engine::RequestEvent> done;
    session.submit(std::move(r), [&](const engine::RequestEvent& e) {
        if (e.kind == engine::EventKind::Finished) done.set_value(e);
    });
    return done.get_future().get();
}

httplib::Result postChat(const test::LiveServer& s, const Json& body) {
    auto c = s.client();
    c.set_read_timeout(120, 0);
    return c.Post("/v1/chat/completions", body.dump(), "application/json");
}

std::string errorOf(const httplib::Result& r) {
    return Json::parse(r->body)["error"]["message"].get<std::string>();
}

#define MB_REQUIRE_MM_DATA()                                                   \
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");                        \
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");                \
    MB_REQUIRE_DATA(grad, "mm/images/grad64.png");                            \
    MB_REQUIRE_DATA(checker, "mm/images/checker100x50.png")

test::LiveServer visionServer(const std::filesystem::path& lm, const std::filesystem::path& mmproj,
                              const std::string& profile) {
    auto clip = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(mmproj.string()));
    return test::LiveServer(lm.string(), profile, {}, [&](server::ServerOptions& o) { o.vision = clip; });
}

TEST(ServeImages, DataUrlImagesAreAnsweredWholeAndStreamedWithTheirTokensCounted) {
    MB_REQUIRE_MM_DATA();
    test::LiveServer s = visionServer(lm, mmproj, "regular");
    const auto& tok = s.session->tokenizer();
    const int64_t positions = static_cast<int64_t>(expectedParts(tok, {})[0].tokens.size() +
                                                   expectedParts(tok, {})[2].tokens.size()) + 16;
    const auto whole = postChat(s, imageChat(dataUrl(fileBytes(grad))));
    ASSERT_TRUE(whole);
    ASSERT_EQ(whole->status, 200) << whole->body;
    const Json j = Json::parse(whole->body);
    EXPECT_EQ(j["usage"]["prompt_tokens"], positions);
    EXPECT_EQ(j["usage"]["prompt_tokens_details"]["image_tokens"], 16);
    EXPECT_EQ(j["usage"]["completion_tokens"], 8);

    const auto streamed = postChat(s, imageChat(dataUrl(fileBytes(grad)), true));
    ASSERT_TRUE(streamed);
    ASSERT_EQ(streamed->status, 200) << streamed->body;
    lab::SseParser p;
    const auto events = p.feed(streamed->body);
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events.back(), "[DONE]");
    std::string text;
    for (size_t i = 0; i + 2 < events.size(); ++i) {
        const Json f = Json::parse(events[i]);
        if (!f["choices"].empty()) text += f["choices"][0]["delta"].value("content", "");
    }
    EXPECT_EQ(text, j["choices"][0]["message"]["content"].get<std::string>());
    const Json usage = Json::parse(events[events.size() - 2])["usage"];
    EXPECT_EQ(usage["prompt_tokens"], positions);
    EXPECT_EQ(usage["prompt_tokens_details"]["image_tokens"], 16);

    // The string form of image_url, and a JPEG, are taken too; /metrics counts the encodes.
    Json body = imageChat(dataUrl(fileBytes(grad)));
    body["messages"][0]["content"][1]["image_url"] = dataUrl(fileBytes(grad));
    const auto stringForm = postChat(s, body);
    ASSERT_TRUE(stringForm);
    EXPECT_EQ(stringForm->status, 200) << stringForm->body;
    MB_REQUIRE_DATA(jpeg, "mm/images/blobs80x60.jpg");
    const auto jpg = postChat(s, imageChat(dataUrl(fileBytes(jpeg), "image/jpeg")));
    ASSERT_TRUE(jpg);
    EXPECT_EQ(jpg->status, 200) << jpg->body;
    const auto metrics = s.client().Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_NE(metrics->body.find("modebench_images_encoded_total{model_name=\"stories\"} 4"), std::string::npos)
        << metrics->body;
    EXPECT_NE(metrics->body.find("modebench_image_encode_seconds_total"), std::string::npos);
}

// The server's greedy answer is the engine's for the same parts submitted directly.
TEST(ServeImages, GreedyOutputEqualsTheSessionOnTheSameParts) {
    MB_REQUIRE_MM_DATA();
    test::LiveServer s = visionServer(lm, mmproj, "regular");
    const auto clip = engine::ClipModel::load(mmproj.string());
    kernels::ThreadPool pool(1);
    for (const auto& image : {grad, checker}) {
        const auto served = postChat(s, imageChat(dataUrl(fileBytes(image)), false, 12));
        ASSERT_TRUE(served);
        ASSERT_EQ(served->status, 200) << served->body;
        const Json j = Json::parse(served->body);

        engine::InferenceRequest r = engine::fromParts(
            expectedParts(s.session->tokenizer(), clip.encodeImage(engine::loadImage(image.string()), pool)),
            s.session->config().dim);
        r.maxTokens = 12;
        r.sampling.temperature = 0;
        r.stopAtEos = false;
        const engine::RequestEvent direct = finishedOf(*s.session, std::move(r));
        ASSERT_EQ(direct.status, engine::FinishStatus::Ok) << direct.error;
        EXPECT_EQ(direct.imageTokens, 16);
        EXPECT_EQ(direct.outputTokens, 12);
        EXPECT_EQ(j["choices"][0]["message"]["content"].get<std::string>(), asServed(direct.text)) << image.filename();
        EXPECT_EQ(j["usage"]["prompt_tokens"], direct.promptTokens);
    }
}

TEST(ServeImages, TheSameImageTwiceIsServedFromThePrefixCache) {
    MB_REQUIRE_MM_DATA();
    test::LiveServer s = visionServer(lm, mmproj, "fast");
    const Json body = imageChat(dataUrl(fileBytes(grad)), false, 2);
    const auto first = postChat(s, body);
    ASSERT_TRUE(first);
    ASSERT_EQ(first->status, 200) << first->body;
    const auto second = postChat(s, body);
    ASSERT_TRUE(second);
    ASSERT_EQ(second->status, 200) << second->body;
    const Json a = Json::parse(first->body)["usage"], b = Json::parse(second->body)["usage"];
    EXPECT_GT(b["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), 0) << b.dump();
    EXPECT_GT(b["prompt_tokens_details"]["cached_tokens"], a["prompt_tokens_details"]["cached_tokens"]);
    // Another image at the same place shares only the text before it.
    const auto other = postChat(s, imageChat(dataUrl(fileBytes(checker)), false, 2));
    ASSERT_TRUE(other);
    EXPECT_LT(Json::parse(other->body)["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
              b["prompt_tokens_details"]["cached_tokens"].get<int64_t>());
}

TEST(ServeImages, RemoteUrlsAndServersWithoutAnEncoderAreRefused) {
    MB_REQUIRE_MM_DATA();
    test::LiveServer s = visionServer(lm, mmproj, "regular");
    for (const char* url : {"http://example.com/cat.png", "https://example.com/cat.png", "file:///etc/passwd"}) {
        const auto r = postChat(s, imageChat(url));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 400) << r->body;
        EXPECT_NE(errorOf(r).find("image_url: only data: URLs are accepted (the server fetches nothing)"),
                  std::string::npos)
            << errorOf(r);
    }
    test::LiveServer blind(lm.string(), "regular");
    const auto r = postChat(blind, imageChat(dataUrl(fileBytes(grad))));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_NE(errorOf(r).find("this server has no vision encoder (start it with --mmproj)"), std::string::npos)
        << errorOf(r);
    // Text-only content, as a string or as text parts, is served without an encoder.
    Json text{{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 2}};
    const auto plain = postChat(blind, text);
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->status, 200) << plain->body;
    text["messages"][0]["content"] = Json::array({{{"type", "text"}, {"text", "Hi"}}});
    const auto parts = postChat(blind, text);
    ASSERT_TRUE(parts);
    EXPECT_EQ(parts->status, 200) << parts->body;
    EXPECT_EQ(Json::parse(parts->body)["usage"], Json::parse(plain->body)["usage"]);
}

TEST(ServeImages, BadImagesAre400sAndTheServerKeepsServing) {
    MB_REQUIRE_MM_DATA();
    test::LiveServer s = visionServer(lm, mmproj, "regular");
    std::string png = fileBytes(grad);
    std::string corrupt = png.substr(0, 60);
    corrupt += std::string(200, '\x5a');
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"data:image/png;base64,!!!not base64!!!", "not valid base64"},
        {dataUrl(corrupt), "messages[0].content[1]"},
        {dataUrl("GIF89a-is-not-decoded-here", "image/gif"), "messages[0].content[1]"},
        {"data:text/plain;base64," + base64("hello"), "not an image"},
        {"data:image/png,%89PNG", "must be base64"},
        {"data:image/png;base64,", "no data"},
    };
    for (const auto& [url, why] : cases) {
        const auto r = postChat(s, imageChat(url));
        ASSERT_TRUE(r) << why;
        EXPECT_EQ(r->status, 400) << r->body;
        EXPECT_NE(errorOf(r).find(why), std::string::npos) << errorOf(r);
        EXPECT_EQ(errorOf(r).find('\n'), std::string::npos) << errorOf(r);
    }
    Json many = imageChat(dataUrl(png));
    for (int i = 0; i < 16; ++i) many["messages"][0]["content"].push_back(many["messages"][0]["content"][1]);
    auto r = postChat(s, many);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(errorOf(r).find("too many images"), std::string::npos) << errorOf(r);
    Json unknown = imageChat(dataUrl(png));
    unknown["messages"][0]["content"][0]["type"] = "input_audio";
    r = postChat(s, unknown);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(errorOf(r).find("input_audio"), std::string::npos) << errorOf(r);
    r = postChat(s, imageChat(dataUrl(png)));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
}

// Under `reject` the image's positions count toward the context, checked before it is encoded.
TEST(ServeImages, ImagePositionsCountTowardTheContext) {
    MB_REQUIRE_MM_DATA();
    const auto tok = engine::Tokenizer::create(engine::Vocab::fromGguf(engine::GgufFile::open(lm.string())));
    const auto parts = expectedParts(*tok, {});
    engine::Profile profile = *engine::Profile::builtin("regular");
    // The text fits, the text and the 16 image positions do not.
    profile.maxContext = static_cast<int64_t>(parts[0].tokens.size() + parts[2].tokens.size()) + 8;
    auto session = engine::Session::start(lm.string(), profile, {.threads = 1});
    server::ServerOptions o;
    o.port = 0;
    o.vision = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(mmproj.string()));
    server::OpenAiServer http(*session, o);
    const int port = http.bind();
    std::thread t([&] { http.run(); });
    httplib::Client c("127.0.0.1", port);
    const auto r = c.Post("/v1/chat/completions", imageChat(dataUrl(fileBytes(grad))).dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(errorOf(r).rfind("the prompt has ", 0), 0u) << errorOf(r);
    Json text = imageChat("");
    text["messages"][0]["content"].erase(1);
    const auto ok = c.Post("/v1/chat/completions", text.dump(), "application/json");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << ok->body;
    http.stop();
    t.join();
}

// serve checks the mmproj before it listens: a projector of another width, or a file that is
// not an mmproj, is a one-line error and exit code 2.
TEST(ServeImages, ServeRefusesAnMmprojThatDoesNotFitTheModel) {
    MB_REQUIRE_MM_DATA();
    const auto dir = std::filesystem::temp_directory_path();
    const std::string wrong = (dir / ("mb_mmproj_w128_" + std::to_string(::getpid()) + ".gguf")).string();
    engine::MmprojPreset preset = *engine::findMmprojPreset("tiny-clip");
    preset.lmWidth = 128; // the tiny llama is 256 wide
    engine::writeSyntheticMmproj(preset, kernels::TensorType::F32, 7, wrong);
    for (const std::string& file : {wrong, lm.string()}) {
        const auto r = test::runCli({"serve", "--model", lm.string(), "--mmproj", file, "--port", "0", "--threads", "1"},
                                    "timeout 60");
        EXPECT_EQ(r.exitCode, 2) << r.err;
        const size_t error = r.err.find("modebench-cli: error: mmproj " + file);
        ASSERT_NE(error, std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin() + static_cast<std::ptrdiff_t>(error), r.err.end(), '\n'), 1) << r.err;
    }
    const auto r = test::runCli({"serve", "--model", lm.string(), "--mmproj", wrong, "--port", "0"}, "timeout 60");
    EXPECT_NE(r.err.find("256"), std::string::npos) << r.err;
    std::filesystem::remove(wrong);
}

} // namespace
} // namespace mb
