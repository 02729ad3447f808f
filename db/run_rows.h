// Prepared inserts and updates of run data on one connection: what the sink and imports write with.
#pragma once

#include "db/sqlite.h"
#include "lab/run_sink.h"
#include "lab/stored_run.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mb::db {

// Named time series of a candidate: (metric, [(second, value), ...]) — lab::RunSink's shape.
using SeriesList = lab::SeriesList;

// "running" ... "failed" back to the enum; throws DbError on anything else.
lab::RunStatus runStatusFromName(std::string_view name);
lab::RequestStatus requestStatusFromName(std::string_view name);

// Each statement is prepared once and reused, so a batch of requests costs one step per
// row. Uses (does not own) the connection; same thread rules as the connection. The
// caller decides the transactions: these calls open none.
class RowWriter {
public:
    explicit RowWriter(Connection& connection);

    // created_at given (ISO-8601 UTC); empty JSON texts are stored as NULL.
    int64_t insertRun(const lab::RunInfo& info, lab::RunStatus status,
                      const std::string& createdAt);
    void finishRun(int64_t runId, lab::RunStatus status, const std::string& summaryJson);
    int64_t insertCandidate(int64_t runId, const lab::CandidateInfo& info);
    void setCandidateSummary(int64_t candidateId, const std::string& summaryJson);
    // The request row and one token_events row per entry of record.tokenTimesMs. Inside a
    // savepoint, so a failure leaves neither half behind.
    int64_t insertRequest(int64_t candidateId, const lab::RequestRecord& record);
    // Replaces points of the same (metric, second).
    void insertSeries(int64_t candidateId, const SeriesList& series);

private:
    Connection& m_connection;
    Statement m_insertRun, m_finishRun, m_insertCandidate, m_candidateSummary;
    Statement m_insertRequest, m_insertToken, m_insertSeries;
    Statement m_savepoint, m_release, m_rollbackTo;
};

// Generated token ids as stored: int32 little-endian.
std::vector<int32_t> tokensFromBlob(const void* data, size_t bytes);

} // namespace mb::db
