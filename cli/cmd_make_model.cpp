// `modebench-cli make-model`: write a synthetic model with the shapes of a real one.
#include "cli/command_util.h"

#include "engine/gguf.h"
#include "engine/synthetic_mmproj.h"
#include "engine/synthetic_model.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

namespace mb::cli {

namespace {

struct MakeModelArgs {
    std::string preset;
    std::string dtype = "f16";
    std::string out;
    std::string vocab;
    uint64_t seed = 0;
    int64_t context = 0;
    int64_t lmWidth = 0; // mmproj presets: the projector's output width (the language model's)
    bool force = false;
    bool json = false;
    bool list = false;
};

void listPresets(bool json) {
    Json list = Json::array();
    for (const auto& p : engine::syntheticPresets()) {
        const auto& c = p.config;
        list.push_back({{"name", p.name}, {"architecture", c.traits().name}, {"parameters", engine::syntheticParameterCount(p)}, {"dim", c.dim},
                        {"layers", c.layers}, {"heads", c.heads}, {"kv_heads", c.kvHeads}, {"ffn_dim", c.ffnDim},
                        {"vocab_size", c.vocabSize}, {"context_length", c.contextLength}});
    }
    for (const auto& p : engine::mmprojPresets())
        list.push_back({{"name", p.name}, {"architecture", "clip"}, {"parameters", engine::mmprojParameterCount(p)},
                        {"image_size", p.imageSize}, {"patch_size", p.patchSize}, {"dim", p.hidden},
                        {"layers", p.blocks}, {"heads", p.heads}, {"ffn_dim", p.ffn}, {"image_tokens", p.imageTokens()},
                        {"projects_to", p.lmWidth}});
    if (json) {
        printJson(list);
        return;
    }
    for (const auto& p : list) {
        std::cout << p["name"].get<std::string>() << ": " << p["architecture"].get<std::string>() << ", "
                  << p["parameters"] << " parameters (dim " << p["dim"] << ", layers " << p["layers"];
        if (p.contains("image_tokens"))
            std::cout << ", " << p["image_size"] << " px / " << p["patch_size"] << " = " << p["image_tokens"]
                      << " image tokens, projecting to " << p["projects_to"] << ")\n";
        else
            std::cout << ", heads " << p["heads"] << "/" << p["kv_heads"] << ", ffn " << p["ffn_dim"] << ", vocab "
                      << p["vocab_size"] << ")\n";
    }
}

// An mmproj preset: the vision encoder and projector of a llava model (docs/ARCHITECTURE.md).
void makeMmproj(const MakeModelArgs& a, engine::MmprojPreset preset) {
    if (!a.vocab.empty() || a.context > 0) throw UsageError("--vocab and --context are for language models, not an mmproj");
    if (a.lmWidth > 0) preset.lmWidth = a.lmWidth;
    const auto type = kernels::tensorTypeFromName(a.dtype);
    if (!type || (*type != kernels::TensorType::F16 && *type != kernels::TensorType::F32))
        throw UsageError("--dtype '" + a.dtype + "': an mmproj is written in f16 (llava's converter) or f32");
    if (std::filesystem::exists(a.out) && !a.force) throw UsageError(a.out + " exists (use --force to overwrite)");
    const auto t0 = std::chrono::steady_clock::now();
    engine::writeSyntheticMmproj(preset, *type, a.seed, a.out);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto bytes = std::filesystem::file_size(a.out);
    if (a.json) {
        printJson({{"path", a.out}, {"preset", a.preset}, {"dtype", a.dtype}, {"seed", a.seed},
                   {"parameters", engine::mmprojParameterCount(preset)}, {"image_tokens", preset.imageTokens()},
                   {"projects_to", preset.lmWidth}, {"bytes", bytes}, {"seconds", seconds}});
        return;
    }
    std::cout << "wrote " << a.out << ": synthetic mmproj " << a.preset << " (" << a.dtype << ", seed " << a.seed
              << "), " << engine::mmprojParameterCount(preset) << " parameters, " << preset.imageTokens()
              << " image tokens of width " << preset.lmWidth << ", " << bytes << " bytes in " << seconds << " s\n";
}

void runMakeModel(const MakeModelArgs& a) {
    if (a.list) return listPresets(a.json);
    if (a.preset.empty() || a.out.empty()) throw UsageError("make-model needs --preset and --out (or --list)");
    if (const auto mm = engine::findMmprojPreset(a.preset)) return makeMmproj(a, *mm);
    if (a.lmWidth > 0) throw UsageError("--lm-width is for mmproj presets (" + engine::mmprojPresets()[0].name + ", ...)");
    auto preset = engine::findSyntheticPreset(a.preset);
    if (!preset) throw UsageError("unknown preset '" + a.preset + "' (see make-model --list)");
    if (a.context > 0) preset->config.contextLength = a.context;
    std::optional<engine::GgufFile> vocab;
    if (!a.vocab.empty()) {
        try {
            vocab.emplace(engine::GgufFile::open(a.vocab));
            preset = engine::withVocabulary(*preset, *vocab);
        } catch (const std::exception& e) {
            throw UsageError(std::string("--vocab: ") + e.what());
        }
    }
    const auto type = engine::syntheticWeightsFromName(a.dtype);
    if (!type)
        throw UsageError("unknown --dtype '" + a.dtype + "' (" + engine::syntheticWeightTypeNames() + ")");
    if (std::filesystem::exists(a.out) && !a.force)
        throw UsageError(a.out + " exists (use --force to overwrite)");
    if (const auto dir = std::filesystem::path(a.out).parent_path(); !dir.empty() && !std::filesystem::is_directory(dir))
        throw UsageError("output directory does not exist: " + dir.string());

    const bool tty = isatty(STDERR_FILENO);
    int lastPercent = -1;
    const auto t0 = std::chrono::steady_clock::now();
    engine::writeSyntheticModel(*preset, *type, a.seed, a.out, [&](double f) {
        const int percent = static_cast<int>(f * 100.0);
        if (tty && percent != lastPercent) {
            std::cerr << "\rwriting " << a.out << ": " << percent << "%" << std::flush;
            lastPercent = percent;
        }
        return true;
    }, vocab ? &*vocab : nullptr);
    if (tty) std::cerr << '\n';
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto bytes = std::filesystem::file_size(a.out);
    if (a.json) {
        printJson({{"path", a.out}, {"preset", a.preset}, {"dtype", a.dtype}, {"seed", a.seed},
                   {"parameters", engine::syntheticParameterCount(*preset)}, {"bytes", bytes}, {"seconds", seconds}});
        return;
    }
    std::cout << "wrote " << a.out << ": synthetic " << a.preset << " (" << a.dtype << ", seed " << a.seed << "), "
              << engine::syntheticParameterCount(*preset) << " parameters, " << bytes << " bytes in " << seconds
              << " s\n";
}

} // namespace

void addMakeModelCommand(CLI::App& root) {
    auto args = std::make_shared<MakeModelArgs>();
    CLI::App* cmd = root.add_subcommand(
        "make-model", "Write a synthetic model (seeded random weights, real shapes) for speed measurements");
    cmd->add_option("--preset", args->preset, "Shape preset (see --list)");
    cmd->add_option("--dtype", args->dtype,
                    "Weight type for every matrix (" + engine::syntheticWeightTypeNames() +
                        "); a mix name such as q4_k_m chooses per tensor as llama-quantize does")
        ->capture_default_str();
    cmd->add_option("--out,-o", args->out, "Output GGUF path");
    cmd->add_option("--vocab", args->vocab,
                    "A GGUF whose tokenizer (every tokenizer.* key) the model takes, e.g. a vocab-only file or "
                    "a real model of the family, so prompts tokenize as the real model's do; the vocabulary "
                    "size becomes its token count");
    cmd->add_option("--seed", args->seed, "Seed of the weights")->check(seedNumber())->capture_default_str();
    cmd->add_option("--context", args->context,
                    "Context length to record instead of the preset's (e.g. 4096 so a small model takes long "
                    "prompts; the shapes stay the preset's)")
        ->check(CLI::Range(int64_t{16}, int64_t{1} << 24));
    cmd->add_option("--lm-width", args->lmWidth,
                    "mmproj presets: the width the projector writes, the language model's embedding width "
                    "(default the preset's)")
        ->check(CLI::Range(int64_t{1}, int64_t{65536}));
    cmd->add_flag("--force", args->force, "Overwrite an existing output file");
    cmd->add_flag("--list", args->list, "List the presets and exit");
    cmd->add_flag("--json", args->json, "Print JSON");
    cmd->callback([args] { runMakeModel(*args); });
}

} // namespace mb::cli
