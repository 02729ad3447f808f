// `modebench-cli info`: what a GGUF file holds (architecture, shapes, parameters, tensors).
#include "cli/command_util.h"

#include "engine/gguf.h"
#include "engine/model_config.h"

#include <iomanip>
#include <iostream>
#include <memory>

namespace mb::cli {

namespace {

struct InfoArgs {
    std::string model;
    bool json = false;
    bool metadata = false;
};

// A metadata value for display: long arrays are summarised.
Json valueJson(const engine::GgufValue& v, bool full) {
    using T = engine::GgufValueType;
    switch (v.type) {
    case T::String: return v.asString();
    case T::Bool: return v.asBool();
    case T::F32:
    case T::F64: return v.asFloat();
    case T::Array: {
        const auto& items = v.asArray();
        if (!full && items.size() > 8)
            return Json{{"array_of", engine::ggufValueTypeName(v.elementType)}, {"length", items.size()}};
        Json a = Json::array();
        for (const auto& item : items) a.push_back(valueJson(item, full));
        return a;
    }
    case T::I8:
    case T::I16:
    case T::I32:
    case T::I64: return v.asInt();
    default: return v.asUInt();
    }
}

void runInfo(const InfoArgs& a) {
    requireReadableFile(a.model, "model file");
    const engine::GgufFile f = engine::GgufFile::open(a.model);
    Json j;
    const engine::GgufValue* arch = f.find("general.architecture");
    j["path"] = a.model;
    j["gguf_version"] = f.version();
    j["architecture"] = arch && arch->type == engine::GgufValueType::String ? arch->asString() : "";
    if (const auto* name = f.find("general.name"); name && name->type == engine::GgufValueType::String)
        j["name"] = name->asString();
    uint64_t params = 0, tensorBytes = 0;
    for (const auto& t : f.tensors()) {
        params += t.elements();
        tensorBytes += t.bytes;
    }
    j["parameters"] = params;
    j["bytes"] = f.fileSize();
    j["tensor_bytes"] = tensorBytes;
    try {
        const engine::ModelConfig c = engine::ModelConfig::fromGguf(f);
        j["context_length"] = c.contextLength;
        j["config"] = {{"dim", c.dim},           {"layers", c.layers},     {"heads", c.heads},
                       {"kv_heads", c.kvHeads},  {"head_dim", c.headDim},  {"ffn_dim", c.ffnDim},
                       {"vocab_size", c.vocabSize}, {"rope_base", c.ropeBase}, {"norm_eps", c.normEps}};
        Json features = Json::object();
        for (const auto& [label, text] : engine::describeArchitecture(c)) features[label] = text;
        j["architecture_features"] = features;
    } catch (const engine::ModelError& e) {
        j["context_length"] = nullptr;
        j["config_error"] = e.what();
    }
    if (const auto* tm = f.find("tokenizer.ggml.model"); tm && tm->type == engine::GgufValueType::String)
        j["tokenizer"] = tm->asString();
    Json tensors = Json::array();
    for (const auto& t : f.tensors())
        tensors.push_back({{"name", t.name}, {"type", kernels::tensorTypeName(t.type)}, {"shape", t.shape},
                           {"bytes", t.bytes}});
    j["tensors"] = tensors;
    Json meta = Json::object();
    for (const auto& [key, value] : f.metadata()) meta[key] = valueJson(value, a.metadata);
    j["metadata"] = meta;
    if (a.json) {
        printJson(j);
        return;
    }
    std::cout << "file:           " << a.model << " (GGUF v" << f.version() << ", " << f.fileSize() << " bytes)\n"
              << "architecture:   " << j["architecture"].get<std::string>() << '\n'
              << "parameters:     " << params << '\n';
    if (j.contains("config")) {
        const Json& c = j["config"];
        std::cout << "context length: " << j["context_length"] << '\n'
                  << "shape:          dim " << c["dim"] << ", layers " << c["layers"] << ", heads " << c["heads"]
                  << " (kv " << c["kv_heads"] << "), ffn " << c["ffn_dim"] << ", vocab " << c["vocab_size"] << '\n';
        for (const auto& [label, text] : j["architecture_features"].items())
            if (label != "architecture")
                std::cout << std::left << std::setw(16) << (label + ":") << text.get<std::string>() << '\n';
    } else {
        std::cout << "not runnable:   " << j["config_error"].get<std::string>() << '\n';
    }
    std::cout << "tensors:        " << f.tensors().size() << '\n';
    for (const auto& t : f.tensors()) {
        std::cout << "  " << std::left << std::setw(28) << t.name << ' ' << std::setw(5)
                  << kernels::tensorTypeName(t.type) << " [";
        for (size_t i = 0; i < t.shape.size(); ++i) std::cout << (i ? ", " : "") << t.shape[i];
        std::cout << "]\n";
    }
}

} // namespace

void addInfoCommand(CLI::App& root) {
    auto args = std::make_shared<InfoArgs>();
    CLI::App* cmd = root.add_subcommand("info", "Show a GGUF file's architecture, shapes, parameters and tensors");
    cmd->add_option("--model,-m", args->model, "GGUF file")->required();
    cmd->add_flag("--json", args->json, "Print JSON");
    cmd->add_flag("--full-metadata", args->metadata, "Print long metadata arrays in full (JSON)");
    cmd->callback([args] { runInfo(*args); });
}

} // namespace mb::cli
