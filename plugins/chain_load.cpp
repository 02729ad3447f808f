// Loading a chain from its JSON file: the registry of plugin types.
#include "plugins/chain.h"

#include "plugins/builtins.h"
#include "plugins/script_plugin.h"

#include <fstream>
#include <sstream>

namespace mb::plugins {

namespace {

using Json = nlohmann::json;
using Maker = std::shared_ptr<const PluginFactory> (*)(const Json&);

struct BuiltIn {
    const char* type;
    Maker make;
};
// Every built-in type; "script" is handled apart since it needs the chain's options.
constexpr BuiltIn kBuiltIns[] = {
    {"word_filter", makeWordFilter},
    {"regex_replace", makeRegexReplace},
    {"json_output", makeJsonOutput},
    {"pii_mask", makePiiMask},
    {"trim_format", makeTrimFormat},
};

std::string knownTypes() {
    std::string s;
    for (const BuiltIn& b : kBuiltIns) s += std::string(b.type) + ", ";
    return s + "script";
}

} // namespace

std::shared_ptr<const PluginFactory> makeEntry(const Json& entry, const ChainOptions& options) {
    if (!entry.is_object()) throw PluginError("a plugin entry must be a JSON object");
    const auto t = entry.find("type");
    if (t == entry.end() || !t->is_string()) throw PluginError("a plugin entry needs a \"type\" string");
    const std::string type = t->get<std::string>();
    if (type == "script") return makeScriptPlugin(entry, options);
    for (const BuiltIn& b : kBuiltIns)
        if (type == b.type) return b.make(entry);
    throw PluginError("unknown plugin type '" + type + "' (known: " + knownTypes() + ")");
}

Chain Chain::fromJson(const Json& doc, const ChainOptions& options) {
    if (!doc.is_object() || !doc.contains("plugins") || !doc["plugins"].is_array())
        throw PluginError("a plugin chain is {\"plugins\": [...]}");
    std::vector<std::shared_ptr<const PluginFactory>> entries;
    size_t i = 0;
    for (const Json& entry : doc["plugins"]) {
        try {
            entries.push_back(makeEntry(entry, options));
        } catch (const PluginError& e) {
            throw PluginError("plugin " + std::to_string(i + 1) + ": " + e.what());
        }
        ++i;
    }
    return Chain(std::move(entries));
}

Chain Chain::load(const std::filesystem::path& file, ChainOptions options) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw PluginError("cannot read plugin chain " + file.string());
    std::ostringstream ss;
    ss << in.rdbuf();
    Json doc;
    try {
        doc = Json::parse(ss.str());
    } catch (const Json::parse_error& e) {
        throw PluginError(file.string() + " is not JSON: " + e.what());
    }
    if (options.baseDir.empty()) options.baseDir = file.parent_path();
    try {
        return fromJson(doc, options);
    } catch (const PluginError& e) {
        throw PluginError(file.string() + ": " + e.what());
    }
}

} // namespace mb::plugins
