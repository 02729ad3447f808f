// Completion prompts and chat prompts with images: the context checks under `reject`, the template's segments, the encoder.
#include "server/request_prompt.h"

#include "server/image_parts.h"
#include "server/vision_encoder.h"

#include "engine/image.h"
#include "engine/prompt_images.h"

#include <climits>
#include <cstdint>
#include <iterator>
#include <stdexcept>

namespace mb::server {

namespace {

using Json = nlohmann::json;

// Under `reject`, a prompt that cannot fit the context is refused before it is encoded
// whole, with the session's wording: first by its length in bytes (each token stands for
// at most tok.longestTokenBytes() of them), then by an encode that stops one token over.
// Truncating profiles keep part of the prompt, so they still encode all of it.
struct ContextCheck {
    const engine::Session& session;
    bool refuse = false;
    size_t cap = SIZE_MAX;

    ApiError over(const std::string& tokens) const { return badRequest(session.promptOverContext(tokens)); }
    // `bytes` of text and `extraTokens` positions known besides (BOS, images).
    void checkBytes(size_t bytes, size_t extraTokens) const {
        if (const size_t least = session.tokenizer().minTokens(bytes) + extraTokens; refuse && least > cap)
            throw over("at least " + std::to_string(least));
    }
    std::vector<int32_t> checkCap(engine::CappedTokens t) const {
        if (t.overCap) throw over("more than " + std::to_string(cap));
        return std::move(t.ids);
    }
};
ContextCheck contextCheck(const engine::Session& session) {
    const int64_t limit = session.contextLimit();
    const bool refuse = session.profile().truncation == engine::Truncation::Reject && limit >= 0;
    return {session, refuse, refuse ? static_cast<size_t>(limit) : SIZE_MAX};
}

// The prompt's parts: text segment k, image k, ..., the last segment; each image decoded and
// encoded here, in order. Throws ApiError (400) for an image that does not decode.
std::vector<engine::PromptPart> encodedParts(engine::ChatSegments segments, std::vector<DataImage>& images,
                                             const ChatContext& chat) {
    std::vector<engine::PromptPart> parts;
    for (size_t k = 0; k < segments.text.size(); ++k) {
        if (!segments.text[k].empty()) parts.push_back({std::move(segments.text[k]), {}});
        if (k == images.size()) break;
        try {
            VisionEncoder::Encoded e = chat.vision->encode(images[k].bytes, images[k].where + " (" + images[k].mediaType + ")");
            chat.metrics.imageEncoded(e.encodeSeconds);
            parts.push_back({{}, std::move(e.rows)});
        } catch (const engine::ImageError& e) { // "ImageError: NAME: why"
            const std::string why = e.what();
            throw badRequest(why.rfind("ImageError: ", 0) == 0 ? why.substr(12) : why);
        }
        images[k].bytes = {}; // held no longer than needed
    }
    return parts;
}

} // namespace

std::vector<int32_t> completionPromptOf(const Json& body, const engine::Session& session) {
    const auto& tok = session.tokenizer();
    const ContextCheck check = contextCheck(session);
    const auto encode = [&](const Json& text) {
        const std::string& s = text.get_ref<const std::string&>();
        const bool bos = tok.vocab().addBos && tok.bos() >= 0;
        check.checkBytes(s.size(), bos ? 1 : 0);
        return check.checkCap(tok.encode(s, tok.vocab().addBos, check.cap));
    };
    if (!body.contains("prompt")) throw badRequest("prompt: required (a string or an array of token ids)");
    const Json& prompt = body["prompt"];
    if (prompt.is_string()) return encode(prompt);
    if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) return encode(prompt[0]);
    if (!(prompt.is_array() && !prompt.empty() && prompt[0].is_number_integer()))
        throw badRequest("prompt: a string, a one-string array or an array of token ids");
    std::vector<int32_t> ids;
    ids.reserve(prompt.size());
    for (const Json& id : prompt) { // range-checked: a wrapped id would be another token
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
            throw badRequest("prompt: token id " + id.dump() + " is not a token id");
        ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    return ids;
}

engine::InferenceRequest chatRequestOf(const Json& body, const ChatContext& chat) {
    const engine::Session& session = chat.session;
    VisionEncoder* vision = chat.vision;
    if (!body.contains("messages") || !body["messages"].is_array())
        throw badRequest("messages: required, an array of {role, content}");
    const ContextCheck check = contextCheck(session);
    const size_t perImage = vision ? static_cast<size_t>(vision->imageTokens()) : 0;
    std::vector<engine::ChatMessage> messages;
    std::vector<DataImage> images;
    size_t contentBytes = 0; // every content's text is in the prompt verbatim
    for (const auto& m : body["messages"]) {
        if (!m.is_object() || !m.contains("role") || !m.contains("content"))
            throw badRequest("messages: each needs a role and a content (a string or an array of parts)");
        MessageContent c;
        try {
            c = parseContent(m["content"], messages.size(), vision != nullptr);
        } catch (const ContentError& e) {
            throw badRequest(e.what());
        }
        if (images.size() + c.images.size() > kMaxImagesPerRequest)
            throw badRequest("messages: too many images (at most " + std::to_string(kMaxImagesPerRequest) +
                             " in a request)");
        std::move(c.images.begin(), c.images.end(), std::back_inserter(images));
        contentBytes += c.textBytes;
        check.checkBytes(contentBytes, images.size() * perImage);
        messages.push_back({m["role"].get<std::string>(), std::move(c.text)});
    }
    engine::ChatSegments segments;
    try {
        segments = engine::chatPromptSegments(session.tokenizer(), chat.family, messages,
                                              std::string(kImageMarker), static_cast<int64_t>(perImage), check.cap);
    } catch (const std::invalid_argument& e) {
        throw badRequest(std::string("messages: ") + e.what());
    }
    if (segments.overCap) throw check.over("more than " + std::to_string(check.cap));
    engine::InferenceRequest r;
    if (images.empty()) {
        r.prompt = std::move(segments.text.front());
        return r;
    }
    if (segments.text.size() != images.size() + 1)
        throw ApiError{500, "server_error", "the chat template lost an image's place"};
    return engine::fromParts(encodedParts(std::move(segments), images, chat), session.config().dim);
}

} // namespace mb::server
