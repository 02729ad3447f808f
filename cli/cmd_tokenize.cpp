// `modebench-cli tokenize`: text to token ids with a model's (or vocab-only file's) tokenizer.
#include "cli/command_util.h"

#include "engine/gguf.h"
#include "engine/tokenizer.h"

#include <iostream>
#include <memory>

namespace mb::cli {

namespace {

struct TokenizeArgs {
    std::string model;
    std::string text;
    std::string file;
    bool noBos = false;
    bool parseSpecial = false;
    bool json = false;
};

void runTokenize(const TokenizeArgs& a) {
    requireReadableFile(a.model, "model file");
    const engine::GgufFile gguf = engine::GgufFile::open(a.model);
    const auto tok = engine::Tokenizer::create(engine::Vocab::fromGguf(gguf));
    const std::string text = a.file.empty() ? a.text : readTextFile(a.file);
    const std::vector<int32_t> ids =
        tok->encode(text, !a.noBos && tok->vocab().addBos,
                    a.parseSpecial ? engine::SpecialTokens::Parse : engine::SpecialTokens::AsText);
    if (a.json) {
        Json pieces = Json::array();
        for (int32_t id : ids) pieces.push_back(tok->vocab().tokens[static_cast<size_t>(id)]);
        printJson(Json{{"tokens", ids}, {"pieces", pieces}, {"count", ids.size()}});
        return;
    }
    for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
    std::cout << '\n';
}

} // namespace

void addTokenizeCommand(CLI::App& root) {
    auto args = std::make_shared<TokenizeArgs>();
    CLI::App* cmd = root.add_subcommand("tokenize", "Turn text into token ids (vocab-only GGUF files work too)");
    cmd->add_option("--model,-m", args->model, "GGUF file with a tokenizer")->required();
    auto* text = cmd->add_option("--text", args->text, "Text to tokenize");
    auto* file = cmd->add_option("--file", args->file, "File whose contents to tokenize");
    text->excludes(file);
    file->excludes(text);
    cmd->add_flag("--no-bos", args->noBos, "Do not prepend the BOS token");
    cmd->add_flag("--parse-special", args->parseSpecial,
                  "Take control-token text (<|im_start|>, <s>, ...) as those tokens; by default it is text");
    cmd->add_flag("--json", args->json, "Print {\"tokens\": [...]} as JSON");
    cmd->callback([args, text, file] {
        if (text->count() == 0 && file->count() == 0) throw UsageError("tokenize needs --text or --file");
        runTokenize(*args);
    });
}

} // namespace mb::cli
