// `modebench-cli quantize`: rewrite a model's weights as f16, mixed, or one of llama.cpp's file types.
#include "cli/command_util.h"

#include "engine/quantize_model.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace mb::cli {

namespace {

struct QuantizeArgs {
    std::string in, out, type;
    bool force = false;
    bool json = false;
};

void runQuantize(const QuantizeArgs& a) {
    requireReadableFile(a.in, "input model");
    const auto target = engine::quantizeTargetFromName(a.type);
    if (!target) throw UsageError("unknown --type '" + a.type + "' (" + engine::quantizeTargetNames() + ")");
    std::error_code ec;
    if (std::filesystem::equivalent(a.in, a.out, ec)) throw UsageError("--out must differ from --in");
    if (std::filesystem::exists(a.out) && !a.force) throw UsageError(a.out + " exists (use --force to overwrite)");
    const bool tty = isatty(STDERR_FILENO);
    int last = -1;
    const auto t0 = std::chrono::steady_clock::now();
    engine::quantizeModel(a.in, a.out, *target, [&](double f) {
        const int percent = static_cast<int>(f * 100);
        if (tty && percent != last) {
            std::cerr << "\rquantizing: " << percent << "%" << std::flush;
            last = percent;
        }
        return true;
    });
    if (tty) std::cerr << '\n';
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto inBytes = std::filesystem::file_size(a.in), outBytes = std::filesystem::file_size(a.out);
    if (a.json) {
        printJson({{"in", a.in}, {"out", a.out}, {"type", a.type}, {"in_bytes", inBytes}, {"out_bytes", outBytes},
                   {"seconds", seconds}});
        return;
    }
    std::cout << "wrote " << a.out << " (" << a.type << "): " << outBytes << " bytes from " << inBytes << " in "
              << seconds << " s\n";
}

} // namespace

void addQuantizeCommand(CLI::App& root) {
    auto a = std::make_shared<QuantizeArgs>();
    CLI::App* cmd = root.add_subcommand("quantize", "Rewrite a model's weights as f16, mixed, or a llama.cpp file type (q8_0, q4_k_m, ...)");
    cmd->add_option("--in,-i", a->in, "Input GGUF model")->required();
    cmd->add_option("--out,-o", a->out, "Output GGUF path")->required();
    cmd->add_option("--type,-t", a->type,
                    "f16, mixed (Q8_0 projections and output, F16 embedding), or a llama.cpp file type with "
                    "llama-quantize's per-tensor choices: " + engine::quantizeTargetNames() +
                        "; rows the chosen blocks cannot cover fall back as llama.cpp does, norms keep their type")
        ->required();
    cmd->add_flag("--force", a->force, "Overwrite an existing output file");
    cmd->add_flag("--json", a->json, "Print JSON");
    cmd->callback([a] { runQuantize(*a); });
}

} // namespace mb::cli
