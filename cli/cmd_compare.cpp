// `modebench-cli compare`: two profiles on the identical workload, a summary table and a JSON file.
#include "cli/command_util.h"
#include "cli/compare_sweep.h"
#include "cli/compare_table.h"
#include "cli/image_options.h"
#include "cli/plugin_options.h"

#ifdef MODEBENCH_HAVE_STORE
#include "db/sqlite_run_sink.h"
#endif
#include "engine/devices.h"
#include "engine/session.h"
#include "lab/atomic_file.h"
#include "lab/comparison.h"
#include "lab/environment.h"
#include "lab/remote_target.h"
#include "lab/run_config.h"
#include "lab/workload.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace mb::cli {

namespace {

struct CompareArgs {
    std::string model, modelB, profileA = "fast", profileB = "regular";
    std::string keyEnvA, keyEnvB; // remote candidates: variables holding their API keys
    std::string workload = "shared-prefix", prompts, jsonOut;
    int64_t requests = -1, groups = -1, perGroup = -1, prefixTokens = -1, suffixTokens = -1;
    int64_t outputTokens = -1, inputTokens = -1, warmup = -1;
    int concurrency = -1;
    double rate = -1, burstiness = -1; // -1: not given
    int64_t seed = -1;
    int maxTokens = 64;
    int threads = 1;
    std::string device;
    engine::SamplerParams sampling;
    bool interleave = false, noPrime = false, tokenTimes = false;
    double sloTtft = -1, sloE2e = -1;
    std::string db, name;            // the run store (empty: the default) and the run's name
    std::vector<std::string> tags;
    bool noStore = false;
    int repeat = 1;                  // the same comparison this many times, each its own stored run
    int precisionPrompts = 0;        // precision A/B after the run: prompts (0 = off)
    int64_t precisionGenTokens = 16; // and greedy reference tokens per prompt
    std::string sweep;               // "", "rates" or "concurrency"
    std::vector<double> sweepLevels; // explicit levels (empty: the defaults)
    int sweepPoints = 6;             // default rate levels
    PluginArgs plugins;              // output plugin chains
    ImageArgs images;                // vision encoders and synthetic images
};

// --sweep's options checked against the rest: the sweep sets the load itself.
lab::SweepOptions sweepOptions(const CompareArgs& a) {
    lab::SweepOptions o;
    o.kind = a.sweep == "rates" ? lab::SweepKind::Rates : lab::SweepKind::Concurrency;
    o.levels = a.sweepLevels;
    o.ratePoints = a.sweepPoints;
    if (a.repeat > 1) throw UsageError("--sweep and --repeat: a sweep stores one run per level; repeat it separately");
    if (a.concurrency > 0 || a.rate > 0)
        throw UsageError("--sweep sets the load at each level: no --concurrency or --rate (give --sweep-levels)");
    if (o.kind == lab::SweepKind::Concurrency && a.burstiness > 0)
        throw UsageError("--burstiness shapes open-loop arrivals: use it with --sweep rates");
    if (const std::string why = lab::validateSweep(o); !why.empty()) throw UsageError("--" + why);
    return o;
}

// Seed, warm-ups and arrivals, for synthetic and prompt-file workloads alike. --rate keeps
// a workload file's open-loop kind (gamma, ramp) and burstiness unless --burstiness says.
void applyCommonOptions(const CompareArgs& a, lab::WorkloadSpec& spec) {
    using Kind = lab::ArrivalSpec::Kind;
    if (a.warmup >= 0) spec.warmupRequests = static_cast<int32_t>(a.warmup);
    if (a.seed >= 0) spec.seed = static_cast<uint64_t>(a.seed);
    if (a.concurrency > 0) {
        spec.arrival.kind = Kind::Closed;
        spec.arrival.concurrency = a.concurrency;
    }
    if (a.rate > 0) {
        if (spec.arrival.kind == Kind::Closed) spec.arrival.kind = Kind::Poisson;
        spec.arrival.rate = a.rate;
    }
    if (a.burstiness > 0) {
        if (spec.arrival.kind == Kind::Closed)
            throw UsageError("--burstiness shapes an open loop: give --rate too (or a workload file with one)");
        spec.arrival.burstiness = a.burstiness;
        if (spec.arrival.kind == Kind::Poisson && a.burstiness != 1.0) spec.arrival.kind = Kind::Gamma;
    }
    if (const std::string why = spec.validate(); !why.empty()) throw UsageError("workload: " + why);
}

// --workload FILE is a workload spec and nothing else: a file that is not one (a JSONL
// prompt file, say) is refused in one line that points at --prompts, never run as prompts.
lab::WorkloadSpec workloadFileSpec(const std::string& path, std::istream& in) {
    try {
        return lab::parseWorkloadSpec(nlohmann::json::parse(in));
    } catch (const std::exception& e) {
        std::string why = e.what();
        if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
        throw UsageError("--workload " + path + ": not a workload spec (" + why +
                         "); to run a prompt file's prompts, give --prompts " + path);
    }
}

lab::WorkloadSpec workloadSpec(const CompareArgs& a) {
    lab::WorkloadSpec spec;
    if (auto b = lab::builtinWorkload(a.workload)) {
        spec = *b;
    } else {
        std::ifstream in(a.workload);
        if (!in) {
            std::string names;
            for (const auto& n : lab::builtinWorkloadNames()) names += (names.empty() ? "" : ", ") + n;
            throw UsageError("--workload '" + a.workload + "' is neither a built-in (" + names + ") nor a readable file");
        }
        spec = workloadFileSpec(a.workload, in);
    }
    auto fixed = [](int64_t n) {
        lab::LengthDist d;
        d.kind = lab::LengthDist::Kind::Fixed;
        d.a = static_cast<double>(n);
        d.min = 1;
        d.max = std::max<int64_t>(1, n);
        return d;
    };
    const bool shared = spec.sharedPrefix.groups > 0, turns = spec.multiTurn.conversations > 0;
    // Options that the workload's shape does not use are errors, not silently ignored.
    if (a.requests > 0 && shared)
        throw UsageError("--requests: the shared-prefix workload runs --groups x --per-group requests (now " +
                         std::to_string(spec.sharedPrefix.groups) + " x " + std::to_string(spec.sharedPrefix.perGroup) + ")");
    if (a.requests > 0 && turns)
        throw UsageError("--requests: the multi-turn workload runs conversations x turns requests (now " +
                         std::to_string(spec.multiTurn.conversations) + " x " + std::to_string(spec.multiTurn.turns) + ")");
    if (a.inputTokens > 0 && shared)
        throw UsageError("--input-tokens: shared-prefix prompts are --prefix-tokens + --suffix-tokens long");
    if (!shared && (a.groups > 0 || a.perGroup > 0 || a.prefixTokens > 0 || a.suffixTokens > 0))
        throw UsageError("--groups, --per-group, --prefix-tokens and --suffix-tokens apply to the shared-prefix workload");
    if (a.requests > 0) spec.requests = a.requests;
    if (a.groups > 0) spec.sharedPrefix.groups = static_cast<int32_t>(a.groups);
    if (a.perGroup > 0) spec.sharedPrefix.perGroup = static_cast<int32_t>(a.perGroup);
    if (a.prefixTokens > 0) spec.sharedPrefix.prefixTokens = a.prefixTokens;
    if (a.suffixTokens > 0) spec.sharedPrefix.suffixTokens = a.suffixTokens;
    if (a.outputTokens > 0) spec.output = fixed(a.outputTokens);
    if (a.inputTokens > 0) spec.input = fixed(a.inputTokens);
    // The stored spec says what runs: a shaped workload's count and lengths follow its shape.
    spec.requests = lab::measuredRequestCount(spec);
    if (shared) spec.input = fixed(spec.sharedPrefix.prefixTokens + spec.sharedPrefix.suffixTokens);
    applyCommonOptions(a, spec);
    return spec;
}

// A prompt file's workload: its prompts once each, in order, with the arrival options.
lab::WorkloadSpec promptFileSpec(const CompareArgs& a, const std::vector<lab::WorkloadRequest>& prompts) {
    if (a.requests > 0) throw UsageError("--requests: a prompt file runs each of its prompts once");
    if (a.groups > 0 || a.perGroup > 0 || a.prefixTokens > 0 || a.suffixTokens > 0 || a.inputTokens > 0)
        throw UsageError("--prompts: the prompt lengths come from the file (no --groups, --per-group, "
                         "--prefix-tokens, --suffix-tokens or --input-tokens)");
    lab::WorkloadSpec spec = lab::promptFileSpec(a.prompts, prompts, a.maxTokens);
    applyCommonOptions(a, spec);
    return spec;
}

std::string fmt(double v, int precision = 1) {
    std::ostringstream ss;
    ss << std::fixed << std::setprecision(precision) << v;
    return ss.str();
}

lab::RunInfo runInfo(const CompareArgs& a, const lab::WorkloadSpec& spec, const lab::ComparisonOptions& opts,
                     const std::vector<lab::Candidate>& candidates) {
    lab::RunInfo info;
    info.name = !a.name.empty() ? a.name
                                : candidates[0].profile.name + " vs " + candidates[1].profile.name + ", " + spec.name;
    info.tags = a.tags;
    info.workloadJson = lab::toJson(spec).dump();
    lab::RunConfig config;
    config.source = "cli";
    for (const auto& c : candidates)
        config.candidates.push_back({c.label, c.isRemote() ? c.remote : c.modelPath, c.profile.name, std::nullopt,
                                     c.hasPlugins() ? c.plugins->record() : nlohmann::json(),
                                     c.mmprojPath.empty() ? "" : std::filesystem::absolute(c.mmprojPath).string()});
    config.sampling = a.sampling;
    config.arrival = spec.arrival;
    config.interleave = a.interleave;
    config.slices = opts.slices;
    config.threads = a.threads;
    config.device = candidates[0].isRemote() ? candidates[1].device.id() : candidates[0].device.id();
    config.primers = static_cast<int64_t>(opts.primers.size());
    config.precisionPrompts = a.precisionPrompts;
    config.precisionGenTokens = a.precisionGenTokens;
    // Absolute, with --max-tokens: migrate's monitoring pass replays the same prompts from anywhere.
    if (!a.prompts.empty()) {
        config.promptFile = std::filesystem::absolute(a.prompts).string();
        config.maxTokens = a.maxTokens;
    }
    config.setSlo(opts.slo);
    config.repeats = a.repeat;
    info.configJson = lab::toJson(config).dump(-1, ' ', false, Json::error_handler_t::replace);
    info.environmentJson = lab::environmentJson(a.threads).dump(-1, ' ', false, Json::error_handler_t::replace);
    return info;
}

void runCompare(const CompareArgs& a) {
    requireReadableFile(a.model, "model file");
    if (!a.modelB.empty()) requireReadableFile(a.modelB, "model file (B)");
    if (const std::string why = a.sampling.validate(); !why.empty()) throw UsageError(why);
    // Checked before any work or output: a sweep's options against the rest.
    const std::optional<lab::SweepOptions> sweep =
        a.sweep.empty() ? std::nullopt : std::optional<lab::SweepOptions>(sweepOptions(a));
    const engine::Device device = resolveDeviceOption(a.device);
    std::vector<lab::Candidate> candidates;
    try {
        auto candidate = [&](const char* label, const std::string& model, const std::string& choice,
                             const std::string& keyEnv) {
            lab::Candidate c;
            c.label = label;
            c.modelPath = model;
            c.threads = a.threads;
            c.device = device;
            if (lab::RemoteSpec::isRemote(choice)) {
                try {
                    lab::RemoteSpec::parse(choice);
                } catch (const std::invalid_argument& e) {
                    throw UsageError(std::string("--") + label + ": " + e.what());
                }
                if (!keyEnv.empty() && (!std::getenv(keyEnv.c_str()) || !*std::getenv(keyEnv.c_str())))
                    throw UsageError(std::string("--") + label + "-api-key-env: the variable " + keyEnv + " is not set");
                c.remote = choice;
                c.apiKeyEnv = keyEnv;
                c.profile.name = "remote";
            } else {
                if (!keyEnv.empty()) throw UsageError(std::string("--") + label + "-api-key-env is for remote targets");
                c.profile = engine::Profile::load(choice);
            }
            return c;
        };
        candidates.push_back(candidate("a", a.model, a.profileA, a.keyEnvA));
        candidates.push_back(candidate("b", a.modelB.empty() ? a.model : a.modelB, a.profileB, a.keyEnvB));
    } catch (const engine::ProfileError& e) {
        throw UsageError(e.what());
    }
    // Chains load now (scripts checked against the store's approvals), before any work.
    if (!a.plugins.both.empty() || !a.plugins.a.empty() || !a.plugins.b.empty()) {
#ifdef MODEBENCH_HAVE_STORE
        const std::string approvals = databasePath(a.db);
#else
        const std::string approvals;
#endif
        for (auto& c : candidates) c.plugins = loadPluginChain(chainFileFor(a.plugins, c.label), approvals, a.plugins);
    }
    // The tokenizer decides the synthetic token range and tokenizes prompt files.
    const engine::GgufFile header = engine::GgufFile::open(a.model);
    const engine::Vocab vocab = engine::Vocab::fromGguf(header);
    if (!a.modelB.empty() && !candidates[1].isRemote()) {
        // Both candidates get the same token ids: B must read them as A does.
        const engine::Vocab vocabB = engine::Vocab::fromGguf(engine::GgufFile::open(a.modelB));
        if (vocabB.tokens != vocab.tokens)
            throw UsageError("--model-b: its vocabulary (" + std::to_string(vocabB.tokens.size()) +
                             " tokens) differs from --model's (" + std::to_string(vocab.tokens.size()) +
                             "), so the same requests cannot be given to both");
    }
    const auto tokenizer = engine::Tokenizer::create(vocab);
    lab::WorkloadSpec spec;
    std::vector<lab::WorkloadRequest> requests;
    if (!a.prompts.empty()) {
        requireReadableFile(a.prompts, "prompt file");
        applyImageOptions(a.images, spec, true);
        bool usedChat = false;
        std::string chatNote;
        try {
            // Chat messages in the model's template (one rendering for embedded and remote targets:
            // both get these ids).
            const engine::ChatTemplateChoice chat = engine::chatTemplateOf(header);
            const lab::ChatTokenize render = lab::chatTokenizeFor(*tokenizer, chat.family);
            requests = lab::loadPromptFile(
                a.prompts, [&](const std::string& text) { return tokenizer->encode(text, tokenizer->vocab().addBos); },
                a.maxTokens, [&](const std::vector<engine::ChatMessage>& messages) {
                    usedChat = true;
                    return render(messages);
                });
            chatNote = chat.note;
        } catch (const std::exception& e) {
            throw UsageError(e.what());
        }
        if (requests.empty()) throw UsageError(a.prompts + " holds no prompts");
        spec = promptFileSpec(a, requests);
        // The template note matters only when the file held messages, and follows the option checks.
        if (usedChat && !chatNote.empty()) std::cerr << "compare: note: " << chatNote << '\n';
        requests = lab::promptFileWorkload(spec, std::move(requests)); // arrivals, then warm-ups first
    } else {
        spec = workloadSpec(a);
        applyImageOptions(a.images, spec, false);
        requests = lab::buildWorkload(spec, lab::tokenSpaceFor(*tokenizer));
    }
    applyMmproj(a.images, candidates, requests);

    // Open the store once the arguments are checked and before minutes of work: a bad --db fails now.
    std::unique_ptr<lab::RunSink> sink;
    std::string dbPath;
    if (!a.noStore) {
#ifdef MODEBENCH_HAVE_STORE
        dbPath = databasePath(a.db);
        sink = std::make_unique<db::SqliteRunSink>(dbPath);
#else
        if (!a.db.empty()) throw UsageError("--db: this build has no run store (built with MODEBENCH_STORE=OFF)");
        std::cerr << "compare: this build has no run store (MODEBENCH_STORE=OFF): the run is not stored\n";
#endif
    }

    lab::ComparisonOptions opts;
    opts.run.arrival = spec.arrival;
    opts.run.sampling = a.sampling;
    opts.interleave = a.interleave;
    opts.slo.ttftMs = a.sloTtft;
    opts.slo.e2eMs = a.sloE2e;
    if (spec.sharedPrefix.groups > 0 && !a.noPrime)
        opts.primers = lab::prefixPrimers(requests, spec.sharedPrefix.prefixTokens);
    opts.precision.prompts = a.precisionPrompts;
    opts.precision.genTokens = a.precisionGenTokens;
    opts.precision.onProgress = [](const std::string& label, int64_t done, int64_t total) {
        std::cerr << "[" << label << "] precision A/B against f32: " << done << "/" << total << " prompts\n";
    };
    const bool tty = isatty(STDERR_FILENO);
    int64_t lastPrinted = -1;
    opts.onProgress = [&](const std::string& label, const lab::RunProgress& p) {
        const double eta = p.done > 0 ? p.elapsedMs / static_cast<double>(p.done) * static_cast<double>(p.total - p.done) : 0;
        const int width = 30;
        const int filled = p.total > 0 ? static_cast<int>(width * p.done / p.total) : 0;
        if (tty) {
            std::cerr << "\r[" << label << "] [" << std::string(static_cast<size_t>(filled), '#')
                      << std::string(static_cast<size_t>(width - filled), '.') << "] " << p.done << "/" << p.total
                      << "  " << fmt(p.elapsedMs / 1000, 1) << " s, ETA " << fmt(eta / 1000, 1) << " s   " << std::flush;
            if (p.done == p.total) std::cerr << '\n';
        } else if (p.total > 0 && (p.done * 10 / p.total != lastPrinted || p.done == p.total)) {
            lastPrinted = p.done * 10 / p.total;
            std::cerr << "[" << label << "] " << p.done << "/" << p.total << " requests, " << fmt(p.elapsedMs / 1000, 1)
                      << " s\n";
        }
    };
    const auto warmups = std::count_if(requests.begin(), requests.end(), [](const auto& r) { return r.warmup; });
    std::cerr << "compare: " << requests.size() - static_cast<size_t>(warmups) << " requests"
              << (warmups > 0 ? " + " + std::to_string(warmups) + " warm-up" : std::string()) << " (" << spec.name << ", seed " << spec.seed << ")"
              << (opts.primers.empty() ? "" : ", " + std::to_string(opts.primers.size()) + " prefix primers")
              << "\n  A: " << lab::describeCandidate(candidates[0]) << "\n  B: " << lab::describeCandidate(candidates[1])
              << '\n';
    if (sink) {
        opts.sink = sink.get();
        opts.runInfo = runInfo(a, spec, opts, candidates);
    }
    // Repeats replay the same requests; the selection reads their run-to-run variation.
    std::vector<int64_t> runIds;
    std::vector<lab::CandidateResult> results;
    const std::string baseName = opts.runInfo.name;
    if (sweep) {
        results = runCompareSweep(candidates, requests, opts, *sweep, spec.seed, sink ? dbPath : std::string());
        if (results.empty()) throw RunFailed("the sweep ran no level");
    }
    for (int k = 1; k <= a.repeat && !sweep; ++k) {
        if (a.repeat > 1) {
            std::cerr << "compare: repeat " << k << " of " << a.repeat << '\n';
            opts.runInfo.name = baseName + " (repeat " + std::to_string(k) + " of " + std::to_string(a.repeat) + ")";
        }
        int64_t runId = 0;
        results = lab::runComparison(candidates, requests, opts, &runId);
        runIds.push_back(runId);
    }
    if (sink) {
        sink->flush();
        sink.reset(); // joins the store thread; everything is committed
        std::string select;
        for (int64_t id : runIds) {
            std::cerr << "compare: stored run " << id << " in " << dbPath << '\n';
            select += " --run " + std::to_string(id);
        }
        if (runIds.size() > 1)
            std::cerr << "compare: select from all " << runIds.size() << " repeats: modebench-cli select --db " << dbPath
                      << select << " --requirements FILE\n";
    }
    const bool toStdout = a.jsonOut == "-"; // the JSON on stdout, the table on stderr
    if (!sweep) printTable(results, toStdout ? std::cerr : std::cout); // a sweep printed its levels
    const bool noneOk = reportFailures(results);
    if (!a.jsonOut.empty()) {
        Json j;
        j["model"] = a.model;
        j["workload"] = lab::toJson(spec);
        j["sampling"] = {{"temperature", a.sampling.temperature}, {"top_k", a.sampling.topK},
                         {"top_p", a.sampling.topP}, {"min_p", a.sampling.minP}, {"seed", a.sampling.seed}};
        j["interleave"] = a.interleave;
        j["a"] = lab::toJson(results[0], a.tokenTimes);
        j["b"] = lab::toJson(results[1], a.tokenTimes);
        const std::string text = j.dump(2, ' ', false, Json::error_handler_t::replace) + '\n';
        if (toStdout) {
            std::cout << text << std::flush;
        } else {
            try {
                lab::writeFileAtomically(a.jsonOut, text); // whole or not at all
            } catch (const lab::AtomicFileError& e) {
                throw UsageError(e.what());
            }
            std::cerr << "compare: wrote " << a.jsonOut << '\n';
        }
    }
    if (noneOk) throw RunFailed("a candidate had no successful request (reasons above)");
}

} // namespace

void addCompareCommand(CLI::App& root) {
    auto a = std::make_shared<CompareArgs>();
    a->sampling.temperature = 0.0f; // comparisons default to greedy: identical work on both sides
    CLI::App* cmd = root.add_subcommand("compare", "Run two serving profiles on the identical workload and compare");
    cmd->footer("Exit status: 0 when the run finished, 1 when it finished but a candidate had no successful request "
                "(the reasons are printed), 2 on bad input.");
    cmd->add_option("--model,-m", a->model, "GGUF model file")->required();
    cmd->add_option("--model-b", a->modelB, "A different model file for candidate B (default: --model)");
    cmd->add_option("--a", a->profileA,
                    "Candidate A: fast, regular, a JSON profile file, or remote:http://HOST:PORT[/v1][#MODEL] "
                    "(an OpenAI-compatible server; --model then only supplies the tokenizer)")
        ->capture_default_str();
    cmd->add_option("--b", a->profileB, "Candidate B: as --a")->capture_default_str();
    cmd->add_option("--a-api-key-env", a->keyEnvA, "Remote A: the environment variable holding its API key");
    cmd->add_option("--b-api-key-env", a->keyEnvB, "Remote B: the environment variable holding its API key");
    cmd->add_option("--workload,-w", a->workload, "shared-prefix, chat, long-context, multi-turn, or a JSON workload file")
        ->capture_default_str();
    cmd->add_option("--prompts", a->prompts, "Prompt file instead of a synthetic workload: JSONL (.jsonl) or plain "
                                             "text (.txt, one prompt a line); another name is JSONL when it starts with {");
    cmd->add_option("--max-tokens,-n", a->maxTokens, "Output tokens for prompt-file requests without max_tokens")
        ->check(CLI::Range(1, 1 << 20))->capture_default_str();
    cmd->add_option("--requests", a->requests, "Requests (chat, long-context, a workload file; shared-prefix has "
                                               "--groups x --per-group)")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    auto* conc = cmd->add_option("--concurrency,-c", a->concurrency, "Closed loop: requests kept in flight")
                     ->check(CLI::Range(1, 4096));
    auto* rate = cmd->add_option("--rate", a->rate, "Open loop: arrivals per second (Poisson, or the workload file's "
                                 "open-loop kind)")->check(numberIn(0.001, 1e6));
    conc->excludes(rate);
    rate->excludes(conc);
    cmd->add_option("--burstiness", a->burstiness, "Open loop: gamma shape of the gaps (1 = Poisson, < 1 burstier)")
        ->check(numberIn(0.001, 1000));
    cmd->add_option("--groups", a->groups, "shared-prefix: prefix groups")->check(CLI::Range(int64_t{1}, int64_t{4096}));
    cmd->add_option("--per-group", a->perGroup, "shared-prefix: prompts per group")->check(CLI::Range(int64_t{1}, int64_t{4096}));
    constexpr int64_t kMaxLength = int64_t{1} << 24; // profiles' max_context bound
    cmd->add_option("--prefix-tokens", a->prefixTokens, "shared-prefix: shared prefix length")
        ->check(CLI::Range(int64_t{1}, kMaxLength));
    cmd->add_option("--suffix-tokens", a->suffixTokens, "shared-prefix: distinct suffix length")
        ->check(CLI::Range(int64_t{1}, kMaxLength));
    cmd->add_option("--input-tokens", a->inputTokens, "Fixed prompt length (chat, long-context, a workload file)")
        ->check(CLI::Range(int64_t{1}, kMaxLength));
    cmd->add_option("--output-tokens", a->outputTokens, "Fixed output length")->check(CLI::Range(int64_t{1}, kMaxLength));
    cmd->add_option("--warmup", a->warmup, "Unrecorded warm-up requests (a prompt file's: its prompts from the first)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
    cmd->add_flag("--no-prime", a->noPrime, "shared-prefix: skip the unrecorded one-per-group prefix primers");
    cmd->add_option("--seed", a->seed, "Workload seed (default: the workload's)")->check(seedNumber());
    addThreadsOption(*cmd, a->threads);
    addDeviceOption(*cmd, a->device);
    cmd->add_option("--temperature", a->sampling.temperature, "Sampling temperature; 0 = greedy")->capture_default_str();
    cmd->add_option("--top-k", a->sampling.topK, "Top-k; 0 = off")->capture_default_str();
    cmd->add_option("--top-p", a->sampling.topP, "Top-p; 1 = off")->capture_default_str();
    cmd->add_option("--min-p", a->sampling.minP, "Min-p; 0 = off")->capture_default_str();
    cmd->add_option("--sample-seed", a->sampling.seed, "Sampler seed")->check(seedNumber())->capture_default_str();
    cmd->add_flag("--interleave", a->interleave, "Alternate A and B over slices of the workload");
    addPluginOptions(*cmd, a->plugins, true);
    addImageOptions(*cmd, a->images);
    cmd->add_option("--precision-check", a->precisionPrompts,
                    "After the timed run, compare each candidate's precision with the model in F32 on this many of "
                    "the workload's prompts (greedy agreement, mean KL, perplexity); 0 = off")
        ->check(CLI::Range(0, 100000))->capture_default_str();
    cmd->add_option("--precision-gen-tokens", a->precisionGenTokens,
                    "Precision check: greedy reference tokens per prompt")
        ->check(CLI::Range(int64_t{1}, int64_t{4096}))->capture_default_str();
    cmd->add_option("--slo-ttft-ms", a->sloTtft, "TTFT SLO for goodput")->check(positiveUpTo(1e9));
    cmd->add_option("--slo-e2e-ms", a->sloE2e, "End-to-end SLO for goodput")->check(positiveUpTo(1e9));
    cmd->add_option("--json", a->jsonOut,
                    "Write {\"a\": ..., \"b\": ...} with summaries and every request here (- : stdout, the table "
                    "then goes to stderr)");
    cmd->add_flag("--token-times", a->tokenTimes, "Include each token's time in the JSON");
    auto* dbOpt = addDatabaseOption(*cmd, a->db);
    cmd->add_option("--repeat", a->repeat,
                    "Run the comparison N times, each stored as its own run, so that select measures run-to-run "
                    "variation (the table and --json show the last)")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    CLI::Option* sweepOpt = cmd->add_option("--sweep", a->sweep,
                    "Capacity sweep: run the comparison at rising load, each level stored as its own run for "
                    "select's capacity figures: concurrency (closed loops at 1, 2, 4, ... 64) or rates (open loops "
                    "after a concurrency-1 probe, 0.5x the slower's rate to 4x the faster's); stops once both "
                    "candidates are saturated")
        ->check(CLI::IsMember({"rates", "concurrency"}))
        ->type_name("rates|concurrency");
    cmd->add_option("--sweep-levels", a->sweepLevels,
                    "The sweep's levels instead of the defaults, ascending: requests in flight, or requests/s")
        ->delimiter(',')
        ->type_name("L1,L2,...")
        ->needs(sweepOpt);
    cmd->add_option("--sweep-points", a->sweepPoints, "Rate sweep: how many default rate levels")
        ->check(CLI::Range(2, 50))
        ->needs(sweepOpt)
        ->capture_default_str();
    cmd->add_option("--name", a->name, "Name of the stored run (default: \"A vs B, workload\")");
    cmd->add_option("--tag", a->tags, "Tag the stored run (repeatable)")->allow_extra_args(false);
    cmd->add_flag("--no-store", a->noStore, "Do not record the run in the store")->excludes(dbOpt);
    cmd->callback([a] { runCompare(*a); });
}

} // namespace mb::cli
