// Where runs are recorded as they happen: declared here, implemented by the store (db/).
#pragma once

#include "lab/request_record.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mb::lab {

enum class RunStatus { Running, Complete, Interrupted, Failed };
const char* runStatusName(RunStatus s); // "running", "complete", "interrupted", "failed"

struct RunInfo {
    std::string name;
    std::vector<std::string> tags;
    std::string workloadJson;    // the workload spec (lab::toJson(WorkloadSpec))
    std::string configJson;      // options of the comparison (sampling, arrival, interleave, ...)
    std::string environmentJson; // machine, build, devices
};

struct CandidateInfo {
    std::string label;          // "a", "b"
    std::string targetKind;     // "embedded" (later "remote")
    std::string modelPath;
    uint64_t modelBytes = 0;
    std::string modelSha256;    // hex; may be empty when not computed
    std::string shapeJson;      // dim, layers, heads, ...
    std::string profileJson;    // engine::Profile::toJson()
};

// Thread-safe: requestFinished and seriesPoint may be called from the target's event
// threads while the runner's thread calls the others. Implementations buffer and commit
// in batches (never a transaction per token); what was committed survives a crash.
// Errors while writing are reported by throwing from the next call on the caller's
// thread (beginRun, addCandidate, finishCandidate, finishRun, flush), never from
// requestFinished on an event thread.
class RunSink {
public:
    virtual ~RunSink() = default;
    virtual int64_t beginRun(const RunInfo& info) = 0;                          // run id
    virtual int64_t addCandidate(int64_t runId, const CandidateInfo& info) = 0; // candidate id
    // A finished request of a candidate, with its token times (token_events rows).
    virtual void requestFinished(int64_t candidateId, const RequestRecord& record) = 0;
    // Time-series points (1-second buckets) and the summary, when a candidate is done.
    virtual void finishCandidate(int64_t candidateId, const std::string& summaryJson,
                                 const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series) = 0;
    virtual void finishRun(int64_t runId, RunStatus status, const std::string& summaryJson) = 0;
    // Commits everything buffered so far.
    virtual void flush() = 0;
};

} // namespace mb::lab
