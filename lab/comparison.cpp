// Side-by-side runs of candidates on one workload.
#include "lab/comparison.h"

#include "engine/gguf.h"
#include "engine/kv_cache.h"
#include "engine/session.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "lab/image_target.h"
#include "lab/remote_target.h"
#include "plugins/sha256.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <thread>

namespace mb::lab {

std::vector<std::vector<WorkloadRequest>> interleaveSlices(const std::vector<WorkloadRequest>& measured, int slices) {
    slices = std::max(1, slices);
    // Units in arrival order: each request, or each conversation (all its turns share the
    // conversation's arrival time); builders number both in that order.
    auto unitOf = [&](size_t k) {
        return measured[k].conversation >= 0 ? measured[k].conversation : static_cast<int64_t>(k);
    };
    int64_t units = 0;
    for (size_t k = 0; k < measured.size(); ++k) units = std::max(units, unitOf(k) + 1);
    std::vector<std::vector<WorkloadRequest>> parts(static_cast<size_t>(slices));
    for (size_t k = 0; k < measured.size(); ++k)
        parts[static_cast<size_t>(unitOf(k) * slices / std::max<int64_t>(units, 1))].push_back(measured[k]);
    // Each part starts where the one before it ended: its first request keeps the gap after
    // the previous part's last arrival, so the parts' spans add up to the workload's.
    double previousLast = 0;
    for (auto& part : parts) {
        if (part.empty()) continue;
        double last = part.front().arrivalMs;
        for (const auto& r : part) last = std::max(last, r.arrivalMs);
        for (auto& r : part) r.arrivalMs -= previousLast;
        previousLast = last;
    }
    return parts;
}

std::vector<WorkloadRequest> prefixPrimers(const std::vector<WorkloadRequest>& requests, int64_t prefixTokens) {
    std::vector<WorkloadRequest> primers;
    std::vector<int64_t> seen;
    for (const auto& r : requests) {
        if (r.group < 0 || r.warmup || std::find(seen.begin(), seen.end(), r.group) != seen.end()) continue;
        seen.push_back(r.group);
        WorkloadRequest p = r;
        p.prompt.resize(std::min(p.prompt.size(), static_cast<size_t>(prefixTokens + 1)));
        p.maxTokens = 1;
        p.warmup = true;
        primers.push_back(std::move(p));
    }
    return primers;
}

TokenSpace tokenSpaceFor(const engine::Tokenizer& tokenizer) {
    const auto& kinds = tokenizer.vocab().kinds;
    const auto n = static_cast<int32_t>(tokenizer.size());
    TokenSpace space;
    space.bos = tokenizer.bos();
    int32_t first = -1, last = -1;
    for (int32_t i = 0; i < n; ++i) {
        const bool normal = kinds.empty() || kinds[static_cast<size_t>(i)] == engine::TokenKind::Normal;
        if (!normal) continue;
        if (first < 0) first = i;
        last = i;
    }
    space.firstId = first < 0 ? 0 : first;
    space.endId = last < 0 ? n : last + 1;
    return space;
}

namespace {

struct Live {
    std::unique_ptr<Target> target;
    double startupMs = 0;
};

} // namespace

namespace {
std::string describeTarget(const Candidate& c) {
    if (c.isRemote()) {
        try {
            return "remote " + RemoteSpec::parse(c.remote).url();
        } catch (const std::exception&) {
            return "remote " + c.remote;
        }
    }
    const engine::Profile& p = c.profile;
    const auto storage = c.device.kind == engine::Device::Kind::Cpu ? engine::KvStorage::Host : engine::KvStorage::Device;
    const bool halfKv = engine::kvTypeFor(p.precision, storage) == engine::KvType::F16;
    const std::string batching = p.batching == engine::BatchingPolicy::Off
                                     ? "batching off"
                                     : "batching dynamic (up to " + std::to_string(p.maxBatch) + " sequences)";
    return "embedded " + p.name + " on " + c.device.id() + ", " + std::to_string(c.threads) + " threads: " +
           engine::precisionName(p.precision) + " precision (K/V " + (halfKv ? "F16" : "F32") + "), " + batching +
           ", prefix cache " + (p.prefixCache ? "on" : "off");
}
} // namespace

std::string describeCandidate(const Candidate& c) {
    std::string d = describeTarget(c);
    if (!c.mmprojPath.empty()) d += "; vision encoder " + std::filesystem::path(c.mmprojPath).filename().string();
    if (c.hasPlugins()) d += "; plugins " + c.plugins->describe();
    return d;
}

namespace {

// The candidate's vision encoder in front of its session, with every file image of
// `requests` decoded now (a bad one fails here, before anything runs).
std::unique_ptr<Target> withImages(const Candidate& c, std::unique_ptr<engine::Session> session,
                                   const std::vector<WorkloadRequest>& requests) {
    auto embedded = std::make_unique<EmbeddedTarget>(std::move(session), describeCandidate(c));
    if (c.mmprojPath.empty()) return embedded;
    const int64_t dim = embedded->session().config().dim;
    auto clip = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(c.mmprojPath));
    auto target = std::make_unique<ImageTarget>(std::move(embedded), std::move(clip), dim, c.threads, c.device);
    target->prepare(requests);
    return target;
}

Live startCandidate(const Candidate& c, const std::vector<WorkloadRequest>& requests) {
    const auto t0 = std::chrono::steady_clock::now();
    if (c.isRemote()) {
        RemoteSpec spec = RemoteSpec::parse(c.remote);
        spec.apiKeyEnv = c.apiKeyEnv;
        auto remote = std::make_unique<RemoteTarget>(spec, describeCandidate(c));
        if (spec.textPrompts) {
            std::shared_ptr<const engine::Tokenizer> tok =
                engine::Tokenizer::create(engine::Vocab::fromGguf(engine::GgufFile::open(c.modelPath)));
            remote->setPromptDecoder([tok](const std::vector<int32_t>& ids) { return tok->decode(ids); });
        }
        return Live{std::move(remote), 0};
    }
    auto session = engine::Session::start(c.modelPath, c.profile, {.threads = c.threads, .device = c.device});
    Live live{withImages(c, std::move(session), requests), 0};
    live.target->waitIdle();
    live.startupMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return live;
}

RunOptions withCallbacks(const ComparisonOptions& o, const std::string& label, int64_t offset, int64_t total) {
    RunOptions r = o.run;
    if (o.onProgress)
        r.onProgress = [&o, label, offset, total](const RunProgress& p) {
            o.onProgress(label, RunProgress{offset + p.done, total, p.elapsedMs});
        };
    if (o.onEvent)
        r.onEvent = [&o, label](const RequestRecord& soFar, const engine::RequestEvent& e) { o.onEvent(label, soFar, e); };
    if (o.onRecord) r.onRecord = [&o, label](const RequestRecord& rec) { o.onRecord(label, rec); };
    if (o.onSample) r.onSample = [&o, label](const StatsSample& s) { o.onSample(label, s); };
    return r;
}

void append(RunResult& into, RunResult&& part, double shiftMs) {
    for (auto& r : part.records) {
        for (double* t : {&r.submittedMs, &r.scheduledMs, &r.firstTokenMs, &r.finishedMs})
            if (*t >= 0) *t += shiftMs;
        for (double& t : r.tokenTimesMs) t += shiftMs;
        for (double& t : r.outputTimesMs) t += shiftMs;
        into.records.push_back(std::move(r));
    }
    // Counters continue from the previous slice's last sample.
    const StatsSample base = into.samples.empty() ? StatsSample{} : into.samples.back();
    for (auto s : part.samples) {
        s.timeMs += shiftMs;
        s.prefixQueries += base.prefixQueries;
        s.prefixHits += base.prefixHits;
        into.samples.push_back(s);
    }
    into.cancelled = into.cancelled || part.cancelled;
    into.warmupMs += part.warmupMs;
}

} // namespace

CandidateInfo candidateInfo(const Candidate& c, bool hashModel) {
    CandidateInfo info;
    info.label = c.label;
    if (c.isRemote()) {
        // The URL is stored; the API key never is (only the name of its variable).
        const RemoteSpec spec = RemoteSpec::parse(c.remote);
        info.targetKind = "remote";
        info.modelPath = spec.url();
        info.shapeJson = "{}";
        info.profileJson = nlohmann::ordered_json{{"name", "remote"},
                                                  {"url", spec.url()},
                                                  {"api_key_env", c.apiKeyEnv}}.dump();
        return info;
    }
    info.targetKind = "embedded";
    info.modelPath = c.modelPath;
    std::error_code ec;
    info.modelBytes = std::filesystem::file_size(c.modelPath, ec);
    if (hashModel) info.modelSha256 = plugins::sha256File(c.modelPath);
    try {
        const engine::GgufFile f = engine::GgufFile::open(c.modelPath);
        const engine::ModelConfig cfg = engine::ModelConfig::fromGguf(f);
        nlohmann::ordered_json shape{{"dim", cfg.dim},          {"layers", cfg.layers},   {"heads", cfg.heads},
                                     {"kv_heads", cfg.kvHeads}, {"ffn_dim", cfg.ffnDim},  {"vocab_size", cfg.vocabSize},
                                     {"context_length", cfg.contextLength}};
        info.shapeJson = shape.dump();
    } catch (const std::exception&) {
        info.shapeJson = "{}";
    }
    info.profileJson = c.profile.toJson();
    return info;
}

namespace {
std::vector<CandidateResult> runAll(const std::vector<Candidate>& candidates,
                                    const std::vector<WorkloadRequest>& requests, const ComparisonOptions& options,
                                    const std::vector<int64_t>& storeIds);

// ComparisonOptions::precision for every embedded candidate of a run that was not
// cancelled; candidates sharing a model file and precision share one check.
void addPrecisionChecks(std::vector<CandidateResult>& results, const std::vector<WorkloadRequest>& requests,
                        const ComparisonOptions& options) {
    const PrecisionCheckOptions& po = options.precision;
    if (po.prompts <= 0) return;
    const auto cancelled = [&] { return options.run.cancel && options.run.cancel->load(); };
    for (size_t i = 0; i < results.size(); ++i) {
        CandidateResult& r = results[i];
        if (r.candidate.isRemote() || r.run.cancelled || cancelled()) continue;
        for (size_t k = 0; k < i && !r.summary.precision; ++k)
            if (results[k].summary.precision && results[k].candidate.modelPath == r.candidate.modelPath &&
                results[k].candidate.profile.precision == r.candidate.profile.precision)
                r.summary.precision = results[k].summary.precision;
        if (r.summary.precision) continue;
        const engine::GgufFile header = engine::GgufFile::open(r.candidate.modelPath);
        const int64_t context = engine::ModelConfig::fromGguf(header).contextLength;
        const auto prompts = precisionPrompts(requests, po.prompts, po.maxPromptTokens, po.genTokens, context);
        if (prompts.empty()) continue;
        PrecisionCheckOptions opts = po;
        if (!opts.cancel) opts.cancel = options.run.cancel;
        r.summary.precision = checkPrecision(r.candidate.modelPath, r.candidate.profile.precision, prompts,
                                             r.candidate.threads, opts, r.candidate.label);
    }
}
} // namespace

std::string imagesRefused(const std::vector<Candidate>& candidates, const std::vector<WorkloadRequest>& requests) {
    const bool images = std::any_of(requests.begin(), requests.end(), [](const WorkloadRequest& r) { return !r.images.empty(); });
    if (!images) return {};
    for (const Candidate& c : candidates) {
        if (c.isRemote())
            return "candidate " + c.label + ": the workload's requests carry images, and remote candidates take none yet";
        if (c.mmprojPath.empty())
            return "candidate " + c.label + ": the workload's requests carry images; give it a vision encoder (--mmproj FILE)";
    }
    return {};
}

std::vector<CandidateResult> runComparison(const std::vector<Candidate>& candidates,
                                           const std::vector<WorkloadRequest>& requests,
                                           const ComparisonOptions& options, int64_t* runId) {
    if (const std::string why = imagesRefused(candidates, requests); !why.empty()) throw std::invalid_argument(why);
    RunSink* sink = options.sink;
    int64_t id = 0;
    std::vector<int64_t> storeIds(candidates.size(), 0);
    if (sink) {
        id = sink->beginRun(options.runInfo);
        for (size_t i = 0; i < candidates.size(); ++i) storeIds[i] = sink->addCandidate(id, candidateInfo(candidates[i], true));
    }
    if (runId) *runId = id;
    std::vector<CandidateResult> results;
    try {
        results = runAll(candidates, requests, options, storeIds);
        addPrecisionChecks(results, requests, options);
    } catch (const std::exception& e) {
        if (sink) {
            sink->finishRun(id, RunStatus::Failed, nlohmann::ordered_json{{"error", e.what()}}.dump());
            sink->flush();
        }
        throw;
    }
    if (sink) {
        bool cancelled = false;
        nlohmann::ordered_json all;
        for (const auto& r : results) {
            cancelled = cancelled || r.run.cancelled;
            auto summary = toJson(r.summary);
            // The KV pool's size, when the session has a fixed pool: capacity reads KV use as its share.
            if (r.stats.kvPooled) summary["kv_bytes_capacity"] = r.stats.kvBytesCapacity;
            std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> series;
            for (const auto& [name, points] : summary["series"].items()) {
                std::vector<std::pair<double, double>> pts;
                for (const auto& p : points) pts.emplace_back(p[0].get<double>(), p[1].get<double>());
                series.emplace_back(name, std::move(pts));
            }
            sink->finishCandidate(r.storeId, summary.dump(), series);
            all[r.candidate.label] = summary;
            all[r.candidate.label].erase("series");
        }
        sink->finishRun(id, cancelled ? RunStatus::Interrupted : RunStatus::Complete, all.dump());
        sink->flush();
    }
    return results;
}

namespace {

std::vector<CandidateResult> runAll(const std::vector<Candidate>& candidates,
                                    const std::vector<WorkloadRequest>& requests, const ComparisonOptions& options,
                                    const std::vector<int64_t>& storeIds) {
    std::vector<CandidateResult> results(candidates.size());
    auto runOptions = [&](size_t i, int64_t offset, int64_t total) {
        RunOptions r = withCallbacks(options, candidates[i].label, offset, total);
        r.sink = options.sink;
        r.candidateId = storeIds[i];
        if (candidates[i].sampling) r.sampling = *candidates[i].sampling;
        r.plugins = candidates[i].plugins.get();
        r.mode = candidates[i].mode();
        return r;
    };
    std::vector<WorkloadRequest> measured;
    for (const auto& r : requests)
        if (!r.warmup) measured.push_back(r);
    std::vector<WorkloadRequest> warm;
    for (const auto& r : requests)
        if (r.warmup) warm.push_back(r);
    warm.insert(warm.end(), options.primers.begin(), options.primers.end());
    const auto total = static_cast<int64_t>(measured.size());

    auto runWhole = [&](size_t i, Live& live) {
        std::vector<WorkloadRequest> list = warm;
        list.insert(list.end(), measured.begin(), measured.end());
        results[i].run = runWorkload(*live.target, list, runOptions(i, 0, total));
        results[i].stats = live.target->stats();
        results[i].startupMs = live.startupMs;
        results[i].description = live.target->describe();
    };
    if (options.concurrent && !options.interleave) {
        // Both sessions start first, so neither races against the other's model load.
        std::vector<Live> live;
        for (const auto& c : candidates) live.push_back(startCandidate(c, requests));
        std::vector<std::exception_ptr> errors(candidates.size());
        std::vector<std::thread> threads;
        for (size_t i = 0; i < candidates.size(); ++i)
            threads.emplace_back([&, i] {
                pthread_setname_np(pthread_self(), "mb-candidate");
                try {
                    runWhole(i, live[i]);
                } catch (...) {
                    errors[i] = std::current_exception();
                }
            });
        for (auto& t : threads) t.join();
        for (const auto& e : errors)
            if (e) std::rethrow_exception(e);
    } else if (!options.interleave) {
        for (size_t i = 0; i < candidates.size(); ++i) {
            Live live = startCandidate(candidates[i], requests);
            runWhole(i, live);
            if (options.run.cancel && options.run.cancel->load()) break;
        }
    } else {
        // Long-lived sessions; slices alternate A, B, A, B, ...
        std::vector<Live> live;
        for (const auto& c : candidates) live.push_back(startCandidate(c, requests));
        const int slices = std::max(1, options.slices);
        const std::vector<std::vector<WorkloadRequest>> parts = interleaveSlices(measured, slices);
        std::vector<double> clock(candidates.size(), 0.0);
        std::vector<int64_t> done(candidates.size(), 0);
        for (int s = 0; s < slices; ++s) {
            for (size_t i = 0; i < candidates.size(); ++i) {
                std::vector<WorkloadRequest> list = s == 0 ? warm : std::vector<WorkloadRequest>{};
                list.insert(list.end(), parts[static_cast<size_t>(s)].begin(), parts[static_cast<size_t>(s)].end());
                RunResult part = runWorkload(*live[i].target, list, runOptions(i, done[i], total));
                done[i] += static_cast<int64_t>(part.records.size());
                double end = 0;
                for (const auto& r : part.records) end = std::max(end, r.finishedMs);
                append(results[i].run, std::move(part), clock[i]);
                clock[i] += end;
            }
            if (options.run.cancel && options.run.cancel->load()) break;
        }
        for (size_t i = 0; i < candidates.size(); ++i) {
            results[i].stats = live[i].target->stats();
            results[i].startupMs = live[i].startupMs;
            results[i].description = live[i].target->describe();
        }
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
        results[i].candidate = candidates[i];
        results[i].storeId = storeIds[i];
        results[i].summary = summarize(results[i].run.records, results[i].run.samples, options.slo);
    }
    return results;
}

} // namespace

nlohmann::ordered_json toJson(const CandidateResult& r, bool withTokenTimes) {
    nlohmann::ordered_json j;
    j["label"] = r.candidate.label;
    j["model"] = r.candidate.modelPath;
    j["profile"] = nlohmann::ordered_json::parse(r.candidate.profile.toJson());
    j["target"] = r.description;
    j["threads"] = r.candidate.threads;
    if (!r.candidate.mmprojPath.empty()) j["mmproj"] = r.candidate.mmprojPath;
    j["device"] = r.candidate.isRemote() ? "remote" : r.candidate.device.id();
    j["startup_ms"] = r.startupMs;
    j["warmup_ms"] = r.run.warmupMs;
    j["model_load_ms"] = r.stats.loadMs;
    j["weight_bytes"] = r.stats.weightBytes;
    j["cancelled"] = r.run.cancelled;
    if (r.candidate.hasPlugins()) {
        j["plugins"] = r.candidate.plugins->record();
        j["plugins_description"] = r.candidate.plugins->describe();
    }
    j["summary"] = toJson(r.summary);
    nlohmann::ordered_json reqs = nlohmann::ordered_json::array();
    for (const auto& rec : r.run.records) reqs.push_back(toJson(rec, withTokenTimes));
    j["requests"] = std::move(reqs);
    return j;
}

} // namespace mb::lab
