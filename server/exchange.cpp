// Exchange: engine events (post-processed or not) into SSE frames or the reply text; plugin ends and failures.
#include "server/exchange.h"

namespace mb::server {

using Json = nlohmann::json;

std::string dumpJson(const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json usageOf(int64_t promptTokens, int64_t outputTokens, int64_t cachedTokens, int64_t imageTokens) {
    Json usage{{"prompt_tokens", promptTokens},
               {"completion_tokens", outputTokens},
               {"total_tokens", promptTokens + outputTokens},
               {"prompt_tokens_details", {{"cached_tokens", cachedTokens}}}};
    if (imageTokens > 0) usage["prompt_tokens_details"]["image_tokens"] = imageTokens;
    return usage;
}

const char* finishReasonOf(const engine::RequestEvent& e, bool endedByPlugin) {
    if (e.status != engine::FinishStatus::Ok) return nullptr;
    if (endedByPlugin) return "content_filter";
    return e.stop == engine::StopReason::Eos ? "stop" : "length";
}

std::string Exchange::frame(const std::string& text, const char* reason, bool role) const {
    Json choice{{"index", 0}, {"finish_reason", reason ? Json(reason) : Json(nullptr)}};
    if (shape.chat) {
        Json delta = Json::object();
        if (role) delta["role"] = "assistant";
        if (!text.empty() || role) delta["content"] = text;
        choice["delta"] = delta;
    } else {
        choice["text"] = text;
        choice["logprobs"] = nullptr;
    }
    const Json chunk{{"id", shape.id},
                     {"object", shape.chat ? "chat.completion.chunk" : "text_completion"},
                     {"created", shape.created},
                     {"model", shape.model},
                     {"choices", Json::array({choice})}};
    return "data: " + dumpJson(chunk) + "\n\n";
}

void Exchange::finish(const engine::RequestEvent& e) {
    final = e;
    finished = true;
    const bool ok = e.status == engine::FinishStatus::Ok && postprocessError.empty();
    if (ok) {
        const double ttft = firstTokenNs < 0 ? -1 : double(firstTokenNs - submittedNs) / 1e9;
        metrics.requestFinished(ttft, double(e.timeNs - submittedNs) / 1e9, e.promptTokens, e.outputTokens);
    } else if (e.status != engine::FinishStatus::Cancelled || !postprocessError.empty()) {
        metrics.requestFailed();
    }
    if (!shape.stream) return;
    if (ok) {
        chunks.push_back(frame("", finishReasonOf(e, endedByPlugin), false));
    } else if (e.status != engine::FinishStatus::Cancelled || !postprocessError.empty()) {
        // An error after the stream started: an error object inside the stream.
        const std::string message = postprocessError.empty() ? e.error : postprocessError;
        chunks.push_back("data: " + dumpJson({{"error", {{"message", message}, {"type", "server_error"}, {"code", 500}}}}) +
                         "\n\n");
    }
    if (shape.includeUsage && ok) {
        const Json chunk{{"id", shape.id},
                         {"object", shape.chat ? "chat.completion.chunk" : "text_completion"},
                         {"created", shape.created},
                         {"model", shape.model},
                         {"choices", Json::array()},
                         {"usage", usageOf(e.promptTokens, e.outputTokens, e.cachedTokens, e.imageTokens)}};
        chunks.push_back("data: " + dumpJson(chunk) + "\n\n");
    }
    chunks.push_back("data: [DONE]\n\n");
}

void Exchange::onEvent(const engine::RequestEvent& e, const std::string& shown, const plugins::ChainRun* run) {
    bool cancel = false;
    {
        std::lock_guard g(mutex);
        if (finished) return; // a plugin ended it already; this is the cancelled generation's end
        if (e.kind == engine::EventKind::Token) {
            if (firstTokenNs < 0) firstTokenNs = e.timeNs;
            ++tokens;
        }
        if (!shown.empty()) {
            if (shape.stream) chunks.push_back(frame(shown, nullptr, false));
            else text += shown;
        }
        const bool chainStopped = run && (run->ended() || run->failed());
        if (e.kind == engine::EventKind::Finished) {
            if (run && run->failed()) postprocessError = "post-processing failed: " + run->failure();
            endedByPlugin = run && run->ended();
            finish(e);
        } else if (chainStopped) {
            // The chain ended (or broke) the response before the model did: answer now, and
            // stop generating what nobody will see.
            engine::RequestEvent end;
            end.kind = engine::EventKind::Finished;
            end.timeNs = e.timeNs;
            end.status = engine::FinishStatus::Ok;
            end.promptTokens = shape.promptTokens;
            end.imageTokens = shape.imageTokens;
            end.outputTokens = tokens;
            if (run->failed()) postprocessError = "post-processing failed: " + run->failure();
            endedByPlugin = run->ended();
            finish(end);
            cancel = true;
        }
    }
    changed.notify_all();
    if (cancel) session.cancel(id);
}

} // namespace mb::server
