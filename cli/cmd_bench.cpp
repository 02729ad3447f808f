// `modebench-cli bench`: prefill and decode speed of a model, measured separately and repeated.
#include "cli/command_util.h"

#include "engine/benchmark.h"
#include "engine/llama_model.h"

#include <iomanip>
#include <iostream>
#include <memory>

namespace mb::cli {

namespace {

struct BenchArgs {
    std::string model;
    engine::BenchOptions options;
    int threads = 1;
    std::string device;
    bool json = false;
};

void runBench(const BenchArgs& a) {
    requireReadableFile(a.model, "model file");
    engine::BenchOptions options = a.options;
    options.device = resolveDeviceOption(a.device);
    const auto model = engine::LlamaModel::load(a.model, {engine::Precision::Native, /*prefault=*/true});
    kernels::ThreadPool pool(a.threads);
    engine::BenchResult r;
    try {
        r = engine::runBenchmark(*model, pool, options);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const auto [pm, ps] = engine::meanStd(r.prefillTokS);
    const auto [dm, ds] = engine::meanStd(r.decodeTokS);
    if (a.json) {
        printJson({{"model", a.model},
                   {"prefill_tok_s", {{"mean", pm}, {"std", ps}, {"runs", r.prefillTokS}}},
                   {"decode_tok_s", {{"mean", dm}, {"std", ds}, {"runs", r.decodeTokS}}},
                   {"model_bytes", model->weightBytes()},
                   {"file_bytes", model->file().fileSize()},
                   {"threads", a.threads},
                   {"device", options.device.id()},
                   {"graphs", options.device.kind == engine::Device::Kind::Cuda && options.graphs},
                   {"prompt_tokens", a.options.promptTokens},
                   {"gen_tokens", a.options.genTokens},
                   {"repetitions", a.options.repetitions}});
        return;
    }
    std::cout << std::fixed << std::setprecision(1) << a.model << " (" << model->weightBytes() / 1048576.0
              << " MiB of weights, " << a.threads << " threads, " << options.device.id() << ", " << a.options.repetitions << " runs)\n"
              << "prefill " << a.options.promptTokens << " tokens: " << pm << " +/- " << ps << " tok/s\n"
              << "decode  " << a.options.genTokens << " tokens: " << dm << " +/- " << ds << " tok/s\n";
}

} // namespace

void addBenchCommand(CLI::App& root) {
    auto a = std::make_shared<BenchArgs>();
    CLI::App* cmd = root.add_subcommand("bench", "Measure prefill and decode tokens/s of a model (after a warm-up)");
    cmd->add_option("--model,-m", a->model, "GGUF model file")->required();
    cmd->add_option("--prompt-tokens", a->options.promptTokens, "Prompt length prefilled as one batch")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))->capture_default_str();
    cmd->add_option("--gen-tokens", a->options.genTokens, "Tokens decoded one at a time")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))->capture_default_str();
    cmd->add_option("--repetitions,-r", a->options.repetitions, "Timed runs")->check(CLI::Range(1, 1000))
        ->capture_default_str();
    cmd->add_option("--seed", a->options.seed, "Seed of the synthetic prompt")->check(seedNumber())->capture_default_str();
    addThreadsOption(*cmd, a->threads);
    addDeviceOption(*cmd, a->device);
    cmd->add_flag("--graphs", a->options.graphs, "CUDA: capture the decode step once as a graph and replay it");
    cmd->add_flag("--json", a->json, "Print {\"prefill_tok_s\": {\"mean\", \"std\"}, \"decode_tok_s\": ..., ...}");
    cmd->callback([a] { runBench(*a); });
}

} // namespace mb::cli
