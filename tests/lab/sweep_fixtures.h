// Synthetic load-sweep runs (compare --sweep's stored shape) for the capacity, report and GUI tests.
#pragma once

#include "lab/capacity.h"
#include "selection_fixtures.h"

#include <string>
#include <vector>

namespace mb::test {

using lab::RequestRecord;
using lab::RequestStatus;
using lab::RunStatus;
using lab::StoredCandidate;
using lab::StoredRun;
using lab::SweepKind;
using lab::SweepTag;

// How one candidate does at one load level: requests every `spacingMs`, each with this TTFT.
struct Level {
    double spacingMs = 100; // 10 requests/s achieved (40 requests over ~4 s)
    double ttftMs = 50;
    int rejected = 0; // the first `rejected` requests are rejected
    double waiting = 0; // the queue-depth series' value every second
};

inline StoredCandidate levelCandidate(const std::string& label, const char* profile, const Level& l, int requests = 40) {
    StoredCandidate c;
    c.info.label = label;
    c.info.targetKind = "embedded";
    c.info.profileJson = profile;
    c.info.shapeJson = R"({"dim":64,"layers":5})";
    for (int i = 0; i < requests; ++i) {
        RequestRecord r;
        r.id = static_cast<uint64_t>(i);
        r.promptTokens = 100;
        r.outputTokens = 2;
        r.submittedMs = l.spacingMs * i;
        if (i < l.rejected) {
            r.status = RequestStatus::Rejected;
            r.finishedMs = r.submittedMs;
        } else {
            r.scheduledMs = r.submittedMs + 1;
            r.tokenTimesMs = {r.submittedMs + l.ttftMs, r.submittedMs + l.ttftMs + 5};
            r.tokens = {10, 11};
            r.firstTokenMs = r.tokenTimesMs.front();
            r.finishedMs = r.tokenTimesMs.back();
        }
        r.kvBytesPeak = 1 << 20;
        c.requests.push_back(r);
    }
    c.requestCount = requests;
    c.summaryJson = R"({"kv_bytes_capacity": 4194304})";
    std::vector<std::pair<double, double>> waiting;
    for (int s = 0; s < 4; ++s) waiting.emplace_back(s, l.waiting);
    c.series = {{"queue_depth", waiting}};
    return c;
}

inline StoredRun sweepRun(int64_t id, SweepKind kind, double level, const Level& fast, const Level& regular) {
    StoredRun run;
    run.id = id;
    run.info.name = "sweep " + std::to_string(id);
    run.info.workloadJson = R"({"name":"chat","seed":1})";
    SweepTag tag{kind, level, static_cast<int>(id), false};
    run.info.configJson = nlohmann::ordered_json{{"sweep", lab::toJson(tag)}}.dump();
    run.status = RunStatus::Complete;
    run.candidates.push_back(levelCandidate("a", kFastProfile, fast));
    run.candidates.push_back(levelCandidate("b", kRegularProfile, regular));
    return run;
}

// Concurrency 1, 2, 4, 8: fast serves 10, 20, 38, 40 requests/s with TTFT 50, 60, 80, 400 ms;
// regular 5, 9, 12, 12 requests/s with TTFT 150, 240, 600, 900 ms.
inline std::vector<StoredRun> concurrencySweep(int64_t firstId = 10) {
    const double fastSpacing[] = {100, 50, 26.3, 25}, fastTtft[] = {50, 60, 80, 400};
    const double regSpacing[] = {200, 111, 83.3, 83.3}, regTtft[] = {150, 240, 600, 900};
    const double waiting[] = {0, 1, 3, 7};
    std::vector<StoredRun> runs;
    for (int i = 0; i < 4; ++i)
        runs.push_back(sweepRun(firstId + i, SweepKind::Concurrency, double(1 << i),
                                {fastSpacing[i], fastTtft[i], 0, waiting[i]},
                                {regSpacing[i], regTtft[i], 0, waiting[i]}));
    return runs;
}

} // namespace mb::test
