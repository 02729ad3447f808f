// A run's configuration as the store keeps it (runs.config_json): one type for every front end.
#pragma once

#include "engine/sampler.h"
#include "lab/metrics.h"
#include "lab/sweep_tag.h"
#include "lab/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mb::lab {

// What a comparison ran with, besides its workload spec (RunInfo::workloadJson) and
// environment. `modebench-cli compare`, `migrate` and the GUI write it through toJson;
// migration replays, the selection and reports read it back through runConfigFromJson,
// never by key. A field the writer did not know is unset (optional) or its default.
struct RunConfig {
    struct Side {
        std::string label;   // "a", "b"
        std::string model;   // embedded: the GGUF path; remote: "remote:http://..."
        std::string profile; // the profile's name ("fast", "regular", "remote", ...)
        // Its own sampling (the GUI's editors); written only where it differs from the run's.
        std::optional<engine::SamplerParams> sampling;
        // Its plugin chain as recorded (plugins::Chain::record(): each entry's type,
        // configuration and a script's sha256); null: none.
        nlohmann::json plugins;
        // Its vision encoder (an mmproj GGUF, absolute) for requests with images; empty: none.
        std::string mmproj;
    };
    std::string source;           // "cli", "gui", "migrate"; "" in older runs
    std::vector<Side> candidates; // in label order as run
    // The run's sampling (RunOptions::sampling); unset: not recorded (older GUI runs).
    std::optional<engine::SamplerParams> sampling;
    std::optional<ArrivalSpec> arrival; // as the workload's; unset: not recorded
    bool interleave = false;
    int32_t slices = 0; // interleave's parts (0: not recorded)
    int32_t threads = 1;
    std::string device;              // "cpu", "cuda:0"; "" when not recorded
    int64_t primers = 0;             // unrecorded prefix primers issued first
    int64_t precisionPrompts = 0;    // precision A/B prompts (0 = off)
    int64_t precisionGenTokens = 16; // and greedy reference tokens per prompt
    // A prompt-file run: the file, absolute, so that a replay finds it from anywhere, and
    // the max_tokens its lines without one got (the playground: its request's). Empty and
    // unset for a synthetic workload.
    std::string promptFile;
    std::optional<int32_t> maxTokens;
    // Latency objectives of the run's goodput, in ms; unset: none (never -1).
    std::optional<double> sloTtftMs, sloE2eMs, sloTpotMs;
    int32_t repeats = 1;               // compare --repeat: runs of this one config
    std::optional<int64_t> replaysRun; // a migration monitoring pass: the run replayed
    std::optional<SweepTag> sweep;     // compare --sweep: this run's level (a malformed tag stays in extra)
    // The playground's single request (its prompt text, chat turns and "at once").
    struct Playground {
        std::string prompt;
        int64_t chatTurns = 0;
        bool concurrent = false;
    };
    std::optional<Playground> playground;
    // Keys this build does not know (written by a newer one, e.g. a sweep's), kept as they
    // were so that reading and writing a config back loses nothing.
    nlohmann::json extra = nlohmann::json::object();

    const Side* side(const std::string& label) const; // nullptr when absent
    Slo slo() const;                                  // unset bounds are -1 there
    void setSlo(const Slo& s);                        // negative bounds become unset
};

// {"source", "models": {label: path}, "profiles": {label: name}, "plugins": {label: chain}, "sampling": {temperature,
// top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed}, "candidate_sampling": {label:
// {...}}, "arrival": {as the workload's}, "interleave", "slices", "threads", "device",
// "primers", "precision_check": {prompts, gen_tokens}, "prompts": PATH, "max_tokens",
// "slo": {ttft_ms, e2e_ms, tpot_ms}, "repeats", "replays_run", "sweep", "prompt", "chat_turns",
// "concurrent"}, then `extra`'s keys. Unset optionals are left out; "prompts", "primers"
// and "max_tokens" keep the names older builds read.
nlohmann::ordered_json toJson(const RunConfig& c);

// Reads what toJson writes and every shape older builds wrote: the CLI's "model" and
// "model_b" (labels a and b), the GUI's "models" {a, b}; an unset SLO bound as null or a
// negative number; a missing sampling. Keys it does not know land in `extra`. Tolerant:
// a value of the wrong type is treated as absent (a stored run stays readable), never thrown.
RunConfig runConfigFromJson(const nlohmann::json& j);
// The same from RunInfo::configJson; an empty or unparsable text gives a default config.
RunConfig runConfigFromText(const std::string& configJson);

} // namespace mb::lab
