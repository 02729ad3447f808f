// toCandidate, runInfoFor and the image check: CandidateSpec to lab's types, as the CLI builds them.
#include "gui/job_candidates.h"

#include "engine/devices.h"
#include "gui/plugin_chains.h"
#include "lab/environment.h"
#include "lab/remote_target.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace mb::gui {

namespace {

// The part of `spec` lab::imagesRefused reads; toCandidate fills the same fields the same way.
void setImageSide(const CandidateSpec& spec, lab::Candidate& c) {
    c.label = spec.label.toStdString();
    if (lab::RemoteSpec::isRemote(spec.profile.toStdString())) c.remote = spec.profile.toStdString();
    c.mmprojPath = c.isRemote() ? std::string() : spec.mmprojPath.trimmed().toStdString();
}

} // namespace

lab::Candidate toCandidate(const CandidateSpec& spec, const QString& dbPath, bool allowUnsandboxed) {
    if (spec.modelPath.isEmpty()) throw std::runtime_error("candidate " + spec.label.toStdString() + ": no model chosen");
    if (const std::string why = spec.sampling.validate(); !why.empty())
        throw std::runtime_error("candidate " + spec.label.toStdString() + ": " + why);
    lab::Candidate c;
    setImageSide(spec, c);
    // The device list offers only devices that exist; a stale setting (a GPU since removed)
    // falls back to the CPU, and a device index that does not exist is refused.
    try {
        c.device = engine::resolveDevice(spec.device.toStdString()).device;
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error("candidate " + c.label + ": " + e.what());
    }
    c.modelPath = spec.modelPath.toStdString(); // remote: still the tokenizer of the prompts
    if (c.isRemote()) {
        lab::RemoteSpec::parse(c.remote); // a malformed URL fails here, clearly
        c.apiKeyEnv = spec.apiKeyEnv.toStdString();
        c.profile.name = "remote";
    } else if (spec.profile.trimmed().startsWith(QLatin1Char('{'))) {
        c.profile = engine::Profile::fromJson(spec.profile.toStdString()); // inline (the migration's knobs)
    } else {
        c.profile = engine::Profile::load(spec.profile.toStdString());
    }
    c.threads = std::max(1, spec.threads);
    c.sampling = spec.sampling;
    try {
        c.plugins = loadChain(spec.pluginsPath, dbPath, allowUnsandboxed);
    } catch (const std::exception& e) {
        throw std::runtime_error("candidate " + c.label + ": " + e.what());
    }
    return c;
}

lab::RunInfo runInfoFor(const QString& name, const std::vector<std::string>& tags, const lab::WorkloadSpec& spec,
                        const std::vector<lab::Candidate>& candidates, lab::RunConfig config) {
    lab::RunInfo info;
    info.name = name.toStdString();
    info.tags = tags;
    info.workloadJson = lab::toJson(spec).dump();
    config.source = "gui";
    for (const auto& c : candidates)
        config.candidates.push_back({c.label, c.isRemote() ? c.remote : c.modelPath, c.profile.name, c.sampling,
                                     c.hasPlugins() ? c.plugins->record() : nlohmann::json(),
                                     c.mmprojPath.empty() ? "" : std::filesystem::absolute(c.mmprojPath).string()});
    if (!config.sampling) config.sampling = candidates[0].sampling; // A's: what RunOptions::sampling gets
    config.threads = candidates[0].threads;
    for (const auto& c : candidates)
        if (!c.isRemote() && config.device.empty()) config.device = c.device.id();
    info.configJson = lab::toJson(config).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    info.environmentJson =
        lab::environmentJson(candidates[0].threads).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    return info;
}

QString imagesRefused(const std::vector<CandidateSpec>& specs, bool withImages) {
    if (!withImages) return {};
    std::vector<lab::Candidate> candidates(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) setImageSide(specs[i], candidates[i]);
    lab::WorkloadRequest request;
    request.images.push_back({});
    return QString::fromStdString(lab::imagesRefused(candidates, {request}));
}

} // namespace mb::gui
