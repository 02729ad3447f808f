// The export's files: launch scripts, the profile, the autoscaler manifest and a README, written
// atomically.
#include "lab/atomic_file.h"
#include "lab/deploy_export.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace mb::lab {

namespace {

namespace fs = std::filesystem;

std::string str(int64_t v) {
    return std::to_string(v);
}

std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

// A Kubernetes quantity: whole numbers bare, others in thousandths ("2500m" is 2.5).
std::string quantity(double v) {
    const long long milli = std::llround(v * 1000.0);
    return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

std::string runList(const DeployTarget& t) {
    std::string out;
    for (const int64_t id : t.runIds) out += (out.empty() ? "#" : ", #") + str(id);
    return (t.runIds.size() == 1 ? "run " : "runs ") + out;
}

std::string choice(const DeployTarget& t) {
    return t.recommended ? std::string("recommended by the selection")
                         : "named by the user (the selection's verdict: " + t.verdict + ")";
}

std::string script(const DeployTarget& t, const ServerLaunch& s) {
    std::string out = "#!/bin/sh\n";
    out += "# " + s.title + " launch settings for the " + modeName(t.mode) +
           " candidate (profile '" + t.profile.name + "', " + choice(t) +
           ") of the ModeBench selection of " + runList(t) + ".\n";
    out += "# README.md maps each profile knob to these options and notes the knobs without one.\n";
    out += "# MODEL: " + s.modelNote + ". HOST and PORT: where to listen.\n";
    out += "set -eu\n";
    if (s.id == "modebench-serve") out += "HERE=$(cd \"$(dirname \"$0\")\" && pwd)\n";
    out += "MODEL=${MODEL:-" + shellWord(t.modelPath) + "}\n";
    out += "HOST=${HOST:-0.0.0.0}\n";
    out += "PORT=${PORT:-" + str(s.defaultPort) + "}\n";
    std::vector<std::string> words = s.head;
    for (const auto& k : s.knobs) words.insert(words.end(), k.args.begin(), k.args.end());
    out += "exec " + words.front();
    for (size_t i = 1; i < words.size(); ++i) out += " \\\n  " + words[i];
    return out + "\n";
}

// What the manifest says, figure by figure, with where each figure came from.
struct HpaPlan {
    int minReplicas = 1, maxReplicas = 1;
    bool replicasMeasured = false;
    double queueTarget = 1;
    bool queueMeasured = false;
    std::optional<double> scaleIn;
    std::optional<double> ttftMs;
    std::string ttftFrom; // "measured", "stated"
    std::string source;
};

void require(bool ok, const std::string& what) {
    if (!ok) throw DeployExportError("capacity: " + what);
}

HpaPlan planOf(const DeployTarget& t, const std::optional<DeployCapacity>& capacity) {
    HpaPlan p;
    // Not measured: one replica (the HPA then never scales), and one batch of the profile
    // waiting per pod as the queue target (a request then waits a whole batch for a slot).
    p.queueTarget = t.profile.batching == engine::BatchingPolicy::Dynamic ? t.profile.maxBatch : 1;
    if (t.ttftSloP95Ms) {
        p.ttftMs = t.ttftSloP95Ms;
        p.ttftFrom = "stated";
    }
    if (!capacity) return p;
    const DeployCapacity& c = *capacity;
    p.source = c.source;
    require(!c.replicas || *c.replicas >= 1, "replicas must be at least 1");
    require(!c.maxReplicas || *c.maxReplicas >= c.replicas.value_or(1),
            "maxReplicas must be at least replicas");
    require(!c.scaleOutQueueDepth || *c.scaleOutQueueDepth > 0,
            "scaleOutQueueDepth must be above 0");
    require(!c.scaleInQueueDepth || *c.scaleInQueueDepth >= 0,
            "scaleInQueueDepth must not be negative");
    require(!c.scaleInQueueDepth || !c.scaleOutQueueDepth ||
                *c.scaleInQueueDepth < *c.scaleOutQueueDepth,
            "scaleInQueueDepth must be below scaleOutQueueDepth");
    require(!c.ttftP95Ms || *c.ttftP95Ms > 0, "ttftP95Ms must be above 0");
    if (c.replicas || c.maxReplicas) {
        p.replicasMeasured = true;
        p.minReplicas = c.replicas.value_or(1);
        p.maxReplicas = c.maxReplicas.value_or(p.minReplicas);
    }
    if (c.scaleOutQueueDepth) {
        p.queueTarget = *c.scaleOutQueueDepth;
        p.queueMeasured = true;
    }
    p.scaleIn = c.scaleInQueueDepth;
    if (c.ttftP95Ms) {
        p.ttftMs = c.ttftP95Ms;
        p.ttftFrom = "measured";
    }
    return p;
}

std::string measuredBy(const HpaPlan& p) {
    return "measured" + (p.source.empty() ? "" : " (" + p.source + ")");
}

void podsMetric(std::string& out, const std::string& name, const std::string& averageValue) {
    out += "    - type: Pods\n      pods:\n        metric:\n          name: " + name +
           "\n        target:\n          type: AverageValue\n          averageValue: \"" +
           averageValue + "\"\n";
}

const char* kAdapterRules =
    R"(# Prometheus adapter (prometheus-adapter) rules that expose both pod metrics from modebench-cli
# serve's /metrics (scraped with namespace and pod labels):
#   rules:
#     - seriesQuery: 'modebench_requests_waiting{namespace!="",pod!=""}'
#       resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
#       metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
#     - seriesQuery: 'modebench_time_to_first_token_seconds_bucket{namespace!="",pod!=""}'
#       resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
#       name: {matches: "^(.*)_bucket$", as: "${1}_p95"}
#       metricsQuery: 'histogram_quantile(0.95, sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (le, <<.GroupBy>>))'
# The other servers export the same figures as: vLLM vllm:num_requests_waiting and
# vllm:time_to_first_token_seconds; SGLang sglang:num_queue_reqs and sglang:time_to_first_token_seconds;
# llama-server (with --metrics) llamacpp:requests_deferred (no TTFT histogram).
)";

std::string readme(const DeployTarget& t, const std::vector<ServerLaunch>& servers,
                   const HpaPlan& hpa);

std::string cell(std::string s) {
    for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
    return s;
}

} // namespace

std::string hpaManifest(const DeployTarget& t, const std::optional<DeployCapacity>& capacity) {
    const HpaPlan p = planOf(t, capacity);
    const std::string name = std::string("modebench-") + modeName(t.mode);
    std::string out = "# HorizontalPodAutoscaler for the " + std::string(modeName(t.mode)) +
                      " candidate (profile '" + t.profile.name + "', " + choice(t) +
                      ") of the ModeBench selection of " + runList(t) + ".\n";
    out += "# It scales the Deployment that runs modebench-serve.sh (set scaleTargetRef to yours) "
           "on pod metrics\n"
           "# of modebench-cli serve's /metrics; the Prometheus adapter rules that expose them are "
           "at the end.\n";
    const bool anyMeasured = p.replicasMeasured || p.queueMeasured || p.ttftFrom == "measured";
    if (!anyMeasured)
        out +=
            "# NOT MEASURED: no capacity figures were given, so the replicas are one (the "
            "autoscaler never scales)\n"
            "# and the targets are defaults, not measurements. Run a capacity sweep (modebench-cli "
            "compare --sweep)\n"
            "# at the team's monthly volume and peak factor, and export again with its figures.\n";
    else if (!p.source.empty())
        out += "# Capacity: " + measuredBy(p) + ".\n";
    out += "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: " + name +
           "\n  labels:\n    app.kubernetes.io/name: modebench\n    app.kubernetes.io/component: " +
           modeName(t.mode) +
           "\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: " +
           name + "\n";
    const std::string replicasFrom = p.replicasMeasured ? measuredBy(p) : "not measured";
    out += "  minReplicas: " + std::to_string(p.minReplicas) + "  # " + replicasFrom + "\n";
    out += "  maxReplicas: " + std::to_string(p.maxReplicas) + "  # " + replicasFrom + "\n";
    out += "  metrics:\n";
    out += "    # Requests waiting per pod (modebench_requests_waiting): " +
           (p.queueMeasured ? measuredBy(p)
                            : "not measured; the default is one batch of the profile (max_batch " +
                                  number(p.queueTarget) + ") waiting per pod") +
           ".\n";
    podsMetric(out, "modebench_requests_waiting", quantity(p.queueTarget));
    if (p.ttftMs) {
        out +=
            "    # TTFT p95 per pod in seconds (from modebench_time_to_first_token_seconds): " +
            (p.ttftFrom == "measured" ? measuredBy(p)
                                      : "the requirements' TTFT p95 bound (stated, not measured)") +
            ".\n";
        podsMetric(out, "modebench_time_to_first_token_seconds_p95", quantity(*p.ttftMs / 1000.0));
    } else {
        out += "    # No TTFT target: the requirements state no TTFT p95 bound and none was "
               "measured.\n";
    }
    out += "  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 300\n";
    if (p.scaleIn)
        out +=
            "# Scale-in depth " + measuredBy(p) + ": " + number(*p.scaleIn) +
            " waiting requests per pod. An autoscaling/v2 HPA takes one target per metric and "
            "removes pods\n"
            "# once the average is below it by more than its tolerance (10% by default), so this "
            "figure is for\n"
            "# an autoscaler that takes a separate scale-in threshold; it is not applied here.\n";
    return out + kAdapterRules;
}

std::vector<DeployFile> deploymentFiles(const DeployTarget& t,
                                        const std::optional<DeployCapacity>& capacity) {
    const auto servers = launchSettings(t);
    std::vector<DeployFile> files;
    for (const auto& s : servers) files.push_back({s.script, script(t, s), true});
    files.push_back(
        {"profile.json", nlohmann::ordered_json::parse(t.profile.toJson()).dump(2) + "\n", false});
    files.push_back({"hpa.yaml", hpaManifest(t, capacity), false});
    files.push_back({"README.md", readme(t, servers, planOf(t, capacity)), false});
    return files;
}

std::vector<std::string> writeDeploymentFiles(const std::string& dir,
                                              const std::vector<DeployFile>& files) {
    std::error_code ec;
    const auto status = fs::status(dir, ec);
    if (fs::exists(status) && !fs::is_directory(status))
        throw DeployExportError(dir + " exists and is not a directory");
    if (!fs::exists(status) && !fs::create_directories(dir, ec) && ec)
        throw DeployExportError("cannot create " + dir + ": " + ec.message());
    std::vector<std::string> written;
    for (const auto& f : files) {
        const std::string path = (fs::path(dir) / f.name).string();
        writeFileAtomically(path, f.text);
        if (f.executable) {
            // Execute where it can be read: rwxr-xr-x under the usual umask.
            const auto perms = fs::status(path).permissions();
            auto add = fs::perms::none;
            if ((perms & fs::perms::owner_read) != fs::perms::none) add |= fs::perms::owner_exec;
            if ((perms & fs::perms::group_read) != fs::perms::none) add |= fs::perms::group_exec;
            if ((perms & fs::perms::others_read) != fs::perms::none) add |= fs::perms::others_exec;
            fs::permissions(path, add, fs::perm_options::add, ec);
            if (ec) throw DeployExportError("cannot make " + path + " executable: " + ec.message());
        }
        written.push_back(path);
    }
    return written;
}

namespace {

std::string readme(const DeployTarget& t, const std::vector<ServerLaunch>& servers,
                   const HpaPlan& hpa) {
    std::string out = "# Deployment of the " + std::string(modeName(t.mode)) + " candidate\n\n";
    out += "Exported by ModeBench from the selection of " + runList(t) + ": " + t.headline + ".\n";
    out += "The " + std::string(modeName(t.mode)) + " candidate (" + t.label + ", profile `" +
           t.profile.name + "`) is " + choice(t) + ".\n\n";
    out += "- Model measured: `" + t.modelPath + "`" +
           (t.modelContext > 0 ? " (context " + str(t.modelContext) + " tokens)"
                               : " (its context was not recorded)") +
           ".\n";
    out += "- Context per request: " + str(deployContext(t)) + " tokens: " +
           (t.modelContext > 0 ? "min(profile max_context " + str(t.profile.maxContext) +
                                     ", model context " + str(t.modelContext) + ")"
                               : "the profile's max_context") +
           ".\n";
    out += "- `profile.json`: the profile itself (engine::Profile); `hpa.yaml`: the autoscaler "
           "(below).\n\n";
    out += "Each script takes MODEL, HOST and PORT from the environment. The figures are the "
           "profile's knobs; no\n"
           "server measured them: measure the server you deploy with modebench-cli compare against "
           "its URL.\n";
    for (const auto& s : servers) {
        out +=
            "\n## " + s.title + " (`" + s.script + "`)\n\n```sh\n" + commandLine(s) + "\n```\n\n";
        out +=
            "MODEL: " + s.modelNote + ".\n\n| knob | value | option | note |\n|---|---|---|---|\n";
        for (const auto& k : s.knobs) {
            std::string args;
            for (const auto& a : k.args) args += (args.empty() ? "`" : " `") + a + "`";
            out += "| " + k.knob + " | " + cell(k.value) + " | " +
                   (args.empty() ? "none" : cell(args)) + " | " + cell(k.note) + " |\n";
        }
    }
    out += "\n## Autoscaling (`hpa.yaml`)\n\n";
    out += "- Replicas: " + str(hpa.minReplicas) + " to " + str(hpa.maxReplicas) + " (" +
           (hpa.replicasMeasured ? measuredBy(hpa) : "not measured") + ").\n";
    out += "- Scale out above " + number(hpa.queueTarget) +
           " waiting requests per pod (`modebench_requests_waiting`, " +
           (hpa.queueMeasured ? measuredBy(hpa) : "not measured: one batch of the profile") +
           ").\n";
    if (hpa.ttftMs)
        out += "- Scale out above a TTFT p95 of " + number(*hpa.ttftMs) + " ms per pod (" +
               (hpa.ttftFrom == "measured" ? measuredBy(hpa)
                                           : "the requirements' bound, stated, not measured") +
               ").\n";
    if (!hpa.replicasMeasured || !hpa.queueMeasured)
        out += "\nFigures marked not measured are defaults: run a capacity sweep (modebench-cli "
               "compare --sweep) at the\n"
               "team's monthly volume and peak factor, and export again with its figures.\n";
    return out;
}

} // namespace

} // namespace mb::lab
