// `modebench-cli migrate`: walk the migration flowchart (PRODUCT.md §7) of a saved selection, for real.
#include "cli/command_util.h"
#include "cli/selection_inputs.h"

#include "db/sqlite_run_sink.h"
#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "lab/comparison.h"
#include "lab/migration.h"
#include "lab/migration_warmup.h"
#include "lab/requirements.h"
#include "lab/run_config.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

namespace mb::cli {

namespace {

struct MigrateArgs {
    std::string db, prompts, clientStreams; // clientStreams: "", "yes" or "no"
    int64_t selection = 0;
    int threads = 1;
    bool json = false, restart = false;
};

// The fast candidate of a run: its model file and stored profile.
const lab::StoredCandidate& fastCandidate(const lab::StoredRun& run) {
    for (const auto& c : run.candidates)
        if (lab::modeOfProfile(c.info.profileJson) == lab::Mode::Fast) return c;
    throw UsageError("run " + std::to_string(run.id) + " has no fast-mode candidate to migrate to");
}

// The stored fast profile with the walk-through's current batching knobs.
engine::Profile profileWithKnobs(const std::string& profileJson, const lab::BatchingKnobs& k) {
    return engine::Profile::fromJson(lab::profileWithBatching(profileJson, k));
}

void runMigrate(const MigrateArgs& a) {
    db::RunStore store = openExistingStore(a.db);
    const db::StoredSelection sel = store.getSelection(a.selection);
    if (sel.runIds.empty()) throw UsageError("selection " + std::to_string(a.selection) + " names no run");
    const lab::Requirements req = lab::parseRequirements(nlohmann::json::parse(sel.requirementsJson));
    const lab::SelectionResult result = lab::selectionResultFromJson(nlohmann::json::parse(sel.resultJson));
    const auto runs = loadRuns(store, {sel.runIds.front()});
    const lab::StoredCandidate& fast = fastCandidate(runs.front());
    const std::string model = fast.info.modelPath;
    requireReadableFile(model, "the fast candidate's model file");
    const auto tokenizer = engine::Tokenizer::create(engine::Vocab::fromGguf(engine::GgufFile::open(model)));
    auto tokenize = [&](const std::string& t) { return tokenizer->encode(t, tokenizer->vocab().addBos); };
    std::string prompts = !a.prompts.empty() ? a.prompts : req.inputs.promptFile;
    // The run's own workload, rebuilt once: D primes it without a prompt corpus, F replays it.
    std::optional<lab::RunReplay> replay;
    auto runReplay = [&]() -> const lab::RunReplay& {
        if (!replay) replay = lab::replayRun(runs.front(), prompts, tokenize, lab::tokenSpaceFor(*tokenizer));
        return *replay;
    };

    lab::MigrationState s = !sel.migrationJson.empty() && !a.restart
                                ? lab::migrationFromJson(nlohmann::json::parse(sel.migrationJson))
                                : lab::startMigration(result, req, fast.info.profileJson);
    auto save = [&] { store.setSelectionMigration(sel.id, lab::toJson(s).dump()); };
    if (!a.clientStreams.empty()) { // the checklist's question, answered (also on a finished walk-through)
        s.checklist.clientStreams = a.clientStreams == "yes";
        save();
    }
    auto say = [&](const std::string& what) {
        if (!a.json) std::cerr << "migrate: " << lab::nodeName(s.node) << " (" << lab::nodeTitle(s.node) << "): " << what
                               << '\n';
    };
    const std::string dbPath = store.path();
    for (int guard = 0; guard < 32 && !s.finished(); ++guard) {
        switch (s.node) {
        case lab::MigrationNode::A: {
            std::vector<int64_t> lengths;
            if (!prompts.empty()) {
                requireReadableFile(prompts, "prompt file");
                for (const auto& r : lab::loadPromptFile(prompts, tokenize, 1))
                    lengths.push_back(static_cast<int64_t>(r.prompt.size()));
            } else { // the run's own prompts: per workload index, the longest any candidate saw
                std::map<uint64_t, int64_t> byIndex; // (truncation undone; once per prompt, not per candidate)
                for (const auto& c : runs.front().candidates)
                    for (const auto& r : c.requests) {
                        int64_t& l = byIndex[r.id];
                        l = std::max(l, r.promptTokens + r.truncatedTokens);
                    }
                for (const auto& [index, l] : byIndex) lengths.push_back(l);
            }
            if (lengths.empty()) throw UsageError("no prompts to assess (give --prompts FILE)");
            lab::assessContext(s, lab::promptLengthHistogram(lengths, s.contextCap));
            break;
        }
        case lab::MigrationNode::D: {
            // The prompt corpus, else the run's own prompts: its prefix primers (one per
            // shared-prefix group) when it had them, else every measured prompt.
            // Requests with images are primed with them, through the candidate's own mmproj.
            std::vector<lab::WorkloadRequest> prime;
            if (!prompts.empty()) {
                requireReadableFile(prompts, "prompt file");
                prime = lab::loadPromptFile(prompts, tokenize, 1);
            } else {
                try {
                    prime = lab::warmupPrompts(runReplay());
                } catch (const lab::MigrationError& e) {
                    save();
                    throw UsageError(std::string("warm-up (D): ") + e.what());
                }
            }
            lab::recordWarmup(s, lab::runWarmup(model, profileWithKnobs(fast.info.profileJson, s.batching), prime,
                                                lab::candidateMmproj(runs.front(), fast.info.label),
                                                {.threads = a.threads}));
            if (s.node == lab::MigrationNode::D) { // the check failed: say why and stop here
                save();
                throw UsageError("warm-up check failed: " + s.lastNote);
            }
            break;
        }
        case lab::MigrationNode::E: lab::enableFast(s); break;
        case lab::MigrationNode::F: {
            // The run's own workload (its prompt file, or its synthetic spec rebuilt) on the
            // fast candidate alone, stored as its own run.
            const lab::RunReplay* r = nullptr;
            try {
                r = &runReplay();
            } catch (const lab::MigrationError& e) {
                save();
                throw UsageError(std::string("monitoring (F): ") + e.what());
            }
            const lab::WorkloadSpec& spec = r->spec;
            say("replaying " + r->source);
            lab::Candidate c{"a", model, profileWithKnobs(fast.info.profileJson, s.batching), a.threads};
            db::SqliteRunSink sink(dbPath);
            lab::ComparisonOptions opts;
            opts.run.arrival = spec.arrival;
            opts.run.sampling.temperature = 0;
            opts.primers = r->primers;
            opts.sink = &sink;
            opts.runInfo.name = "migration monitoring, selection " + std::to_string(sel.id) + ", pass " +
                                std::to_string(s.monitoring.size() + 1);
            opts.runInfo.tags = {"migration"};
            opts.runInfo.workloadJson = lab::toJson(spec).dump();
            lab::RunConfig config;
            config.source = "migrate";
            config.candidates = {{c.label, c.modelPath, c.profile.name, std::nullopt}};
            config.sampling = opts.run.sampling;
            config.arrival = spec.arrival;
            config.threads = a.threads;
            config.primers = static_cast<int64_t>(r->primers.size());
            config.promptFile = r->promptFile;
            config.maxTokens = r->maxTokens;
            config.replaysRun = runs.front().id;
            opts.runInfo.configJson = lab::toJson(config).dump(-1, ' ', false, Json::error_handler_t::replace);
            opts.runInfo.environmentJson = "{}";
            int64_t runId = 0;
            const auto results = lab::runComparison({c}, r->requests, opts, &runId);
            lab::recordMonitoring(s, lab::monitorFromSummary(results.front().summary, req, runId), req);
            break;
        }
        case lab::MigrationNode::I: lab::applyBatching(s); break;
        default: break;
        }
        say(s.lastNote);
        save();
    }
    if (a.json) {
        Json j = lab::toJson(s);
        j["selection_id"] = sel.id;
        printJson(j);
    } else {
        std::cout << "selection " << sel.id << ": " << lab::nodeName(s.node) << " (" << lab::nodeTitle(s.node) << ")"
                  << (s.rolledBack ? ", rolled back: " + s.rollbackReason : "") << "; path";
        for (auto n : s.path) std::cout << ' ' << lab::nodeName(n);
        std::cout << "; " << s.adjustments << " batching adjustment(s); saved with the selection\n";
        std::cout << "checklist: client streams "
                  << (s.checklist.clientStreams ? (*s.checklist.clientStreams ? "yes" : "no")
                                                : "NOT ANSWERED (give --client-streams yes|no)")
                  << "; warm-up plan: " << s.checklist.warmupPlan << "; rollback plan: " << s.checklist.rollbackPlan
                  << '\n';
    }
}

} // namespace

void addMigrateCommand(CLI::App& root) {
    auto a = std::make_shared<MigrateArgs>();
    CLI::App* cmd = root.add_subcommand(
        "migrate", "Walk the migration flowchart of a saved selection for real: assess the prompts (A), warm a fast "
                   "session up and check that a model update is refused (D), enable fast mode (E), monitor with "
                   "the run's workload (F), check the SLOs (G), adjust batching and monitor again (I), until done "
                   "(H) or rolled back to regular mode (C); the state is saved with the selection");
    addDatabaseOption(*cmd, a->db);
    cmd->add_option("--selection", a->selection, "Saved selection id (modebench-cli select --save)")->required();
    cmd->add_option("--prompts", a->prompts,
                    "Prompt corpus for A and the warm-up (default: the requirements' prompt file, else the run's "
                    "prompts: their lengths for A; for D its shared prefixes, else its prompts); F replays the "
                    "run's own workload and reads this file only when the run's prompt file cannot be read");
    cmd->add_option("--client-streams", a->clientStreams,
                    "Checklist: does the client stream responses? (yes|no; saved with the walk-through)")
        ->check(CLI::IsMember({"yes", "no"}));
    cmd->add_flag("--restart", a->restart, "Start again at A instead of continuing a saved walk-through");
    addThreadsOption(*cmd, a->threads);
    cmd->add_flag("--json", a->json, "Print the final state as JSON");
    cmd->callback([a] { runMigrate(*a); });
}

} // namespace mb::cli
