// Image input over a run's records (PRODUCT.md §3): image tokens, encode time and its share of TTFT.
#include "lab/metrics.h"

namespace mb::lab {

std::optional<ImageSummary> summarizeImages(const std::vector<RequestRecord>& records) {
    ImageSummary s;
    bool any = false;
    std::vector<double> tokens, encode, share, ttft, cached;
    for (const RequestRecord& r : records) {
        if (r.images <= 0) continue;
        any = true;
        s.dropped += r.imagesDropped;
        if (r.status != RequestStatus::Ok) continue;
        ++s.requests;
        s.images += r.images;
        tokens.push_back(static_cast<double>(r.imageTokens));
        encode.push_back(r.encodeMs);
        if (const double x = r.encodeShare(); x >= 0) share.push_back(x);
        if (const double x = r.ttftMs(); x >= 0) ttft.push_back(x);
        cached.push_back(static_cast<double>(r.cachedTokens));
    }
    if (!any) return std::nullopt;
    s.imageTokens = describe(std::move(tokens));
    s.encodeMs = describe(std::move(encode));
    s.encodeShare = describe(std::move(share));
    s.ttftMs = describe(std::move(ttft));
    s.cachedTokens = describe(std::move(cached));
    return s;
}

nlohmann::ordered_json toJson(const ImageSummary& s) {
    nlohmann::ordered_json j;
    j["requests"] = s.requests;
    j["images"] = s.images;
    j["dropped"] = s.dropped;
    j["image_tokens"] = toJson(s.imageTokens);
    j["encode_ms"] = toJson(s.encodeMs);
    j["encode_share"] = toJson(s.encodeShare);
    j["ttft_ms"] = toJson(s.ttftMs);
    j["cached_tokens"] = toJson(s.cachedTokens);
    return j;
}

} // namespace mb::lab
