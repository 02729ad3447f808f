// `modebench-cli compare-precision`: greedy agreement, KL and perplexity of a candidate against a reference.
#include "cli/command_util.h"

#include "engine/llama_model.h"
#include "engine/precision_eval.h"

#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace mb::cli {

namespace {

struct ComparePrecisionArgs {
    std::string reference;
    std::string candidate;
    std::string prompts;
    int64_t genTokens = 32;
    int threads = 1;
    bool json = false;
};

// One prompt per non-empty line, or JSONL objects with "prompt" when the file starts with '{'.
std::vector<std::string> readPrompts(const std::string& path) {
    const std::string text = readTextFile(path);
    const size_t first = text.find_first_not_of(" \t\r\n");
    const bool jsonl = first != std::string::npos && text[first] == '{';
    std::vector<std::string> prompts;
    std::istringstream in(text);
    std::string line;
    for (int lineNo = 1; std::getline(in, line); ++lineNo) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        if (!jsonl) {
            prompts.push_back(line);
            continue;
        }
        try {
            prompts.push_back(Json::parse(line).at("prompt").get<std::string>());
        } catch (const Json::exception&) {
            throw UsageError(path + ":" + std::to_string(lineNo) + ": expected a JSON object with a \"prompt\" string");
        }
    }
    if (prompts.empty()) throw UsageError("no prompts in " + path);
    return prompts;
}

void runComparePrecision(const ComparePrecisionArgs& a) {
    requireReadableFile(a.reference, "reference model file");
    requireReadableFile(a.candidate, "candidate model file");
    requireReadableFile(a.prompts, "prompts file");
    const std::vector<std::string> texts = readPrompts(a.prompts);
    const auto ref = engine::LlamaModel::load(a.reference);
    const auto cand = engine::LlamaModel::load(a.candidate);
    std::vector<std::vector<int32_t>> prompts;
    for (const auto& t : texts) prompts.push_back(ref->tokenizer().encode(t, /*addBos=*/true));
    kernels::ThreadPool pool(a.threads);
    engine::PrecisionComparison r;
    try {
        r = engine::comparePrecision(*ref, *cand, pool, prompts, a.genTokens);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (a.json) {
        printJson({{"reference", a.reference},
                   {"candidate", a.candidate},
                   {"agreement", r.agreement},
                   {"mean_kl", r.meanKl},
                   {"reference_perplexity", r.refPerplexity},
                   {"candidate_perplexity", r.candPerplexity},
                   {"positions", r.positions},
                   {"prompts", prompts.size()},
                   {"gen_tokens", a.genTokens}});
        return;
    }
    std::cout << std::setprecision(6) << "agreement " << r.agreement * 100 << "% over " << r.positions
              << " positions (" << prompts.size() << " prompts)\n"
              << "mean KL(reference || candidate) " << r.meanKl << " nats\n"
              << "perplexity reference " << r.refPerplexity << ", candidate " << r.candPerplexity << '\n';
}

} // namespace

void addComparePrecisionCommand(CLI::App& root) {
    auto a = std::make_shared<ComparePrecisionArgs>();
    CLI::App* cmd = root.add_subcommand("compare-precision",
                                        "Greedy agreement, KL and perplexity of a candidate model against a reference");
    cmd->add_option("--reference", a->reference, "GGUF reference model (generates the continuations)")->required();
    cmd->add_option("--candidate", a->candidate, "GGUF candidate model (same vocabulary)")->required();
    cmd->add_option("--prompts", a->prompts, "One prompt per line, or JSONL with \"prompt\"")->required();
    cmd->add_option("--gen-tokens", a->genTokens, "Greedy tokens generated per prompt by the reference")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))->capture_default_str();
    addThreadsOption(*cmd, a->threads);
    cmd->add_flag("--json", a->json,
                  "Print {\"agreement\", \"mean_kl\", \"reference_perplexity\", \"candidate_perplexity\", ...}");
    cmd->callback([a] { runComparePrecision(*a); });
}

} // namespace mb::cli
