// `modebench-cli select`: apply the selection rules to stored runs and print the decision.
#include "cli/command_util.h"
#include "cli/selection_inputs.h"

#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "lab/atomic_file.h"
#include "lab/deploy_export.h"
#include "lab/selection.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>

namespace mb::cli {

namespace {

struct SelectArgs {
    std::string db, requirements, prices, model;
    std::string exportDeploy, deployCandidate; // deployCandidate: "", "fast" or "regular"
    std::vector<int64_t> runs;
    bool json = false, save = false;
    int replicates = 200;
    uint64_t seed = 42;
};

void printText(const lab::SelectionResult& r, std::optional<int64_t> savedId) {
    std::cout << std::fixed << std::setprecision(3);
    std::cout << "recommendation: " << r.headline << '\n' << "basis: " << r.basis << '\n';
    for (const auto& w : r.warnings) std::cout << "warning: " << w << '\n';
    for (size_t i = 1; i < r.tieReasons.size(); ++i) std::cout << "no clear winner: " << r.tieReasons[i] << '\n';
    if (!r.dominance.empty() && r.headline.find(r.dominance) == std::string::npos)
        std::cout << "dominance: " << r.dominance << '\n';
    for (const auto& s : r.scores)
        if (const std::string caveat = lab::dataCaveat(s); !caveat.empty()) std::cout << "caution: " << caveat << '\n';
    std::cout << "feasibility:\n";
    for (const auto& s : r.scores) {
        std::cout << "  " << std::left << std::setw(8) << lab::modeName(s.mode) << (s.feasible ? " feasible" : " NOT feasible")
                  << " (context cap " << s.contextCap << " tokens, " << s.inputsOverCap << " of " << s.inputs
                  << " inputs over it)\n";
        for (const auto& g : s.gaps) std::cout << "           gap: " << g << '\n';
        for (const auto& m : s.remedies) std::cout << "           could close it: " << m << '\n';
        for (const auto& x : s.spread)
            std::cout << "           across " << x.runs << " runs: " << x.key << " mean " << x.mean << ", 95% interval "
                      << x.ci95Low << " to " << x.ci95High << ", CV " << x.cv << '\n';
    }
    std::cout << "trace:\n";
    for (const auto& t : r.trace)
        std::cout << "  " << std::left << std::setw(11) << t.rule << (t.fired ? "FIRED  " : "-      ") << t.detail
                  << '\n';
    for (const auto& c : r.conflicts) std::cout << "conflict: " << c << '\n';
    std::cout << "scores (weights latency " << r.weights.latency << ", cost " << r.weights.cost << ", features "
              << r.weights.features << "):\n";
    for (const auto& s : r.scores) {
        std::cout << "  " << std::left << std::setw(8) << lab::modeName(s.mode) << " total " << s.total
                  << "  latency " << s.latency << "  cost " << s.costScore << "  features " << s.features;
        if (s.opsPenalty > 0) std::cout << "  ops -" << s.opsPenalty;
        std::cout << "  (" << s.label << ": " << s.profile << ")\n";
        if (s.cost)
            std::cout << "           monthly " << std::setprecision(2) << s.cost->total << ' ' << s.cost->currency
                      << ", " << std::setprecision(4) << s.cost->perMillionTokens << " per million tokens\n"
                      << std::setprecision(3);
    }
    if (!r.capacity.empty()) std::cout << "capacity (from the sweep's runs):\n";
    for (const auto& c : r.capacity) {
        std::cout << "  " << lab::capacitySentence(c) << '\n';
        for (const auto& line : lab::capacityFormulaLines(c)) std::cout << "           " << line << '\n';
    }
    std::cout << "monitor (fast mode):\n";
    for (const auto& m : r.monitoring) std::cout << "  " << m << '\n';
    if (savedId) std::cout << "saved as selection " << *savedId << '\n';
}

// The files of --export-deploy, built before anything is saved or written: a selection
// without a recommendation exports nothing unless --deploy-candidate names one.
std::vector<lab::DeployFile> deploymentFilesOf(const SelectArgs& a, const lab::StoredRun& run,
                                               const lab::SelectionResult& result, lab::DeployTarget& target) {
    std::optional<lab::Mode> named;
    if (!a.deployCandidate.empty()) named = a.deployCandidate == "fast" ? lab::Mode::Fast : lab::Mode::Regular;
    try {
        target = lab::deployTargetOf(run, result, named);
        // The sweep's replicas and thresholds when the runs held one; else the manifest says "not measured".
        return lab::deploymentFiles(target, lab::deployCapacityOf(result, target.mode));
    } catch (const lab::DeployExportError& e) {
        throw UsageError(std::string("--export-deploy: nothing exported: ") + e.what() +
                         (named ? "" : "; name the candidate with --deploy-candidate fast|regular"));
    }
}

std::vector<std::string> writeDeployment(const std::string& dir, const std::vector<lab::DeployFile>& files) {
    try {
        return lab::writeDeploymentFiles(dir, files);
    } catch (const lab::DeployExportError& e) {
        throw UsageError(std::string("--export-deploy: ") + e.what());
    } catch (const lab::AtomicFileError& e) {
        throw UsageError(std::string("--export-deploy: ") + e.what());
    }
}

void runSelect(const SelectArgs& a) {
    lab::Requirements req;
    std::optional<lab::PriceSheet> prices;
    try {
        req = lab::loadRequirements(a.requirements);
        if (!a.prices.empty()) prices = lab::loadPriceSheet(a.prices);
    } catch (const lab::RequirementsError& e) {
        throw UsageError(e.what());
    }
    for (size_t i = 0; i < a.runs.size(); ++i) // before loading: a repeat must be another run
        if (std::count(a.runs.begin(), a.runs.begin() + static_cast<std::ptrdiff_t>(i), a.runs[i]) > 0)
            throw UsageError("--run " + std::to_string(a.runs[i]) +
                             " is given more than once; repeats must be different runs");
    db::RunStore store = openExistingStore(a.db);
    const auto runs = loadRuns(store, a.runs);
    for (const auto& w : lab::workloadMismatches(runs)) std::cerr << "select: warning: " << w << '\n';
    lab::SelectionOptions options;
    options.bootstrapReplicates = a.replicates;
    options.seed = a.seed;
    options.baseDirectory = std::filesystem::path(a.requirements).parent_path().string();
    std::shared_ptr<const engine::Tokenizer> tokenizer;
    lab::SelectionResult result;
    try {
        if (!req.inputs.promptFile.empty()) tokenizer = lab::promptTokenizer(runs, a.model, options);
        result = lab::select(req, prices, runs, options);
    } catch (const lab::SelectionError& e) {
        throw UsageError(e.what());
    } catch (const engine::GgufError& e) {
        throw UsageError(std::string("tokenizer for inputs.prompt_file: ") + e.what());
    } catch (const std::runtime_error& e) { // loadPromptFile: "FILE:LINE: reason"
        throw UsageError(std::string("inputs.prompt_file: ") + e.what());
    }
    lab::DeployTarget target;
    std::vector<lab::DeployFile> deployFiles;
    if (!a.exportDeploy.empty()) deployFiles = deploymentFilesOf(a, runs.front(), result, target);
    std::optional<int64_t> savedId;
    if (a.save) {
        db::StoredSelection sel;
        sel.runIds = a.runs;
        sel.requirementsJson = lab::toJson(req).dump();
        if (prices) sel.pricesJson = lab::toJson(*prices).dump();
        sel.resultJson = lab::toJson(result).dump();
        savedId = store.saveSelection(sel);
    }
    std::vector<std::string> written;
    if (!a.exportDeploy.empty()) written = writeDeployment(a.exportDeploy, deployFiles);
    if (a.json) {
        Json j = lab::toJson(result);
        if (savedId) j["selection_id"] = *savedId;
        if (!a.exportDeploy.empty())
            j["deployment"] = {{"candidate", lab::modeName(target.mode)}, {"recommended", target.recommended},
                               {"dir", a.exportDeploy}, {"files", written}};
        printJson(j);
    } else {
        printText(result, savedId);
        if (!a.exportDeploy.empty()) {
            std::cout << "deployment of the " << lab::modeName(target.mode) << " candidate ("
                      << (target.recommended ? "recommended" : "named with --deploy-candidate") << "):\n";
            for (const auto& path : written) std::cout << "  wrote " << path << '\n';
        }
    }
}

} // namespace

void addSelectCommand(CLI::App& root) {
    auto a = std::make_shared<SelectArgs>();
    CLI::App* cmd = root.add_subcommand(
        "select", "Recommend fast or regular mode from stored runs: feasibility first, the four rules of the "
                  "selection framework, a headroom score and a confidence from repeated runs (docs/SELECTION.md)");
    addDatabaseOption(*cmd, a->db);
    cmd->add_option("--run", a->runs,
                    "Run id with one fast and one regular candidate; repeat for repeated runs of the same two")
        ->required();
    cmd->add_option("--requirements", a->requirements, "Requirements file (JSON; see resources/requirements/)")
        ->required();
    cmd->add_option("--prices", a->prices, "Price sheet (JSON; see resources/prices/example.json)");
    cmd->add_option("--model", a->model,
                    "Model whose tokenizer measures inputs.prompt_file (default: the first run's model)");
    cmd->add_option("--replicates", a->replicates, "Bootstrap replicates: over the runs, or over the requests of a single run")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    cmd->add_option("--seed", a->seed, "Bootstrap seed")->check(seedNumber())->capture_default_str();
    cmd->add_flag("--save", a->save, "Store the selection with its runs and print its id");
    CLI::Option* exportDeploy = cmd->add_option("--export-deploy", a->exportDeploy,
                    "Write the recommended candidate's launch settings into DIR (created if missing): vllm.sh, "
                    "sglang.sh, llama-server.sh, modebench-serve.sh, profile.json, hpa.yaml (a Kubernetes "
                    "autoscaler) and README.md (each knob's option, and the knobs without one)")
        ->type_name("DIR");
    cmd->add_option("--deploy-candidate", a->deployCandidate,
                    "Export this candidate instead of the recommendation (needed when the selection recommends "
                    "none: no_clear_winner or none_feasible)")
        ->check(CLI::IsMember({"fast", "regular"}))
        ->type_name("fast|regular")
        ->needs(exportDeploy);
    cmd->add_flag("--json", a->json, "Print the result as JSON");
    cmd->callback([a] { runSelect(*a); });
}

} // namespace mb::cli
