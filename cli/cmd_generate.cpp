// `modebench-cli generate`: stream a completion of a prompt from a model file.
#include "cli/command_util.h"

#include "engine/clip_model.h"
#include "engine/generator.h"
#include "engine/image.h"
#include "engine/image_encoder.h"
#include "engine/image_prompt.h"
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
    std::string mmproj;              // the vision encoder + projector (llava's "mmproj" GGUF)
    std::vector<std::string> images; // --image, in order
};

// The images encoded by the mmproj on `device` (the language model's), each imageTokens × the
// model's width; encodeMs totals the vision encoder and projector (decoding and preprocessing
// included).
struct EncodedImages {
    std::vector<std::vector<float>> rows;
    int64_t imageTokens = 0;
    double encodeMs = 0;
};

EncodedImages encodeImages(const GenerateArgs& a, const engine::LlamaModel& model, kernels::ThreadPool& pool,
                           const engine::Device& device) {
    EncodedImages out;
    if (a.images.empty() && a.mmproj.empty()) return out;
    if (a.mmproj.empty()) throw UsageError("--image needs --mmproj (the model's vision encoder and projector)");
    if (a.images.empty()) throw UsageError("--mmproj is given but no --image");
    requireReadableFile(a.mmproj, "mmproj file");
    try {
        const engine::ClipModel clip = engine::ClipModel::load(a.mmproj);
        clip.checkEmbeddingWidth(model.config().dim);
        const auto encoder = engine::makeImageEncoder(clip, pool, device);
        for (const auto& path : a.images) {
            requireReadableFile(path, "image");
            const auto t0 = std::chrono::steady_clock::now();
            out.rows.push_back(encoder->encodeImage(engine::loadImage(path)));
            out.encodeMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            out.imageTokens += clip.imageTokens();
        }
    } catch (const engine::ClipError& e) {
        throw UsageError(e.what());
    } catch (const engine::ImageError& e) {
        throw UsageError(e.what());
    }
    return out;
}

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
    kernels::ThreadPool pool(a.threads);
    const EncodedImages images = encodeImages(a, *model, pool, device);
    std::vector<engine::PromptPart> parts;
    if (images.rows.empty()) {
        parts.push_back({tok.encode(a.prompt, !a.noBos && tok.vocab().addBos), {}});
    } else {
        if (a.noBos) throw UsageError("--no-bos: an image prompt follows llava's layout, BOS first");
        try {
            parts = engine::imagePrompt(tok, a.prompt, images.rows);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }
    std::vector<int32_t> prompt; // the text tokens, for the JSON
    int64_t positions = 0;
    for (const auto& p : parts) {
        prompt.insert(prompt.end(), p.tokens.begin(), p.tokens.end());
        positions += p.positions(model->config().dim);
    }
    if (positions == 0) throw UsageError("the prompt is empty (no tokens; drop --no-bos or give text)");
    if (positions >= model->config().contextLength)
        throw UsageError("the prompt has " + std::to_string(positions) + " positions (" + std::to_string(images.imageTokens) +
                         " of them image tokens) but the model's context is " +
                         std::to_string(model->config().contextLength));

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
    const engine::GenerateResult r = engine::generateFromParts(*model, pool, parts, opts, stream);
    if (!a.json) {
        std::cout << '\n';
        if (!images.rows.empty())
            std::cerr << "[" << images.rows.size() << " image(s): " << images.imageTokens << " image tokens, encoded in "
                      << images.encodeMs << " ms]\n";
        std::cerr << "[" << positions << " prompt positions, " << r.tokens.size() << " generated ("
                  << engine::stopReasonName(r.stop) << "); TTFT " << r.ttftMs << " ms; prefill " << r.prefillTokS
                  << " tok/s; decode " << r.decodeTokS << " tok/s; " << a.threads << " threads, " << device.id() << "]\n";
        return;
    }
    Json j;
    j["model"] = a.model;
    j["prompt_tokens"] = prompt;
    j["image_tokens"] = images.imageTokens;
    j["encode_ms"] = images.encodeMs;
    j["images"] = a.images;
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
    cmd->add_option("--mmproj", args->mmproj, "llava vision encoder + projector (mmproj GGUF) for --image");
    cmd->add_option("--image", args->images,
                    "PNG or JPEG image in the prompt (repeatable; at each <image> in the prompt, else after "
                    "llava's system prompt)")
        ->allow_extra_args(false);
    cmd->add_flag("--json", args->json, "Print one JSON object at the end instead of streaming text");
    cmd->callback([args] { runGenerate(*args); });
}

} // namespace mb::cli
