// `modebench-cli generate`: stream a completion of a prompt from a model file.
#include "cli/command_util.h"

#include "engine/generator.h"
#include "engine/llama_model.h"

#include <chrono>
#include <iostream>
#include <memory>

namespace mb::cli {

namespace {

struct GenerateArgs {
    std::string model;
    std::string prompt;
    int maxTokens = 128;
    engine::SamplerParams sampling;
    int threads = 1;
    std::string device;
    bool noBos = false;
    bool json = false;
};

void runGenerate(const GenerateArgs& a) {
    requireReadableFile(a.model, "model file");
    if (const std::string why = a.sampling.validate(); !why.empty()) throw UsageError(why);
    const engine::Device device = resolveDeviceOption(a.device);
    const auto t0 = std::chrono::steady_clock::now();
    // Weights are paged in during load (reported as load_ms), so TTFT and the tokens/s
    // figures measure computation, not first-touch page faults of the mapping.
    const auto model = engine::LlamaModel::load(a.model, {engine::Precision::Native, /*prefault=*/true});
    const double loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const engine::Tokenizer& tok = model->tokenizer();
    const std::vector<int32_t> prompt = tok.encode(a.prompt, !a.noBos && tok.vocab().addBos);
    if (prompt.empty()) throw UsageError("the prompt is empty (no tokens; drop --no-bos or give text)");
    if (static_cast<int64_t>(prompt.size()) >= model->config().contextLength)
        throw UsageError("the prompt has " + std::to_string(prompt.size()) + " tokens but the model's context is " +
                         std::to_string(model->config().contextLength) + " tokens");

    kernels::ThreadPool pool(a.threads);
    engine::GenerateOptions opts;
    opts.maxTokens = a.maxTokens;
    opts.sampling = a.sampling;
    opts.device = device;
    engine::TokenCallback stream;
    if (!a.json) {
        stream = [](int32_t, std::string_view text) {
            std::cout << text << std::flush;
            return true;
        };
    }
    const engine::GenerateResult r = engine::generate(*model, pool, prompt, opts, stream);
    if (!a.json) {
        std::cout << '\n';
        std::cerr << "[" << prompt.size() << " prompt tokens, " << r.tokens.size() << " generated ("
                  << engine::stopReasonName(r.stop) << "); TTFT " << r.ttftMs << " ms; prefill " << r.prefillTokS
                  << " tok/s; decode " << r.decodeTokS << " tok/s; " << a.threads << " threads, " << device.id() << "]\n";
        return;
    }
    Json j;
    j["model"] = a.model;
    j["prompt_tokens"] = prompt;
    j["tokens"] = r.tokens;
    j["text"] = r.text;
    j["stop_reason"] = engine::stopReasonName(r.stop);
    j["load_ms"] = loadMs;
    j["ttft_ms"] = r.ttftMs;
    j["prefill_ms"] = r.prefillMs;
    j["decode_ms"] = r.decodeMs;
    j["prefill_tok_s"] = r.prefillTokS;
    j["decode_tok_s"] = r.decodeTokS;
    j["kv_bytes"] = r.kvBytes;
    j["threads"] = a.threads;
    j["device"] = device.id();
    j["sampling"] = {{"temperature", a.sampling.temperature}, {"top_k", a.sampling.topK},
                     {"top_p", a.sampling.topP},               {"min_p", a.sampling.minP},
                     {"repeat_penalty", a.sampling.repeatPenalty}, {"seed", a.sampling.seed}};
    printJson(j);
}

} // namespace

void addGenerateCommand(CLI::App& root) {
    auto args = std::make_shared<GenerateArgs>();
    CLI::App* cmd = root.add_subcommand("generate", "Generate text from a prompt, streaming tokens as they arrive");
    cmd->add_option("--model,-m", args->model, "GGUF model file")->required();
    cmd->add_option("--prompt,-p", args->prompt, "Prompt text")->required();
    cmd->add_option("--max-tokens,-n", args->maxTokens, "Tokens to generate at most")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    cmd->add_option("--temperature", args->sampling.temperature, "Sampling temperature; 0 = greedy")
        ->capture_default_str();
    cmd->add_option("--top-k", args->sampling.topK, "Keep the K most likely tokens; 0 = off")->capture_default_str();
    cmd->add_option("--top-p", args->sampling.topP, "Nucleus sampling mass; 1 = off")->capture_default_str();
    cmd->add_option("--min-p", args->sampling.minP, "Drop tokens below P x the best; 0 = off")->capture_default_str();
    cmd->add_option("--repeat-penalty", args->sampling.repeatPenalty, "Repetition penalty; 1 = off")
        ->capture_default_str();
    cmd->add_option("--seed", args->sampling.seed, "Random seed (same seed, same tokens)")
        ->check(seedNumber())
        ->capture_default_str();
    addThreadsOption(*cmd, args->threads);
    addDeviceOption(*cmd, args->device);
    cmd->add_flag("--no-bos", args->noBos, "Do not prepend the BOS token");
    cmd->add_flag("--json", args->json, "Print one JSON object at the end instead of streaming text");
    cmd->callback([args] { runGenerate(*args); });
}

} // namespace mb::cli
