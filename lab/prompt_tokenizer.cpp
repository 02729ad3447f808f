// promptTokenizer: the vocabulary of a model file, wired into SelectionOptions.
#include "lab/prompt_tokenizer.h"

#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"

#include <filesystem>

namespace mb::lab {

std::shared_ptr<const engine::Tokenizer> promptTokenizer(const std::vector<StoredRun>& runs,
                                                         const std::string& modelPath, SelectionOptions& options) {
    std::string path = modelPath;
    if (path.empty() && !runs.empty() && !runs.front().candidates.empty())
        path = runs.front().candidates.front().info.modelPath;
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return nullptr;
    std::shared_ptr<const engine::Tokenizer> tokenizer =
        engine::Tokenizer::create(engine::Vocab::fromGguf(engine::GgufFile::open(path)));
    options.tokenize = [tokenizer](const std::string& text) {
        return tokenizer->encode(text, tokenizer->vocab().addBos);
    };
    return tokenizer;
}

} // namespace mb::lab
