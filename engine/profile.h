// Serving profiles: the built-in `fast` and `regular` knob sets and custom ones from JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::engine {

class ProfileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class WeightsPolicy { Preload, OnDemand };
enum class KvPolicy { Pool, PerRequest };
enum class BatchingPolicy { Off, Dynamic };
enum class Truncation { KeepTail, KeepHeadTail, Reject };
enum class ReloadPolicy { AfterWarmup, Hot };
// Weight precision a session computes with (requantised at load when it differs from
// the file). Native keeps the file's types. The k-quant ones are llama-quantize's mixes of the
// same name (engine/quant_mix.h: which matrix gets which type).
enum class Precision { Native, F32, F16, Mixed, Int8, Q4_0, Q2_K, Q3_K_M, Q4_K_S, Q4_K_M, Q5_K_M, Q6_K, IQ4_NL };

// Every knob of PRODUCT.md §1. Plain value; copy freely.
struct Profile {
    std::string name = "regular";
    std::string base = "regular";
    WeightsPolicy weights = WeightsPolicy::OnDemand;
    KvPolicy kv = KvPolicy::PerRequest;
    int32_t blockSize = 16;        // positions per KV block
    bool prefixCache = false;
    BatchingPolicy batching = BatchingPolicy::Dynamic;
    int32_t maxBatch = 8;          // sequences per iteration
    int32_t maxBatchTokens = 2048; // tokens per iteration (prefill chunks + decodes)
    double maxWaitMs = 5.0;        // how long an idle scheduler waits to fill a batch
    int32_t prefillChunk = 512;    // prompt tokens per sequence per iteration
    int64_t maxContext = 131072;   // input tokens accepted (also bounded by the model)
    Truncation truncation = Truncation::Reject;
    bool graphs = false;           // CUDA graphs for the decode step (no effect on the CPU)
    bool fused = false;            // fused kernels (QKV and gate/up products in one pass)
    Precision precision = Precision::Native;
    ReloadPolicy reload = ReloadPolicy::Hot;
    int64_t kvPoolTokens = 0;      // pool size in positions; 0 = max context + 4096
    int32_t queueCapacity = 1024;  // waiting requests beyond this are rejected

    static Profile fast();
    static Profile regular();
    // "fast" or "regular"; nullopt otherwise.
    static std::optional<Profile> builtin(const std::string& name);
    // A JSON object whose "base" (default "regular") names the built-in it overrides.
    // Unknown keys and impossible values throw ProfileError naming the key.
    static Profile fromJson(const std::string& text);
    // A built-in name, else a path to a JSON profile file.
    static Profile load(const std::string& nameOrPath);

    std::string toJson() const; // every knob, the format fromJson reads
    // Empty when consistent, else one line naming the offending key.
    std::string validate() const;
};

const char* precisionName(Precision p); // "native", "f32", "f16", "mixed", "int8", "q4_0", "q4_k_m", ...
// The inverse; throws ProfileError listing the names for anything else.
Precision precisionFromName(const std::string& name);
// Every precision name, in enum order.
std::vector<std::string> precisionNames();
const char* truncationName(Truncation t);

} // namespace mb::engine
