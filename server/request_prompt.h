// Prompts from request bodies: a completion's prompt as token ids, a chat's messages through the template with images in place.
#pragma once

#include "engine/chat_template.h"
#include "engine/session.h"
#include "server/server_metrics.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mb::server {

class VisionEncoder;

// A client error: HTTP status, OpenAI error type, message (one line).
struct ApiError {
    int status;
    std::string type;
    std::string message;
};
inline ApiError badRequest(const std::string& message) {
    return ApiError{400, "invalid_request_error", message};
}

// A completion body's "prompt" (a string, a one-string array or token ids; nulls already
// removed) as token ids. Throws ApiError (400) for a malformed prompt or, under `reject`,
// one that cannot fit the session's context.
std::vector<int32_t> completionPromptOf(const nlohmann::json& body, const engine::Session& session);

// What a chat prompt is built with. `vision` null: image parts are refused.
struct ChatContext {
    const engine::Session& session;
    engine::ChatFamily family;
    VisionEncoder* vision;
    ServerMetrics& metrics; // images encoded, encode time
};

// A chat body's "messages" through the chat template, each image (an image_url content part,
// server/image_parts.h) at its place within its message. Under `reject` the prompt, its
// images' positions counted, is checked against the context before any image is decoded;
// then the images are decoded and encoded on the calling thread, through the one encoder.
// Throws ApiError (400) for a malformed message or part, an image that does not decode, too
// many images or a prompt over the context.
engine::InferenceRequest chatRequestOf(const nlohmann::json& body, const ChatContext& chat);

} // namespace mb::server
