// Content parts and data: URLs: the part shapes OpenAI clients send, media types, base64 through OpenSSL.
#include "server/image_parts.h"

#ifdef MODEBENCH_HAVE_OPENSSL
#include <openssl/evp.h>
#endif

#include <algorithm>
#include <cctype>
#include <climits>
#include <memory>

namespace mb::server {

namespace {

using Json = nlohmann::json;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && lower(s.substr(0, prefix.size())) == prefix;
}

// Standard base64 (RFC 4648 §4, padded); whitespace and newlines are skipped by OpenSSL.
std::vector<uint8_t> decodeBase64(std::string_view payload) {
#ifdef MODEBENCH_HAVE_OPENSSL
    if (payload.size() > static_cast<size_t>(INT_MAX / 2)) throw ContentError("image_url: the data is too large");
    std::vector<uint8_t> out(payload.size() / 4 * 3 + 3);
    const std::unique_ptr<EVP_ENCODE_CTX, decltype(&EVP_ENCODE_CTX_free)> ctx(EVP_ENCODE_CTX_new(), EVP_ENCODE_CTX_free);
    if (!ctx) throw std::bad_alloc();
    EVP_DecodeInit(ctx.get());
    int n = 0, tail = 0;
    const auto* in = reinterpret_cast<const unsigned char*>(payload.data());
    if (EVP_DecodeUpdate(ctx.get(), out.data(), &n, in, static_cast<int>(payload.size())) < 0 ||
        EVP_DecodeFinal(ctx.get(), out.data() + n, &tail) < 0)
        throw ContentError("image_url: the data is not valid base64");
    out.resize(static_cast<size_t>(n + tail));
    return out;
#else
    (void)payload;
    throw ContentError("image_url: this build cannot decode data: URLs (built without OpenSSL)");
#endif
}

// The image_url of a part: {"url": "..."} (OpenAI's shape, "detail" ignored) or the string itself.
std::string_view urlOf(const Json& part) {
    const Json& v = part.at("image_url");
    if (v.is_string()) return v.get_ref<const std::string&>();
    if (v.is_object() && v.contains("url") && v["url"].is_string()) return v["url"].get_ref<const std::string&>();
    throw ContentError("image_url: must be {\"url\": \"data:...\"} or a data: URL string");
}

} // namespace

DataImage decodeDataUrl(std::string_view url) {
    if (startsWith(url, "http://") || startsWith(url, "https://") || !startsWith(url, "data:"))
        throw ContentError("image_url: only data: URLs are accepted (the server fetches nothing)");
    const size_t comma = url.find(',');
    if (comma == std::string_view::npos) throw ContentError("image_url: a data: URL needs a ',' before its data");
    const std::string header = lower(url.substr(5, comma - 5)); // "image/png;base64"
    const size_t semi = header.find(';');
    DataImage image;
    image.mediaType = header.substr(0, semi);
    if (!startsWith(image.mediaType, "image/") || image.mediaType.size() == 6)
        throw ContentError("image_url: the data: URL's media type is '" + image.mediaType +
                           "', not an image (image/png, image/jpeg)");
    if (semi == std::string::npos || header.size() < 7 || header.compare(header.size() - 7, 7, ";base64") != 0)
        throw ContentError("image_url: the data: URL must be base64 (data:" + image.mediaType + ";base64,...)");
    image.bytes = decodeBase64(url.substr(comma + 1));
    if (image.bytes.empty()) throw ContentError("image_url: the data: URL holds no data");
    return image;
}

MessageContent parseContent(const Json& content, size_t messageIndex, bool vision) {
    const std::string where = "messages[" + std::to_string(messageIndex) + "].content";
    MessageContent out;
    const auto addText = [&](const std::string& text) {
        if (text.find(kImageMarker) != std::string::npos)
            throw ContentError(where + ": the text holds a sequence reserved for images (\\u001f<modebench:image>\\u001f)");
        out.text += text;
        out.textBytes += text.size();
    };
    if (content.is_string()) {
        addText(content.get_ref<const std::string&>());
        return out;
    }
    if (!content.is_array()) throw ContentError(where + ": a string or an array of content parts");
    for (size_t j = 0; j < content.size(); ++j) {
        const Json& part = content[j];
        const std::string at = where + "[" + std::to_string(j) + "]: ";
        const std::string type = part.is_object() && part.contains("type") && part["type"].is_string()
                                     ? part["type"].get<std::string>()
                                     : std::string();
        try {
            if (type == "text") {
                if (!part.contains("text") || !part["text"].is_string()) throw ContentError("a text part needs a string text");
                addText(part["text"].get_ref<const std::string&>());
            } else if (type == "image_url") {
                if (!vision) throw ContentError("this server has no vision encoder (start it with --mmproj)");
                if (out.images.size() >= kMaxImagesPerRequest)
                    throw ContentError("too many images (at most " + std::to_string(kMaxImagesPerRequest) +
                                       " in a request)");
                out.images.push_back(decodeDataUrl(urlOf(part)));
                out.images.back().where = at.substr(0, at.size() - 2);
                out.text += kImageMarker;
            } else {
                throw ContentError("a part's type must be \"text\" or \"image_url\"" +
                                   (type.empty() ? std::string() : " (not \"" + type + "\")"));
            }
        } catch (const ContentError& e) {
            throw ContentError(at + e.what());
        }
    }
    return out;
}

} // namespace mb::server
