// A recorded run as the store hands it back: the run, its candidates, their requests and series.
//
// Defined in lab (not db) because the selection model and the report model read it, and
// lab sits below db: db::StoredRun is this type. Plain values; copy freely.
#pragma once

#include "lab/request_record.h"
#include "lab/run_sink.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mb::lab {

// Named time series of a candidate: (metric, [(second, value), ...]) — RunSink's shape.
using SeriesList = std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>;

struct StoredCandidate {
    int64_t id = 0;
    CandidateInfo info;
    std::string summaryJson;             // "" until finishCandidate
    int64_t requestCount = 0;            // stored requests (filled for every detail level)
    std::vector<RequestRecord> requests; // by workload index; record.id is that index
    SeriesList series;                   // metrics in name order, points by second
};

struct StoredRun {
    int64_t id = 0;
    std::string createdAt;
    RunInfo info; // name, tags and the JSON texts
    RunStatus status = RunStatus::Running;
    std::string summaryJson; // "" until finishRun
    std::vector<StoredCandidate> candidates;
};

} // namespace mb::lab
