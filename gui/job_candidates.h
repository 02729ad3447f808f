// What a job's CandidateSpecs become on the engine thread: lab::Candidates, the stored run's
// RunInfo, and (on any thread) whether they can take the job's images.
#pragma once

#include "gui/gui_types.h"
#include "lab/comparison.h"
#include "lab/run_config.h"
#include "lab/run_sink.h"

#include <QString>

#include <string>
#include <vector>

namespace mb::gui {

// Engine thread: reads the profile file and loads the plugin chain (`dbPath` and
// `allowUnsandboxed` are the job's: the chain's scripts must be approved there). Throws
// std::runtime_error naming the candidate. The mmproj is taken for an embedded candidate
// only (remote ones take no images); its file is opened when the run starts.
lab::Candidate toCandidate(const CandidateSpec& spec, const QString& dbPath, bool allowUnsandboxed);

// The stored run: its workload and the one typed configuration (lab::RunConfig), whose
// job-specific fields the caller filled; each side's model, profile, sampling, chain and
// mmproj (absolute) come from `candidates`.
lab::RunInfo runInfoFor(const QString& name, const std::vector<std::string>& tags, const lab::WorkloadSpec& spec,
                        const std::vector<lab::Candidate>& candidates, lab::RunConfig config);

// Why `specs` cannot run requests that carry images (lab::imagesRefused's words: a
// candidate without an mmproj, or a remote one); empty when they can or `withImages` is
// false. No file is opened, so the UI thread asks before it starts a job.
QString imagesRefused(const std::vector<CandidateSpec>& specs, bool withImages);

} // namespace mb::gui
