// The image options compare shares: vision encoders per candidate and synthetic images per request.
#include "cli/image_options.h"

#include "cli/command_util.h"

#include <charconv>

namespace mb::cli {

void addImageOptions(CLI::App& cmd, ImageArgs& args) {
    cmd.add_option("--mmproj", args.both,
                   "Vision encoder + projector (llava mmproj GGUF) for every embedded candidate, for requests with images");
    cmd.add_option("--a-mmproj", args.a, "Candidate A's mmproj (instead of --mmproj)");
    cmd.add_option("--b-mmproj", args.b, "Candidate B's mmproj (instead of --mmproj)");
    cmd.add_option("--images", args.perRequest,
                   "Synthetic images per request (needs --mmproj; 0 turns the workload's off)")
        ->check(CLI::Range(0, lab::WorkloadSpec::Images::kMaxPerRequest));
    cmd.add_option("--image-size", args.size, "Synthetic images' size, WxH or N for NxN px (default 336)");
    cmd.add_option("--distinct-images", args.distinct,
                   "Different synthetic image sets across the workload (0: every request its own; 1: all the same, "
                   "the prefix cache's case)")
        ->check(CLI::NonNegativeNumber);
}

namespace {

int parseSide(const std::string& text) {
    int v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 1)
        throw UsageError("--image-size: expected WxH or N in pixels, got '" + text + "'");
    return v;
}

} // namespace

void applyImageOptions(const ImageArgs& args, lab::WorkloadSpec& spec, bool promptFile) {
    const bool given = args.perRequest >= 0 || !args.size.empty() || args.distinct >= 0;
    if (!given) return;
    if (promptFile)
        throw UsageError("--images, --image-size and --distinct-images make synthetic images; a prompt file's lines "
                         "list their own (\"images\": [...])");
    if (args.perRequest >= 0) spec.images.perRequest = args.perRequest;
    if (!args.size.empty()) {
        const size_t x = args.size.find('x');
        spec.images.width = parseSide(args.size.substr(0, x));
        spec.images.height = x == std::string::npos ? spec.images.width : parseSide(args.size.substr(x + 1));
    }
    if (args.distinct >= 0) spec.images.distinct = args.distinct;
    if (spec.images.perRequest == 0 && (!args.size.empty() || args.distinct >= 0))
        throw UsageError("--image-size and --distinct-images shape synthetic images: give --images N too");
    if (const std::string why = spec.validate(); !why.empty()) throw UsageError("--" + why);
}

void applyMmproj(const ImageArgs& args, std::vector<lab::Candidate>& candidates,
                 const std::vector<lab::WorkloadRequest>& requests) {
    for (lab::Candidate& c : candidates) {
        const std::string& own = c.label == "a" ? args.a : c.label == "b" ? args.b : std::string();
        const std::string& file = own.empty() ? args.both : own;
        if (file.empty()) continue;
        if (c.isRemote()) {
            if (!own.empty()) throw UsageError("--" + c.label + "-mmproj: candidate " + c.label + " is remote");
            continue; // --mmproj is for the embedded ones
        }
        requireReadableFile(file, "mmproj file");
        c.mmprojPath = file;
    }
    if (const std::string why = lab::imagesRefused(candidates, requests); !why.empty()) throw UsageError(why);
}

} // namespace mb::cli
