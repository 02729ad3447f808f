// Deployment export (PRODUCT.md §13): the chosen candidate as launch settings for vLLM, SGLang,
// llama.cpp's llama-server and modebench-cli serve, plus a Kubernetes HorizontalPodAutoscaler.
//
// Pure functions of a profile, a model and an optional capacity measurement: nothing here
// reads the store or the clock, so the same inputs give the same bytes. Each server gets one
// KnobMapping per profile knob, saying which of its options carries the knob, or, where it
// has none, a note saying so (and what to do instead). docs/SELECTION.md, "Deployment
// export", has the table. No Qt.
#pragma once

#include "engine/profile.h"
#include "lab/selection.h"
#include "lab/stored_run.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::lab {

// Nothing to deploy (no recommendation and no candidate named, no such candidate in the run),
// impossible capacity figures, or a directory that cannot take the files. One line.
class DeployExportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What a capacity sweep measured for the chosen candidate; every figure optional. Absent
// figures are never made up: the manifest then carries inert defaults (one replica) and
// says that they were not measured.
struct DeployCapacity {
    std::optional<int> replicas;    // pods that carry the month's mean (minReplicas), >= 1
    std::optional<int> maxReplicas; // pods that carry its peak (default: replicas), >= replicas
    std::optional<double>
        scaleOutQueueDepth;                  // waiting requests per pod above which to add one, > 0
    std::optional<double> scaleInQueueDepth; // ... below which one may go, < scaleOutQueueDepth
    std::optional<double> ttftP95Ms;         // TTFT p95 per pod (ms) above which to add one, > 0
    std::string source; // where it was measured, e.g. "compare --sweep, run 12"
};

// What the selection's capacity sweep measured for `mode` (ModeCapacity): replicas for the
// month's mean and peak when it sized them, the thresholds at its knee; nullopt when the
// selection has no sweep or the sweep found no knee for that mode.
std::optional<DeployCapacity> deployCapacityOf(const SelectionResult& r, Mode mode);

// The candidate to deploy: its stored profile and model, and why it was chosen.
struct DeployTarget {
    Mode mode = Mode::Regular;
    engine::Profile profile;
    std::string label;                  // the candidate's label in the run ("a")
    std::string modelPath;              // the GGUF file it was measured with
    int64_t modelContext = 0;           // the model's own context (tokens); 0 when not recorded
    bool recommended = false;           // the selection recommended it; false: the user named it
    std::string verdict;                // lab::verdictName of the selection
    std::string headline;               // the selection's headline
    std::optional<double> ttftSloP95Ms; // the requirements' TTFT p95 bound: stated, not measured
    std::vector<int64_t> runIds;
};

// The selection's recommendation, else `named`. Throws DeployExportError naming the verdict
// when the selection recommends no candidate (no_clear_winner, none_feasible) and none is named.
Mode deployMode(const SelectionResult& r, std::optional<Mode> named);
// The run's candidate of deployMode(r, named), with its stored profile parsed (a profile JSON
// without "base" starts from the built-in of its mode). Throws DeployExportError when the run
// has no such candidate or its profile does not parse.
DeployTarget deployTargetOf(const StoredRun& run, const SelectionResult& r,
                            std::optional<Mode> named);

// Context per request the servers should accept: min(profile max_context, model context), the
// profile's cap alone when the model's context is unknown. (ModeBench caps the prompt at one
// less, leaving room for a token; the servers' limits count prompt and output together.)
int64_t deployContext(const DeployTarget& t);

// One profile knob on one server.
struct KnobMapping {
    std::string knob;  // "prefix_cache", "max_batch", ...
    std::string value; // the profile's value, as the profile file writes it
    std::vector<std::string>
        args; // the server's options carrying it, each "--flag" or "--flag VALUE"; empty: none
    std::string note; // why there is no option, or what the option does differently; may be ""
};

struct ServerLaunch {
    std::string id;     // "vllm", "sglang", "llama-server", "modebench-serve"
    std::string title;  // "vLLM", "SGLang", "llama.cpp llama-server", "modebench-cli serve"
    std::string script; // "vllm.sh", ...
    int defaultPort = 8080;
    std::string modelNote; // what MODEL must name for this server
    std::vector<std::string>
        head; // the program and the options that are not knobs (model, host, port, metrics)
    std::vector<KnobMapping> knobs;
};

// vllm, sglang, llama-server and modebench-serve, in that order.
std::vector<ServerLaunch> launchSettings(const DeployTarget& t);
// The command as its script runs it, on one line (with "$MODEL", "$HOST" and "$PORT").
std::string commandLine(const ServerLaunch& s);
// `s` as one word of a POSIX shell command: bare when it is plain, else single-quoted.
std::string shellWord(const std::string& s);

struct DeployFile {
    std::string name; // "vllm.sh", "sglang.sh", "llama-server.sh", "modebench-serve.sh",
                      // "profile.json", "hpa.yaml", "README.md"
    std::string text;
    bool executable = false;
};

// The autoscaling/v2 HorizontalPodAutoscaler of the chosen candidate, scaling on modebench-cli
// serve's queue depth (and TTFT p95 where a target is known). Throws DeployExportError for
// impossible capacity figures, naming the field.
std::string hpaManifest(const DeployTarget& t, const std::optional<DeployCapacity>& capacity);
// Every file of the export, in the order of DeployFile::name.
std::vector<DeployFile> deploymentFiles(const DeployTarget& t,
                                        const std::optional<DeployCapacity>& capacity);
// Writes `files` into `dir`, creating it (and its parents) when missing; each file atomically
// (lab/atomic_file.h), scripts made executable. Throws DeployExportError when `dir` exists and
// is not a directory or cannot be created, and AtomicFileError when a file cannot be written.
// Returns the paths written, in order.
std::vector<std::string> writeDeploymentFiles(const std::string& dir,
                                              const std::vector<DeployFile>& files);

} // namespace mb::lab
