// Synthetic stored runs for the selection, migration and report tests: no model, no store.
#pragma once

#include "lab/stored_run.h"

#include <string>
#include <vector>

namespace mb::test {

// How one candidate behaves on every request of a synthetic run.
struct Behaviour {
    double ttftMs = 100;   // first token after submit
    double gapMs = 10;     // between output tokens
    int outputTokens = 4;
    int64_t promptTokens = 100;
    int64_t cachedTokens = 0;
    int64_t truncatedTokens = 0;
    double jitterMs = 0; // request i adds (i % 5) × jitter to its TTFT
};

inline lab::RequestRecord syntheticRecord(uint64_t i, const Behaviour& b) {
    lab::RequestRecord r;
    r.id = i;
    r.promptTokens = b.promptTokens;
    r.cachedTokens = b.cachedTokens;
    r.truncatedTokens = b.truncatedTokens;
    r.outputTokens = b.outputTokens;
    // One request at a time, a second apart: a closed loop of concurrency 1.
    r.submittedMs = 1000.0 * static_cast<double>(i);
    r.scheduledMs = r.submittedMs + 1;
    const double ttft = b.ttftMs + static_cast<double>(i % 5) * b.jitterMs;
    for (int k = 0; k < b.outputTokens; ++k) {
        r.tokenTimesMs.push_back(r.submittedMs + ttft + b.gapMs * k);
        r.tokens.push_back(100 + k);
    }
    r.firstTokenMs = r.tokenTimesMs.front();
    r.finishedMs = r.tokenTimesMs.back() + 0.5;
    r.kvBytesPeak = 1 << 20;
    return r;
}

inline lab::StoredCandidate syntheticCandidate(const std::string& label, const std::string& profileJson,
                                               const Behaviour& b, int requests) {
    lab::StoredCandidate c;
    c.info.label = label;
    c.info.targetKind = "embedded";
    c.info.modelPath = "/models/synthetic.gguf";
    c.info.profileJson = profileJson;
    c.info.shapeJson = R"({"dim":64,"layers":5})";
    for (int i = 0; i < requests; ++i) c.requests.push_back(syntheticRecord(static_cast<uint64_t>(i), b));
    c.requestCount = requests;
    c.summaryJson = R"({"ok":)" + std::to_string(requests) + "}";
    c.series = {{"hit_rate", {{0, 0.5}, {1, 0.6}}}, {"throughput", {{0, 4}, {1, 4}}}, {"ttft_ms", {{0, b.ttftMs}}}};
    return c;
}

inline constexpr const char* kFastProfile = R"({"name":"fast","base":"fast","reload":"after_warmup","batching":"off","max_context":32768})";
inline constexpr const char* kRegularProfile = R"({"name":"regular","base":"regular","reload":"hot","batching":"dynamic","max_context":131072})";

// A complete run: candidate "a" fast, "b" regular, `requests` requests each.
inline lab::StoredRun syntheticRun(int64_t id, const Behaviour& fast, const Behaviour& regular, int requests = 40) {
    lab::StoredRun run;
    run.id = id;
    run.createdAt = "2024-05-01T12:00:00.000Z";
    run.info.name = "synthetic " + std::to_string(id);
    run.info.workloadJson = R"({"name":"shared-prefix","seed":42})";
    run.info.configJson = R"({"interleave":false})";
    run.info.environmentJson = R"({"cpu":"test cpu","threads":2,"build":"Release"})";
    run.status = lab::RunStatus::Complete;
    run.candidates.push_back(syntheticCandidate("a", kFastProfile, fast, requests));
    run.candidates.push_back(syntheticCandidate("b", kRegularProfile, regular, requests));
    return run;
}

} // namespace mb::test
