// Built-in profiles and the JSON profile format.
#include "engine/profile.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mb::engine {

using Json = nlohmann::ordered_json;

namespace {

template <class E>
struct EnumName {
    E value;
    const char* name;
};

constexpr EnumName<WeightsPolicy> kWeights[] = {{WeightsPolicy::Preload, "preload"},
                                                {WeightsPolicy::OnDemand, "on_demand"}};
constexpr EnumName<KvPolicy> kKv[] = {{KvPolicy::Pool, "pool"}, {KvPolicy::PerRequest, "per_request"}};
constexpr EnumName<BatchingPolicy> kBatching[] = {{BatchingPolicy::Off, "off"}, {BatchingPolicy::Dynamic, "dynamic"}};
constexpr EnumName<Truncation> kTruncation[] = {
    {Truncation::KeepTail, "keep_tail"}, {Truncation::KeepHeadTail, "keep_head_tail"}, {Truncation::Reject, "reject"}};
constexpr EnumName<ReloadPolicy> kReload[] = {{ReloadPolicy::AfterWarmup, "after_warmup"}, {ReloadPolicy::Hot, "hot"}};
constexpr EnumName<Precision> kPrecision[] = {{Precision::Native, "native"}, {Precision::F32, "f32"},
                                              {Precision::F16, "f16"},       {Precision::Mixed, "mixed"},
                                              {Precision::Int8, "int8"},     {Precision::Q4_0, "q4_0"},
                                              {Precision::Q2_K, "q2_k"},     {Precision::Q3_K_M, "q3_k_m"},
                                              {Precision::Q4_K_S, "q4_k_s"}, {Precision::Q4_K_M, "q4_k_m"},
                                              {Precision::Q5_K_M, "q5_k_m"}, {Precision::Q6_K, "q6_k"},
                                              {Precision::IQ4_NL, "iq4_nl"}};

template <class E, size_t N>
const char* nameOf(const EnumName<E> (&table)[N], E v) {
    for (const auto& e : table)
        if (e.value == v) return e.name;
    return "?";
}

template <class E, size_t N>
E parseEnum(const EnumName<E> (&table)[N], const Json& j, const std::string& key) {
    if (!j.is_string()) throw ProfileError("profile key '" + key + "' must be a string");
    const auto s = j.get<std::string>();
    std::string allowed;
    for (const auto& e : table) {
        if (s == e.name) return e.value;
        allowed += (allowed.empty() ? "" : ", ") + std::string(e.name);
    }
    throw ProfileError("profile key '" + key + "' has value '" + s + "'; expected one of " + allowed);
}

template <class T>
T number(const Json& j, const std::string& key) {
    if (!j.is_number()) throw ProfileError("profile key '" + key + "' must be a number");
    if constexpr (std::is_integral_v<T>) {
        if (!j.is_number_integer() && !j.is_number_unsigned())
            throw ProfileError("profile key '" + key + "' must be an integer");
    }
    return j.get<T>();
}

bool boolean(const Json& j, const std::string& key) {
    if (!j.is_boolean()) throw ProfileError("profile key '" + key + "' must be true or false");
    return j.get<bool>();
}

} // namespace

const char* precisionName(Precision p) { return nameOf(kPrecision, p); }
Precision precisionFromName(const std::string& name) { return parseEnum(kPrecision, Json(name), "precision"); }
std::vector<std::string> precisionNames() {
    std::vector<std::string> out;
    for (const auto& e : kPrecision) out.emplace_back(e.name);
    return out;
}
const char* truncationName(Truncation t) { return nameOf(kTruncation, t); }

Profile Profile::fast() {
    Profile p;
    p.name = "fast";
    p.base = "fast";
    p.weights = WeightsPolicy::Preload;
    p.kv = KvPolicy::Pool;
    p.prefixCache = true;
    p.batching = BatchingPolicy::Off;
    p.maxBatch = 1;
    p.maxWaitMs = 0;
    p.maxContext = 32768;
    p.truncation = Truncation::KeepTail;
    p.graphs = true;
    p.fused = true;
    p.precision = Precision::Mixed;
    p.reload = ReloadPolicy::AfterWarmup;
    return p;
}

Profile Profile::regular() { return Profile{}; }

std::optional<Profile> Profile::builtin(const std::string& name) {
    if (name == "fast") return fast();
    if (name == "regular") return regular();
    return std::nullopt;
}

Profile Profile::fromJson(const std::string& text) {
    Json j;
    try {
        j = Json::parse(text);
    } catch (const std::exception& e) {
        throw ProfileError(std::string("profile is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw ProfileError("a profile must be a JSON object");
    std::string base = "regular";
    if (j.contains("base")) {
        if (!j["base"].is_string()) throw ProfileError("profile key 'base' must be a string");
        base = j["base"].get<std::string>();
    }
    auto b = builtin(base);
    if (!b) throw ProfileError("profile key 'base' has value '" + base + "'; expected fast or regular");
    Profile p = *b;
    p.name = base + "-custom";
    for (const auto& [key, v] : j.items()) {
        if (key == "base") continue;
        else if (key == "name") {
            if (!v.is_string() || v.get<std::string>().empty()) throw ProfileError("profile key 'name' must be a non-empty string");
            p.name = v.get<std::string>();
        } else if (key == "weights") p.weights = parseEnum(kWeights, v, key);
        else if (key == "kv") p.kv = parseEnum(kKv, v, key);
        else if (key == "block_size") p.blockSize = number<int32_t>(v, key);
        else if (key == "prefix_cache") p.prefixCache = boolean(v, key);
        else if (key == "batching") p.batching = parseEnum(kBatching, v, key);
        else if (key == "max_batch") p.maxBatch = number<int32_t>(v, key);
        else if (key == "max_batch_tokens") p.maxBatchTokens = number<int32_t>(v, key);
        else if (key == "max_wait_ms") p.maxWaitMs = number<double>(v, key);
        else if (key == "prefill_chunk") p.prefillChunk = number<int32_t>(v, key);
        else if (key == "max_context") p.maxContext = number<int64_t>(v, key);
        else if (key == "truncation") p.truncation = parseEnum(kTruncation, v, key);
        else if (key == "graphs") p.graphs = boolean(v, key);
        else if (key == "fused") p.fused = boolean(v, key);
        else if (key == "precision") p.precision = parseEnum(kPrecision, v, key);
        else if (key == "reload") p.reload = parseEnum(kReload, v, key);
        else if (key == "kv_pool_tokens") p.kvPoolTokens = number<int64_t>(v, key);
        else if (key == "queue_capacity") p.queueCapacity = number<int32_t>(v, key);
        else throw ProfileError("unknown profile key '" + key + "'");
    }
    if (const std::string why = p.validate(); !why.empty()) throw ProfileError(why);
    return p;
}

Profile Profile::load(const std::string& nameOrPath) {
    if (auto b = builtin(nameOrPath)) return *b;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(nameOrPath, ec))
        throw ProfileError("profile '" + nameOrPath + "' is neither fast, regular nor a readable JSON file");
    std::ifstream in(nameOrPath);
    std::ostringstream ss;
    ss << in.rdbuf();
    try {
        return fromJson(ss.str());
    } catch (const ProfileError& e) {
        throw ProfileError(nameOrPath + ": " + e.what());
    }
}

std::string Profile::validate() const {
    if (blockSize < 1 || blockSize > 4096) return "profile key 'block_size' must be in [1, 4096]";
    if (maxBatch < 1 || maxBatch > 4096) return "profile key 'max_batch' must be in [1, 4096]";
    if (maxBatchTokens < 1) return "profile key 'max_batch_tokens' must be >= 1";
    if (maxWaitMs < 0 || maxWaitMs > 60000) return "profile key 'max_wait_ms' must be in [0, 60000]";
    if (prefillChunk < 1) return "profile key 'prefill_chunk' must be >= 1";
    if (maxContext < 2 || maxContext > (int64_t{1} << 24)) return "profile key 'max_context' must be in [2, 16777216]";
    if (kvPoolTokens < 0 || kvPoolTokens > INT32_MAX) // block ids are int32
        return "profile key 'kv_pool_tokens' must be in [0, 2147483647]";
    if (queueCapacity < 1) return "profile key 'queue_capacity' must be >= 1";
    if (prefixCache && kv != KvPolicy::Pool) return "profile key 'prefix_cache' needs kv = pool";
    if (batching == BatchingPolicy::Off && maxBatch != 1) return "profile key 'max_batch' must be 1 when batching is off";
    return {};
}

std::string Profile::toJson() const {
    Json j;
    j["name"] = name;
    j["base"] = base;
    j["weights"] = nameOf(kWeights, weights);
    j["kv"] = nameOf(kKv, kv);
    j["block_size"] = blockSize;
    j["prefix_cache"] = prefixCache;
    j["batching"] = nameOf(kBatching, batching);
    j["max_batch"] = maxBatch;
    j["max_batch_tokens"] = maxBatchTokens;
    j["max_wait_ms"] = maxWaitMs;
    j["prefill_chunk"] = prefillChunk;
    j["max_context"] = maxContext;
    j["truncation"] = nameOf(kTruncation, truncation);
    j["graphs"] = graphs;
    j["fused"] = fused;
    j["precision"] = nameOf(kPrecision, precision);
    j["reload"] = nameOf(kReload, reload);
    j["kv_pool_tokens"] = kvPoolTokens;
    j["queue_capacity"] = queueCapacity;
    return j.dump();
}

} // namespace mb::engine
