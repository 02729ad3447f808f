// The report's "images" section (issue 25, PRODUCT.md §3): image tokens, encode time and its share of TTFT, and the cache effect.
#include "lab/report.h"

#include "lab/metrics.h"
#include "lab/run_config.h"

#include <filesystem>
#include <iomanip>
#include <sstream>

namespace mb::lab {

namespace {

std::string fixed(double v, int decimals) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

} // namespace

ReportSection imagesSection(const std::vector<StoredRun>& runs) {
    ReportSection s{"images", "Image input", {}, {}, {}};
    ReportTable table{"Requests with images",
                      {"candidate", "vision encoder", "requests", "images", "image tokens p50", "encode p50 (ms)",
                       "encode p95 (ms)", "TTFT p50 (ms)", "encode / TTFT p50", "cached tokens mean", "images dropped"},
                      {}};
    for (const StoredRun& run : runs) {
        const RunConfig config = runConfigFromText(run.info.configJson);
        for (const StoredCandidate& c : run.candidates) {
            const auto im = summarizeImages(c.requests);
            if (!im) continue;
            const RunConfig::Side* side = config.side(c.info.label);
            const std::string encoder =
                side && !side->mmproj.empty() ? std::filesystem::path(side->mmproj).filename().string() : "(not recorded)";
            table.rows.push_back({candidateName(run, c), encoder, std::to_string(im->requests), std::to_string(im->images),
                                  fixed(im->imageTokens.p50, 0), fixed(im->encodeMs.p50, 1), fixed(im->encodeMs.p95, 1),
                                  fixed(im->ttftMs.p50, 1), fixed(im->encodeShare.p50, 3),
                                  fixed(im->cachedTokens.mean, 1), std::to_string(im->dropped)});
        }
    }
    if (table.rows.empty()) {
        s.paragraphs.push_back("No request in these runs carried an image.");
        return s;
    }
    s.paragraphs.push_back(
        "Each image is encoded by the candidate's vision encoder (CLIP ViT and projector) before its request reaches "
        "the language model, one request at a time per candidate; its tokens follow BOS and count toward the context. "
        "\"encode\" is that time per request (preprocessing included, file decoding not); TTFT includes it and any wait "
        "for the encoder, and \"encode / TTFT\" is its share. A prefix cache keys image positions by the image's "
        "content, so a repeated image in a caching mode shows as cached tokens; fast-mode truncation keeps or drops an "
        "image whole (\"images dropped\"). Figures come from the stored requests.");
    s.tables.push_back(std::move(table));
    return s;
}

} // namespace mb::lab
