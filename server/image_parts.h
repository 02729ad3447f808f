// OpenAI chat content parts: text and image_url parts with data: URLs, checked and base64-decoded (nothing is fetched).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mb::server {

// A content part the server refuses; what() is the one-line message of its 400.
class ContentError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Stands for an image inside a message's text until the chat template has been rendered
// (engine::chatPromptSegments cuts there). Text that contains it is refused.
inline constexpr std::string_view kImageMarker = "\x1f<modebench:image>\x1f";
// Images one request may carry (each is encoded on the request's thread before it is queued).
inline constexpr size_t kMaxImagesPerRequest = 16;

// An image's bytes from a data: URL, still encoded (PNG, JPEG, ...).
struct DataImage {
    std::string where;          // "messages[i].content[j]", for messages
    std::string mediaType;      // lower case, e.g. "image/png"
    std::vector<uint8_t> bytes; // the base64 payload decoded
};

// "data:image/<type>[;param=v...];base64,<payload>" to its bytes (OpenSSL's base64 decoder;
// whitespace in the payload is skipped). Throws ContentError for another scheme (http and
// https: "image_url: only data: URLs are accepted (the server fetches nothing)"), a media
// type other than image/*, a payload that is not base64 or is empty.
DataImage decodeDataUrl(std::string_view url);

// One message's content, as OpenAI sends it: a string, or an array of parts
// {"type":"text","text":"..."} and {"type":"image_url","image_url":{"url":"data:..."}}
// (also "image_url":"data:..."). Text parts are joined as they are, without separators.
struct MessageContent {
    std::string text;             // kImageMarker where each image goes
    size_t textBytes = 0;         // bytes of text, markers excluded
    std::vector<DataImage> images; // in order of appearance
};

// Throws ContentError (messages are prefixed "messages[i].content[j]: ..."). Without `vision`
// any image part is refused: "this server has no vision encoder (start it with --mmproj)".
MessageContent parseContent(const nlohmann::json& content, size_t messageIndex, bool vision);

} // namespace mb::server
