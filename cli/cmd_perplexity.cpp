// `modebench-cli perplexity`: perplexity of a model on a text file, in non-overlapping windows.
#include "cli/command_util.h"

#include "engine/llama_model.h"
#include "engine/precision_eval.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>

namespace mb::cli {

namespace {

struct PerplexityArgs {
    std::string model;
    std::string text;
    int64_t context = 0; // 0: min(512, the model's context)
    int threads = 1;
    bool json = false;
};

void runPerplexity(const PerplexityArgs& a) {
    requireReadableFile(a.model, "model file");
    requireReadableFile(a.text, "text file");
    const std::string text = readTextFile(a.text);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw UsageError("text file is empty: " + a.text);
    const auto model = engine::LlamaModel::load(a.model);
    const int64_t context = a.context > 0 ? a.context : std::min<int64_t>(512, model->config().contextLength);
    const std::vector<int32_t> tokens = model->tokenizer().encode(text, /*addBos=*/true);
    kernels::ThreadPool pool(a.threads);
    engine::PerplexityResult r;
    try {
        r = engine::perplexityDetail(*model, pool, tokens, context);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (a.json) {
        printJson({{"model", a.model},
                   {"perplexity", r.perplexity},
                   {"tokens", tokens.size()},
                   {"predicted", r.predicted},
                   {"context", context},
                   {"windows", r.windows}});
        return;
    }
    std::cout << std::fixed << std::setprecision(4) << "perplexity " << r.perplexity << " (" << tokens.size()
              << " tokens, " << r.windows << " windows of at most " << context << ")\n";
}

} // namespace

void addPerplexityCommand(CLI::App& root) {
    auto a = std::make_shared<PerplexityArgs>();
    CLI::App* cmd = root.add_subcommand("perplexity", "Perplexity of a model on a text file");
    cmd->add_option("--model,-m", a->model, "GGUF model file")->required();
    cmd->add_option("--text", a->text, "Text file to score (tokenized with BOS)")->required();
    cmd->add_option("--context", a->context, "Window length in tokens (default: min(512, model context))")
        ->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
    addThreadsOption(*cmd, a->threads);
    cmd->add_flag("--json", a->json, "Print {\"perplexity\", \"tokens\", \"context\", \"windows\"}");
    cmd->callback([a] { runPerplexity(*a); });
}

} // namespace mb::cli
