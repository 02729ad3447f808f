// Workload files: the JSON spec format and JSONL / plain-text prompt files.
#include "lab/workload.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>

namespace mb::lab {

namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& key, const std::string& why) {
    throw std::runtime_error("workload spec: " + key + ": " + why);
}

std::string keyOf(const std::string& path, const std::string& name) {
    return path.empty() ? name : path + "." + name;
}

// A JSON object whose keys must all be known; typed getters name the full key on error.
class ObjectReader {
public:
    ObjectReader(const Json& j, std::string path, std::initializer_list<const char*> known)
        : m_j(j), m_path(std::move(path)) {
        if (!j.is_object()) fail(m_path.empty() ? "(top level)" : m_path, "must be an object");
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string& key = it.key();
            const bool ok =
                std::any_of(known.begin(), known.end(), [&key](const char* k) { return key == k; });
            if (!ok) fail(keyOf(m_path, key), "unknown key");
        }
    }

    const Json* find(const char* name) const {
        auto it = m_j.find(name);
        return it == m_j.end() ? nullptr : &*it;
    }
    std::string key(const char* name) const { return keyOf(m_path, name); }

    void get(const char* name, int64_t& out) const {
        if (const Json* v = find(name)) {
            if (v->is_number_unsigned() &&
                v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                fail(key(name), "out of range");
            if (!v->is_number_integer()) fail(key(name), "must be an integer");
            out = v->get<int64_t>();
        }
    }
    void get(const char* name, int32_t& out) const {
        int64_t wide = out;
        get(name, wide);
        if (wide < std::numeric_limits<int32_t>::min() ||
            wide > std::numeric_limits<int32_t>::max())
            fail(key(name), "out of range");
        out = static_cast<int32_t>(wide);
    }
    void get(const char* name, uint64_t& out) const {
        if (const Json* v = find(name)) {
            if (!v->is_number_unsigned()) fail(key(name), "must be a non-negative integer");
            out = v->get<uint64_t>();
        }
    }
    void get(const char* name, double& out) const {
        if (const Json* v = find(name)) {
            if (!v->is_number()) fail(key(name), "must be a number");
            out = v->get<double>();
        }
    }
    void get(const char* name, std::string& out) const {
        if (const Json* v = find(name)) {
            if (!v->is_string()) fail(key(name), "must be a string");
            out = v->get<std::string>();
        }
    }

private:
    const Json& m_j;
    std::string m_path;
};

constexpr std::pair<LengthDist::Kind, const char*> kLengthKinds[] = {
    {LengthDist::Kind::Fixed, "fixed"},
    {LengthDist::Kind::Uniform, "uniform"},
    {LengthDist::Kind::Normal, "normal"},
    {LengthDist::Kind::LogNormal, "lognormal"}};
constexpr std::pair<ArrivalSpec::Kind, const char*> kArrivalKinds[] = {
    {ArrivalSpec::Kind::Closed, "closed"},
    {ArrivalSpec::Kind::Poisson, "poisson"},
    {ArrivalSpec::Kind::Gamma, "gamma"},
    {ArrivalSpec::Kind::Ramp, "ramp"}};

template <typename Kind, size_t N>
Kind parseKind(const std::pair<Kind, const char*> (&kinds)[N], const std::string& text,
               const std::string& key) {
    std::string names;
    for (const auto& [kind, name] : kinds) {
        if (text == name) return kind;
        names += names.empty() ? name : std::string("|") + name;
    }
    fail(key, "unknown kind '" + text + "' (expected " + names + ")");
}

LengthDist parseLength(const Json& j, const std::string& path, LengthDist d) {
    ObjectReader r(j, path, {"kind", "a", "b", "min", "max"});
    std::string kind = lengthKindName(d.kind);
    r.get("kind", kind);
    d.kind = parseKind(kLengthKinds, kind, r.key("kind"));
    r.get("a", d.a);
    r.get("b", d.b);
    r.get("min", d.min);
    r.get("max", d.max);
    return d;
}

nlohmann::ordered_json lengthJson(const LengthDist& d) {
    return {
        {"kind", lengthKindName(d.kind)}, {"a", d.a}, {"b", d.b}, {"min", d.min}, {"max", d.max}};
}

bool isBlank(const std::string& s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

// The prompt of one JSONL object: its text, or its messages (and their "role: content"
// transcript); throws with the reason (without FILE:LINE).
struct JsonlPrompt {
    std::string text;
    std::vector<engine::ChatMessage> messages;
};
JsonlPrompt jsonlPrompt(const Json& j) {
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    const auto prompt = j.find("prompt");
    const auto messages = j.find("messages");
    if (prompt != j.end() && messages != j.end())
        throw std::runtime_error("both \"prompt\" and \"messages\"; give one");
    if (prompt != j.end()) {
        if (!prompt->is_string()) throw std::runtime_error("\"prompt\" must be a string");
        return {prompt->get<std::string>(), {}};
    }
    if (messages == j.end()) throw std::runtime_error("missing \"prompt\" (or \"messages\")");
    if (!messages->is_array()) throw std::runtime_error("\"messages\" must be an array");
    JsonlPrompt out;
    for (const Json& m : *messages) {
        const auto role = m.is_object() ? m.find("role") : m.end();
        const auto content = m.is_object() ? m.find("content") : m.end();
        if (!m.is_object() || role == m.end() || content == m.end() || !role->is_string() ||
            !content->is_string())
            throw std::runtime_error("each message needs string \"role\" and \"content\"");
        out.messages.push_back({role->get<std::string>(), content->get<std::string>()});
        out.text += out.messages.back().role + ": " + out.messages.back().content + "\n";
    }
    return out;
}

// A stream's lines (without the '\n'), read a block at a time, as std::getline splits
// them; a line longer than `maxBytes` throws std::length_error once that many bytes are
// in, before the rest is read.
class LineReader {
public:
    LineReader(std::istream& in, size_t maxBytes) : m_in(in), m_maxBytes(maxBytes) {}

    bool next(std::string& line) {
        line.clear();
        bool any = false;
        for (;;) {
            if (m_pos == m_end) {
                m_pos = 0;
                const std::streamsize got = m_in.rdbuf()->sgetn(m_block.data(), static_cast<std::streamsize>(m_block.size()));
                m_end = static_cast<size_t>(std::max<std::streamsize>(0, got));
                if (m_end == 0) return any;
            }
            any = true;
            const char* begin = m_block.data() + m_pos;
            const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', m_end - m_pos));
            const size_t take = newline ? static_cast<size_t>(newline - begin) : m_end - m_pos;
            if (line.size() + take > m_maxBytes)
                throw std::length_error("the line is longer than " + std::to_string(m_maxBytes >> 20) +
                                        " MiB, the most one prompt may have");
            line.append(begin, take);
            m_pos += take;
            if (newline) {
                ++m_pos;
                return true;
            }
        }
    }

private:
    std::istream& m_in;
    size_t m_maxBytes;
    std::vector<char> m_block = std::vector<char>(size_t{1} << 16);
    size_t m_pos = 0, m_end = 0;
};

// A JSONL object's "images": files, relative ones from the prompt file's folder.
std::vector<WorkloadImage> jsonlImages(const Json& j, const std::filesystem::path& folder) {
    const auto it = j.find("images");
    if (it == j.end()) return {};
    if (!it->is_array()) throw std::runtime_error("\"images\" must be an array of image file paths");
    if (it->size() > static_cast<size_t>(WorkloadSpec::Images::kMaxPerRequest))
        throw std::runtime_error("\"images\": at most " + std::to_string(WorkloadSpec::Images::kMaxPerRequest) +
                                 " images a request");
    std::vector<WorkloadImage> out;
    for (const Json& p : *it) {
        if (!p.is_string() || p.get_ref<const std::string&>().empty())
            throw std::runtime_error("\"images\": each entry must be a non-empty file path");
        std::filesystem::path file(p.get<std::string>());
        if (file.is_relative()) file = folder / file;
        WorkloadImage w;
        w.path = file.lexically_normal().string();
        out.push_back(std::move(w));
    }
    return out;
}

int32_t jsonlMaxTokens(const Json& j, int32_t fallback) {
    const auto it = j.find("max_tokens");
    if (it == j.end()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() <= 0 ||
        it->get<int64_t>() > std::numeric_limits<int32_t>::max())
        throw std::runtime_error("\"max_tokens\" must be a positive integer");
    return static_cast<int32_t>(it->get<int64_t>());
}

} // namespace

const char* lengthKindName(LengthDist::Kind k) {
    for (const auto& [kind, name] : kLengthKinds)
        if (kind == k) return name;
    return "fixed";
}

const char* arrivalKindName(ArrivalSpec::Kind k) {
    for (const auto& [kind, name] : kArrivalKinds)
        if (kind == k) return name;
    return "closed";
}

WorkloadSpec parseWorkloadSpec(const nlohmann::json& j) {
    WorkloadSpec s;
    ObjectReader r(j, "",
                   {"name", "requests", "input", "output", "shared_prefix", "multi_turn", "arrival",
                    "warmup_requests", "seed", "images"});
    r.get("name", s.name);
    r.get("requests", s.requests);
    if (const Json* v = r.find("input")) s.input = parseLength(*v, "input", s.input);
    if (const Json* v = r.find("output")) s.output = parseLength(*v, "output", s.output);
    if (const Json* v = r.find("shared_prefix")) {
        ObjectReader sp(*v, "shared_prefix",
                        {"groups", "per_group", "prefix_tokens", "suffix_tokens"});
        sp.get("groups", s.sharedPrefix.groups);
        sp.get("per_group", s.sharedPrefix.perGroup);
        sp.get("prefix_tokens", s.sharedPrefix.prefixTokens);
        sp.get("suffix_tokens", s.sharedPrefix.suffixTokens);
    }
    if (const Json* v = r.find("multi_turn")) {
        ObjectReader mt(*v, "multi_turn", {"conversations", "turns", "user_tokens"});
        mt.get("conversations", s.multiTurn.conversations);
        mt.get("turns", s.multiTurn.turns);
        if (const Json* u = mt.find("user_tokens"))
            s.multiTurn.userTokens =
                parseLength(*u, "multi_turn.user_tokens", s.multiTurn.userTokens);
    }
    if (const Json* v = r.find("arrival")) {
        ObjectReader a(*v, "arrival",
                       {"kind", "concurrency", "rate", "burstiness", "ramp_seconds"});
        std::string kind = arrivalKindName(s.arrival.kind);
        a.get("kind", kind);
        s.arrival.kind = parseKind(kArrivalKinds, kind, a.key("kind"));
        a.get("concurrency", s.arrival.concurrency);
        a.get("rate", s.arrival.rate);
        a.get("burstiness", s.arrival.burstiness);
        a.get("ramp_seconds", s.arrival.rampSeconds);
    }
    r.get("warmup_requests", s.warmupRequests);
    r.get("seed", s.seed);
    if (const Json* v = r.find("images")) {
        ObjectReader im(*v, "images", {"per_request", "width", "height", "distinct"});
        im.get("per_request", s.images.perRequest);
        im.get("width", s.images.width);
        im.get("height", s.images.height);
        im.get("distinct", s.images.distinct);
    }
    if (std::string e = s.validate(); !e.empty()) throw std::runtime_error("workload spec: " + e);
    return s;
}

nlohmann::ordered_json toJson(const WorkloadSpec& s) {
    nlohmann::ordered_json j;
    j["name"] = s.name;
    j["requests"] = s.requests;
    j["input"] = lengthJson(s.input);
    j["output"] = lengthJson(s.output);
    j["shared_prefix"] = {{"groups", s.sharedPrefix.groups},
                          {"per_group", s.sharedPrefix.perGroup},
                          {"prefix_tokens", s.sharedPrefix.prefixTokens},
                          {"suffix_tokens", s.sharedPrefix.suffixTokens}};
    j["multi_turn"] = {{"conversations", s.multiTurn.conversations},
                       {"turns", s.multiTurn.turns},
                       {"user_tokens", lengthJson(s.multiTurn.userTokens)}};
    j["arrival"] = {{"kind", arrivalKindName(s.arrival.kind)},
                    {"concurrency", s.arrival.concurrency},
                    {"rate", s.arrival.rate},
                    {"burstiness", s.arrival.burstiness},
                    {"ramp_seconds", s.arrival.rampSeconds}};
    j["warmup_requests"] = s.warmupRequests;
    j["seed"] = s.seed;
    j["images"] = {{"per_request", s.images.perRequest},
                   {"width", s.images.width},
                   {"height", s.images.height},
                   {"distinct", s.images.distinct}};
    return j;
}

std::vector<WorkloadRequest>
loadPromptFile(const std::string& path,
               const std::function<std::vector<int32_t>(const std::string&)>& tokenize,
               int32_t defaultMaxTokens, const ChatTokenize& chat) {
    if (defaultMaxTokens <= 0) throw std::invalid_argument("defaultMaxTokens must be > 0");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    // The extension decides; only a file named neither .jsonl nor .txt is told by its first
    // non-blank character, which is that of its first non-blank line.
    std::string ext = std::filesystem::path(path).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::optional<bool> jsonl;
    if (ext == ".jsonl" || ext == ".txt") jsonl = ext == ".jsonl";

    std::vector<WorkloadRequest> out;
    LineReader lines(in, kMaxPromptLineBytes);
    std::string line;
    for (int64_t lineNo = 1;; ++lineNo) {
        try {
            if (!lines.next(line)) break;
        } catch (const std::length_error& e) {
            throw std::runtime_error(path + ":" + std::to_string(lineNo) + ": " + e.what());
        }
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (isBlank(line)) continue;
        if (!jsonl) jsonl = *std::find_if_not(line.begin(), line.end(), [](char c) {
            return std::isspace(static_cast<unsigned char>(c));
        }) == '{';
        const std::string where = path + ":" + std::to_string(lineNo) + ": ";
        WorkloadRequest r;
        std::string text;
        try {
            if (*jsonl) {
                Json j;
                try {
                    j = Json::parse(line);
                } catch (const Json::parse_error& e) {
                    throw std::runtime_error(std::string("malformed JSON: ") + e.what());
                }
                JsonlPrompt p = jsonlPrompt(j);
                r.maxTokens = jsonlMaxTokens(j, defaultMaxTokens);
                r.images = jsonlImages(j, std::filesystem::path(path).parent_path());
                if (chat && !p.messages.empty()) {
                    r.prompt = chat(p.messages);
                    r.index = out.size();
                    out.push_back(std::move(r));
                    continue;
                }
                text = std::move(p.text);
            } else {
                text = line;
                r.maxTokens = defaultMaxTokens;
            }
            if (isBlank(text)) throw std::runtime_error("empty prompt");
            r.prompt = tokenize(text);
        } catch (const std::bad_alloc&) {
            throw std::runtime_error(where + "out of memory while tokenizing this prompt (" +
                                     std::to_string(line.size()) + " bytes)");
        } catch (const std::exception& e) {
            throw std::runtime_error(where + e.what());
        }
        r.index = out.size();
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace mb::lab
