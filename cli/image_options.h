// The image options compare shares (--mmproj, --a-mmproj, --b-mmproj, --images, --image-size, --distinct-images).
#pragma once

#include "lab/comparison.h"
#include "lab/workload.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace mb::cli {

struct ImageArgs {
    std::string both, a, b;   // mmproj files: for every embedded candidate, for A, for B
    int perRequest = -1;      // --images: synthetic images per request (-1: the workload's)
    std::string size;         // --image-size WxH or N (square)
    int distinct = -1;        // --distinct-images K
};

void addImageOptions(CLI::App& cmd, ImageArgs& args);

// Applies --images/--image-size/--distinct-images to a synthetic workload's spec; UsageError
// for a bad size, or for those options with a prompt file (its lines list their images).
void applyImageOptions(const ImageArgs& args, lab::WorkloadSpec& spec, bool promptFile);

// Gives each embedded candidate its mmproj (its own, else --mmproj), checked readable, and
// refuses what cannot run: images without an mmproj, an mmproj on a remote candidate.
void applyMmproj(const ImageArgs& args, std::vector<lab::Candidate>& candidates,
                 const std::vector<lab::WorkloadRequest>& requests);

} // namespace mb::cli
