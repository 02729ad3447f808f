// The chosen candidate and its knobs mapped, one by one, onto each server's launch options.
#include "lab/deploy_export.h"

#include "engine/quant_mix.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace mb::lab {

namespace {

using engine::BatchingPolicy;
using engine::KvPolicy;
using engine::Precision;
using engine::Truncation;

std::string str(int64_t v) {
    return std::to_string(v);
}

constexpr const char* kCheckpointNote = "a Hugging Face checkpoint of the measured model at the "
                                        "precision below (the default is the measured GGUF "
                                        "file, which these servers load only experimentally)";

// What every server's mapping reads: the knobs' values as the profile file spells them, and
// the figures derived from them.
struct Facts {
    const DeployTarget& t;
    const engine::Profile& p;
    nlohmann::json json;   // p.toJson(): the names of the values
    bool dynamic = false;  // batching dynamic (max_batch_tokens and prefill_chunk apply)
    int64_t sequences = 1; // requests computed at once
    int64_t context = 0;   // deployContext
    std::string contextWhy;

    explicit Facts(const DeployTarget& target)
        : t(target), p(target.profile), json(nlohmann::json::parse(target.profile.toJson())) {
        dynamic = p.batching == BatchingPolicy::Dynamic;
        sequences = dynamic ? p.maxBatch : 1;
        context = deployContext(t);
        contextWhy =
            t.modelContext > 0
                ? "min(profile max_context " + str(p.maxContext) + ", model context " +
                      str(t.modelContext) + ") = " + str(context)
                : "the profile's max_context " + str(context) +
                      " (the model's own context was not recorded: check that it is at least this)";
    }
    std::string value(const char* key) const {
        const auto& v = json.at(key);
        return v.is_string() ? v.get<std::string>() : v.dump();
    }
    KnobMapping knob(const char* key, std::vector<std::string> args, std::string note) const {
        return {key, value(key), std::move(args), std::move(note)};
    }
    std::string notApplied(const char* what) const {
        return std::string("not applied: with batching off ModeBench ") + what;
    }
};

// The GGUF type a precision names, for llama-server (which computes in the file's own types).
std::string ggufAdvice(Precision precision) {
    switch (precision) {
    case Precision::Native:
        return "serve the measured file as it is (its own tensor types)";
    case Precision::F32:
        return "serve an F32 GGUF of the model";
    case Precision::Mixed:
        return "serve a GGUF with Q8_0 projections and F16 embeddings (modebench-cli quantize "
               "--type mixed)";
    case Precision::Int8:
        return "serve a Q8_0 GGUF (modebench-cli quantize --type q8_0, or llama-quantize)";
    case Precision::F16:
    case Precision::Q4_0:
    case Precision::Q2_K:
    case Precision::Q3_K_M:
    case Precision::Q4_K_S:
    case Precision::Q4_K_M:
    case Precision::Q5_K_M:
    case Precision::Q6_K:
    case Precision::IQ4_NL:
        break; // llama.cpp's file type of the same name
    }
    const std::string name = engine::precisionName(precision);
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const bool writable = engine::quantizeTargetFromName(name).has_value();
    return std::string(upper[0] == 'F' || upper[0] == 'I' ? "serve an " : "serve a ") + upper +
           " GGUF" +
           (writable ? " (modebench-cli quantize --type " + name + ", or llama-quantize)"
                     : std::string());
}

// vLLM and SGLang load checkpoints (Hugging Face format); the precision picks which one.
KnobMapping checkpointPrecision(const Facts& f) {
    const Precision pr = f.p.precision;
    const std::string checkpoint =
        "; vLLM and SGLang read the quantisation method from the checkpoint's config";
    switch (pr) {
    case Precision::Native:
        return f.knob("precision", {}, "the checkpoint's own dtype (--dtype auto, the default)");
    case Precision::F32:
        return f.knob("precision", {"--dtype float32"}, "");
    case Precision::F16:
        return f.knob("precision", {"--dtype float16"}, "");
    case Precision::Mixed:
        return f.knob("precision", {"--dtype float16"},
                      "F16 activations; for the INT8 weights choose an INT8 weight-only "
                      "checkpoint (W8A16, e.g. GPTQ or compressed-tensors)" +
                          checkpoint);
    case Precision::Int8:
        return f.knob("precision", {},
                      "choose an INT8 checkpoint (W8A16 or W8A8, e.g. GPTQ or compressed-tensors)" +
                          checkpoint);
    case Precision::Q4_0:
    case Precision::Q2_K:
    case Precision::Q3_K_M:
    case Precision::Q4_K_S:
    case Precision::Q4_K_M:
    case Precision::Q5_K_M:
    case Precision::Q6_K:
    case Precision::IQ4_NL:
        break;
    }
    return f.knob("precision", {},
                  std::string("no load-time requantisation to ") + engine::precisionName(pr) +
                      ": choose a checkpoint of about that many bits (AWQ or GPTQ for 4-bit)" +
                      checkpoint);
}

// Knobs that no server has an option for, worded per server where the advice differs.
void addCommonNotes(const Facts& f, std::vector<KnobMapping>& k, const std::string& server,
                    const std::string& graphsOff) {
    k.push_back(f.knob("max_wait_ms", {},
                       f.dynamic ? "no equivalent: " + server +
                                       " schedules every step without waiting to fill a batch"
                                 : f.notApplied("runs one request at a time")));
    k.push_back(f.knob("weights", {},
                       f.p.weights == engine::WeightsPolicy::Preload
                           ? "matches: " + server + " loads the weights before it serves"
                           : "no equivalent: " + server +
                                 " loads the weights at start, so the cold first request "
                                 "that on_demand measured does not occur"));
    k.push_back(f.knob("graphs", {},
                       f.p.graphs ? "matches: " + server + " uses CUDA graphs for decode by default"
                                  : server + " uses CUDA graphs by default; " + graphsOff));
    k.push_back(f.knob("fused", {}, "no option: " + server + "'s kernels are its own"));
    k.push_back(f.knob(
        "reload", {},
        f.p.reload == engine::ReloadPolicy::Hot
            ? "no in-process hot reload: roll the Deployment (new pods beside the old, then drain)"
            : "no equivalent: keep the pod out of the Service (readiness probe on /health) until "
              "warm-up and prefix priming are done, and roll pods for a model update"));
}

std::string truncationNote(const Facts& f, const std::string& server, const std::string& keepTail) {
    switch (f.p.truncation) {
    case Truncation::Reject:
        return "matches: " + server + " rejects a prompt longer than its context with an error";
    case Truncation::KeepTail:
        return keepTail;
    case Truncation::KeepHeadTail:
        return "no equivalent: " + server +
               " rejects longer prompts; cut the middle out client-side";
    }
    return {};
}

ServerLaunch vllm(const Facts& f, const std::string& name) {
    ServerLaunch s{"vllm",
                   "vLLM",
                   "vllm.sh",
                   8000,
                   kCheckpointNote,
                   {"vllm serve \"$MODEL\"", "--served-model-name " + shellWord(name),
                    "--host \"$HOST\"", "--port \"$PORT\""},
                   {}};
    auto& k = s.knobs;
    k.push_back(f.knob("prefix_cache",
                       {f.p.prefixCache ? "--enable-prefix-caching" : "--no-enable-prefix-caching"},
                       f.p.prefixCache
                           ? "automatic prefix caching: full KV blocks keyed by a hash chain, LRU "
                             "eviction, as in ModeBench"
                           : ""));
    k.push_back(f.knob("max_batch", {"--max-num-seqs " + str(f.sequences)},
                       f.dynamic ? "" : "batching off: one request at a time"));
    k.push_back(f.knob(
        "max_batch_tokens",
        {"--max-num-batched-tokens " + str(f.dynamic ? f.p.maxBatchTokens : f.context)},
        f.dynamic ? ""
                  : "batching off prefills each prompt whole: the step budget is the context"));
    if (f.dynamic)
        k.push_back(f.knob(
            "prefill_chunk",
            {"--enable-chunked-prefill", "--long-prefill-token-threshold " + str(f.p.prefillChunk)},
            "prefills are chunked within --max-num-batched-tokens; the V1 engine caps one "
            "request's prefill per step at the threshold"));
    else
        k.push_back(f.knob("prefill_chunk", {}, f.notApplied("prefills whole prompts")));
    k.push_back(f.knob("max_context", {"--max-model-len " + str(f.context)},
                       f.contextWhy + "; vLLM's limit counts prompt and output together"));
    k.push_back(f.knob(
        "truncation", {},
        truncationNote(f, "vLLM",
                       "no server option: vLLM rejects longer prompts; send truncate_prompt_tokens "
                       "per request (it keeps the last tokens), or trim client-side")));
    if (f.p.kv == KvPolicy::Pool)
        k.push_back(
            f.knob("block_size", {"--block-size " + str(f.p.blockSize)},
                   "one paged KV pool, as kv = pool; vLLM sizes it with --gpu-memory-utilization"));
    else
        k.push_back(f.knob(
            "kv", {},
            "no equivalent: vLLM keeps one paged KV pool; per-request allocation is not offered"));
    k.push_back(checkpointPrecision(f));
    addCommonNotes(f, k, "vLLM", "add --enforce-eager to run without them as measured");
    k.push_back(f.knob(
        "queue_capacity", {},
        "no equivalent: vLLM queues without a bound; bound waiting requests at the gateway or load "
        "balancer (ModeBench rejects beyond " +
            str(f.p.queueCapacity) + ")"));
    return s;
}

ServerLaunch sglang(const Facts& f, const std::string& name) {
    ServerLaunch s{"sglang",
                   "SGLang",
                   "sglang.sh",
                   30000,
                   kCheckpointNote,
                   {"python3 -m sglang.launch_server --model-path \"$MODEL\"",
                    "--served-model-name " + shellWord(name), "--host \"$HOST\"",
                    "--port \"$PORT\"", "--enable-metrics"},
                   {}};
    auto& k = s.knobs;
    k.push_back(f.knob(
        "prefix_cache",
        f.p.prefixCache ? std::vector<std::string>{}
                        : std::vector<std::string>{"--disable-radix-cache"},
        f.p.prefixCache ? "the radix-tree prefix cache (RadixAttention) is on by default" : ""));
    k.push_back(f.knob("max_batch", {"--max-running-requests " + str(f.sequences)},
                       f.dynamic ? "" : "batching off: one request at a time"));
    k.push_back(f.knob(
        "max_batch_tokens", {},
        f.dynamic ? "no exact equivalent: --max-prefill-tokens bounds a prefill batch, but never "
                    "below the context length"
                  : f.notApplied("prefills whole prompts")));
    k.push_back(f.knob(
        "prefill_chunk", {"--chunked-prefill-size " + str(f.dynamic ? f.p.prefillChunk : -1)},
        f.dynamic ? "" : "batching off prefills whole prompts: -1 turns chunked prefill off"));
    k.push_back(f.knob("max_context", {"--context-length " + str(f.context)}, f.contextWhy));
    k.push_back(f.knob(
        "truncation", {},
        truncationNote(f, "SGLang",
                       "no equivalent: SGLang rejects longer prompts; --allow-auto-truncate cuts "
                       "them but does not promise to keep the tail, so trim client-side")));
    if (f.p.kv == KvPolicy::Pool) {
        std::vector<std::string> args{"--page-size " + str(f.p.blockSize)};
        if (f.p.kvPoolTokens > 0) args.push_back("--max-total-tokens " + str(f.p.kvPoolTokens));
        k.push_back(f.knob("block_size", args,
                           f.p.kvPoolTokens > 0
                               ? "KV pages of block_size tokens; the pool holds kv_pool_tokens"
                               : "KV pages of block_size tokens; SGLang sizes the pool with "
                                 "--mem-fraction-static"));
    } else {
        k.push_back(f.knob(
            "kv", {},
            "no equivalent: SGLang keeps one KV pool; per-request allocation is not offered"));
    }
    k.push_back(checkpointPrecision(f));
    addCommonNotes(f, k, "SGLang", "add --disable-cuda-graph to run without them as measured");
    k.push_back(
        f.knob("queue_capacity", {"--max-queued-requests " + str(f.p.queueCapacity)},
               "requests beyond it are rejected, as in ModeBench (recent SGLang releases)"));
    return s;
}

ServerLaunch llamaServer(const Facts& f, const std::string& name) {
    ServerLaunch s{"llama-server",
                   "llama.cpp llama-server",
                   "llama-server.sh",
                   8080,
                   "the GGUF file to serve (default: the measured one; see precision below)",
                   {"llama-server -m \"$MODEL\"", "--alias " + shellWord(name), "--host \"$HOST\"",
                    "--port \"$PORT\"", "--metrics"},
                   {}};
    auto& k = s.knobs;
    k.push_back(
        f.knob("prefix_cache",
               f.p.prefixCache ? std::vector<std::string>{"--cache-reuse " + str(f.p.blockSize)}
                               : std::vector<std::string>{},
               f.p.prefixCache
                   ? "a slot reuses the common prefix of its previous prompt; --cache-reuse also "
                     "reuses chunks of at least block_size tokens by shifting the KV cache. A "
                     "shared prefix hits only in the slot that holds it"
                   : "no option: a slot reuses its previous prompt unless the request sends "
                     "cache_prompt: false; send that to match"));
    k.push_back(f.knob(
        "max_batch", {"-np " + str(f.sequences)},
        f.dynamic
            ? "slots: each serves one request; continuous batching across them is on by default"
            : "batching off: one slot, one request at a time"));
    k.push_back(f.knob("max_context", {"--ctx-size " + str(f.sequences * f.context)},
                       "llama-server divides --ctx-size among the -np slots: " + str(f.sequences) +
                           " x " + str(f.context) + " per request, " + f.contextWhy));
    k.push_back(f.knob("max_batch_tokens",
                       f.dynamic ? std::vector<std::string>{"-b " + str(f.p.maxBatchTokens)}
                                 : std::vector<std::string>{},
                       f.dynamic
                           ? "the logical batch: tokens per decode call"
                           : f.notApplied("prefills whole prompts") +
                                 "; llama-server feeds a prompt in -b pieces (2048 by default)"));
    k.push_back(
        f.knob("prefill_chunk", {},
               f.dynamic ? "no per-request chunk: -ub (the physical batch) splits each decode call"
                         : f.notApplied("prefills whole prompts")));
    k.push_back(f.knob(
        "truncation", {},
        truncationNote(f, "llama-server",
                       "no option: recent builds reject a prompt longer than its slot's context; "
                       "trim client-side to keep the tail")));
    k.push_back(f.knob("kv", {},
                       "the KV cache is --ctx-size cells in one buffer; there is no block size or "
                       "per-request allocation"));
    k.push_back(f.knob("precision", {},
                       "llama-server computes in the file's types: " + ggufAdvice(f.p.precision)));
    addCommonNotes(f, k, "llama-server",
                   "set GGML_CUDA_DISABLE_GRAPHS=1 to run without them as measured");
    k.push_back(f.knob(
        "queue_capacity", {},
        "no equivalent: requests wait for a free slot without a bound; bound them at the gateway "
        "(ModeBench rejects beyond " +
            str(f.p.queueCapacity) + ")"));
    return s;
}

ServerLaunch modebenchServe(const Facts& f, const std::string& name) {
    ServerLaunch s{"modebench-serve",
                   "modebench-cli serve",
                   "modebench-serve.sh",
                   8080,
                   "the GGUF file to serve (default: the measured one); THREADS and DEVICE (cpu, "
                   "cuda:0) as measured",
                   {"modebench-cli serve --model \"$MODEL\"", "--model-name " + shellWord(name),
                    "--host \"$HOST\"", "--port \"$PORT\"", "${THREADS:+--threads \"$THREADS\"}",
                    "${DEVICE:+--device \"$DEVICE\"}"},
                   {}};
    s.knobs.push_back({"profile",
                       f.p.name,
                       {"--profile \"$HERE/profile.json\""},
                       "every knob as measured: profile.json is the chosen profile itself"});
    return s;
}

} // namespace

Mode deployMode(const SelectionResult& r, std::optional<Mode> named) {
    if (named) return *named;
    if (r.verdict == Verdict::Recommended) return r.recommendation;
    throw DeployExportError(std::string("the selection recommends no candidate (verdict ") +
                            verdictName(r.verdict) + ": " + r.headline + ")");
}

DeployTarget deployTargetOf(const StoredRun& run, const SelectionResult& r,
                            std::optional<Mode> named) {
    DeployTarget t;
    t.mode = deployMode(r, named);
    t.recommended = r.verdict == Verdict::Recommended && r.recommendation == t.mode;
    t.verdict = verdictName(r.verdict);
    t.headline = r.headline;
    t.runIds = r.runIds.empty() ? std::vector<int64_t>{run.id} : r.runIds;
    const StoredCandidate* found = nullptr;
    for (const auto& c : run.candidates)
        if (modeOfProfile(c.info.profileJson) == t.mode) found = &c;
    if (!found)
        throw DeployExportError("run " + str(run.id) + " has no " + modeName(t.mode) +
                                " candidate to deploy");
    t.label = found->info.label;
    t.modelPath = found->info.modelPath;
    try {
        nlohmann::json p = nlohmann::json::parse(found->info.profileJson);
        if (!p.contains("base")) p["base"] = modeName(t.mode); // the built-in it was told apart by
        t.profile = engine::Profile::fromJson(p.dump());
    } catch (const std::exception& e) {
        throw DeployExportError("run " + str(run.id) + " candidate " + t.label +
                                ": stored profile: " + e.what());
    }
    try {
        const auto shape =
            nlohmann::json::parse(found->info.shapeJson.empty() ? "{}" : found->info.shapeJson);
        if (shape.contains("context_length") && shape["context_length"].is_number_integer())
            t.modelContext = shape["context_length"].get<int64_t>();
    } catch (const nlohmann::json::exception&) {
        t.modelContext = 0; // not recorded: the profile's cap stands alone
    }
    for (const auto& s : r.scores)
        if (s.mode == t.mode)
            for (const auto& b : s.slo)
                if (b.key == "ttft_ms.p95") t.ttftSloP95Ms = b.limitMs;
    return t;
}

int64_t deployContext(const DeployTarget& t) {
    return t.modelContext > 0 ? std::min(t.profile.maxContext, t.modelContext)
                              : t.profile.maxContext;
}

std::vector<ServerLaunch> launchSettings(const DeployTarget& t) {
    const Facts f(t);
    std::string name = std::filesystem::path(t.modelPath).stem().string();
    if (name.empty()) name = "model";
    return {vllm(f, name), sglang(f, name), llamaServer(f, name), modebenchServe(f, name)};
}

std::string shellWord(const std::string& s) {
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
               c == '/' || c == ':';
    });
    if (plain) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string commandLine(const ServerLaunch& s) {
    std::string out;
    for (const auto& h : s.head) out += (out.empty() ? "" : " ") + h;
    for (const auto& k : s.knobs)
        for (const auto& a : k.args) out += " " + a;
    return out;
}

std::optional<DeployCapacity> deployCapacityOf(const SelectionResult& r, Mode mode) {
    for (const ModeCapacity& c : r.capacity) {
        if (c.mode != mode || !c.knee) continue;
        DeployCapacity d;
        if (c.sized) {
            d.replicas = c.minReplicas;
            d.maxReplicas = c.replicas;
        }
        d.scaleOutQueueDepth = c.scaleOutQueueDepth;
        d.scaleInQueueDepth = c.scaleInQueueDepth;
        if (c.scaleOutTtftP95Ms > 0) d.ttftP95Ms = c.scaleOutTtftP95Ms;
        std::string runs;
        for (const int64_t id : c.runIds) runs += (runs.empty() ? "" : ", ") + std::to_string(id);
        d.source = "compare --sweep " + std::string(sweepKindName(c.kind)) + ", runs " + runs;
        return d;
    }
    return std::nullopt;
}

} // namespace mb::lab
