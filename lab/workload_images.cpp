// Images in workloads: synthetic images drawn from seeds, and which request carries which.
#include "lab/workload_images.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mb::lab {

namespace {

// splitmix64: a well-mixed 64-bit value from a counter (Steele et al.'s published constants).
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Image seeds: measured sets from the spec's seed, warm-ups from another stream.
constexpr uint64_t kMeasuredSalt = 0x696d616765730001ULL; // "images" + 1
constexpr uint64_t kWarmupSalt = 0x696d616765730002ULL;

std::vector<WorkloadImage> imageSet(const WorkloadSpec::Images& im, uint64_t seed, uint64_t salt, uint64_t set) {
    std::vector<WorkloadImage> out;
    for (int32_t k = 0; k < im.perRequest; ++k) {
        WorkloadImage w;
        w.width = im.width;
        w.height = im.height;
        w.seed = mix(mix(seed ^ salt) + set * 0x10001ULL + static_cast<uint64_t>(k));
        out.push_back(w);
    }
    return out;
}

} // namespace

std::string WorkloadImage::describe() const {
    if (!synthetic()) return path;
    return "synthetic " + std::to_string(width) + "x" + std::to_string(height) + " #" + std::to_string(seed);
}

std::string validateImages(const WorkloadSpec::Images& im) {
    if (im.perRequest < 0 || im.perRequest > WorkloadSpec::Images::kMaxPerRequest)
        return "images.per_request: must be in [0, " + std::to_string(WorkloadSpec::Images::kMaxPerRequest) + "]";
    if (im.perRequest == 0) return {};
    if (im.width < 1 || im.width > engine::kMaxImageSide)
        return "images.width: must be in [1, " + std::to_string(engine::kMaxImageSide) + "] px";
    if (im.height < 1 || im.height > engine::kMaxImageSide)
        return "images.height: must be in [1, " + std::to_string(engine::kMaxImageSide) + "] px";
    if (int64_t{im.width} * im.height > engine::kMaxImagePixels)
        return "images: width x height must be at most " + std::to_string(engine::kMaxImagePixels) + " pixels";
    if (im.distinct < 0) return "images.distinct: must be >= 0 (0: every owner its own images)";
    return {};
}

void attachImages(std::vector<WorkloadRequest>& requests, const WorkloadSpec& spec) {
    const WorkloadSpec::Images& im = spec.images;
    if (im.perRequest <= 0) return;
    uint64_t warmups = 0;
    for (WorkloadRequest& r : requests) {
        if (r.warmup) {
            r.images = imageSet(im, spec.seed, kWarmupSalt, warmups++);
            continue;
        }
        // The owner: a conversation, a group, else the request itself.
        uint64_t owner = r.index - warmups;
        if (r.conversation >= 0) owner = static_cast<uint64_t>(r.conversation);
        else if (r.group >= 0) owner = static_cast<uint64_t>(r.group);
        if (im.distinct > 0) owner %= static_cast<uint64_t>(im.distinct);
        r.images = imageSet(im, spec.seed, kMeasuredSalt, owner);
    }
}

engine::RgbImage syntheticImage(const WorkloadImage& im) {
    if (im.width < 1 || im.height < 1 || im.width > engine::kMaxImageSide || im.height > engine::kMaxImageSide ||
        int64_t{im.width} * im.height > engine::kMaxImagePixels)
        throw std::invalid_argument("synthetic image: " + std::to_string(im.width) + "x" + std::to_string(im.height) +
                                    " px is not a size an image may have");
    engine::RgbImage out;
    out.width = im.width;
    out.height = im.height;
    out.rgb.resize(static_cast<size_t>(im.width) * im.height * 3);
    // Per channel: a plane wave of seeded direction and phase, plus seeded noise of ±24.
    double fx[3], fy[3], phase[3];
    for (int c = 0; c < 3; ++c) {
        const uint64_t h = mix(im.seed + static_cast<uint64_t>(c));
        fx[c] = double(h & 0xffff) / 65536.0 * 0.08;
        fy[c] = double((h >> 16) & 0xffff) / 65536.0 * 0.08;
        phase[c] = double((h >> 32) & 0xffff) / 65536.0 * 6.283185307179586;
    }
    uint64_t state = mix(im.seed ^ 0x6e6f697365ULL); // "noise"
    size_t i = 0;
    for (int y = 0; y < im.height; ++y)
        for (int x = 0; x < im.width; ++x)
            for (int c = 0; c < 3; ++c, ++i) {
                state = mix(state);
                const double wave = 127.5 + 100.0 * std::sin(fx[c] * x + fy[c] * y + phase[c]);
                const double noise = double(state % 49) - 24.0;
                out.rgb[i] = static_cast<uint8_t>(std::lround(std::clamp(wave + noise, 0.0, 255.0)));
            }
    return out;
}

} // namespace mb::lab
