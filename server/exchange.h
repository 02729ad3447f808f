// One request's exchange between the engine (or its post-processing stage) and the HTTP handler: events in, SSE frames or the reply text out.
#pragma once

#include "engine/session.h"
#include "lab/postprocess_stage.h"
#include "server/server_metrics.h"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

namespace mb::server {

// What the frames of one response carry.
struct ResponseShape {
    bool chat = false;
    bool stream = false;
    bool includeUsage = false;
    std::string id;        // "chatcmpl-N" / "cmpl-N"
    int64_t created = 0;   // Unix seconds
    std::string model;     // the served model's name
    int64_t promptTokens = 0; // positions, image positions included
    int64_t imageTokens = 0;  // of those, image positions
};

std::string dumpJson(const nlohmann::json& j); // invalid UTF-8 replaced
// OpenAI's usage object; prompt_tokens_details.image_tokens only when the prompt had images.
nlohmann::json usageOf(int64_t promptTokens, int64_t outputTokens, int64_t cachedTokens, int64_t imageTokens = 0);
// "content_filter" when a plugin ended the response, else "stop" (EOS) or "length"; null
// when the request did not finish Ok.
const char* finishReasonOf(const engine::RequestEvent& e, bool endedByPlugin);

// Filled on the engine thread (without plugins) or on the post-processing stage's thread
// (with a chain: lab::PostStage, so the engine never waits for a plugin); drained by the
// handler thread. All members under `mutex`.
struct Exchange {
    Exchange(ResponseShape shape, engine::Session& session, ServerMetrics& metrics)
        : shape(std::move(shape)), session(session), metrics(metrics) {}

    // One event with the text to show for it (the token's text, or what the chain let out).
    // A chain that ended the response finishes it here with "content_filter" and cancels
    // the generation; one that failed ends it with an error. Later events are ignored.
    void onEvent(const engine::RequestEvent& e, const std::string& shown, const plugins::ChainRun* run);
    std::string frame(const std::string& text, const char* reason, bool role) const;

    const ResponseShape shape;
    engine::Session& session;
    ServerMetrics& metrics;
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<std::string> chunks; // SSE frames ready to send
    bool finished = false;
    engine::RequestEvent final;     // the Finished event, or one made when a plugin ended it
    std::string postprocessError;   // a plugin failed: the response ends with this error
    bool endedByPlugin = false;     // a plugin ended it: finish_reason "content_filter"
    std::string text;               // non-streaming: the text to reply with
    uint64_t id = 0;
    int64_t submittedNs = 0;
    int64_t firstTokenNs = -1;
    int64_t tokens = 0;
    std::unique_ptr<lab::PostStage> stage; // with a chain; last: joined first

private:
    void finish(const engine::RequestEvent& e);
};

} // namespace mb::server
