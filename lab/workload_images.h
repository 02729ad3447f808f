// Images in workloads: synthetic images drawn from seeds, and which request carries which.
#pragma once

#include "engine/image.h"
#include "lab/workload.h"

#include <string>
#include <vector>

namespace mb::lab {

// Empty when the images part of a spec makes sense, else a one-line reason naming the key.
std::string validateImages(const WorkloadSpec::Images& images);

// Gives each request of `requests` (buildWorkload's result for `spec`) the synthetic images
// spec.images asks for (WorkloadSpec::Images says who shares which); nothing when
// perRequest is 0. Same spec → the same images.
void attachImages(std::vector<WorkloadRequest>& requests, const WorkloadSpec& spec);

// The synthetic image `im` stands for (im.synthetic()): a seeded plane wave per channel plus
// seeded noise, so the encoder sees varied input. Same size and seed → the same pixels.
// Throws std::invalid_argument for a size outside [1, engine::kMaxImageSide] or over
// engine::kMaxImagePixels.
engine::RgbImage syntheticImage(const WorkloadImage& im);

} // namespace mb::lab
