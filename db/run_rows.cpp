// The store's hot inserts: one prepared statement per table, reused for every row.
#include "db/run_rows.h"

#include <nlohmann/json.hpp>

#include <bit>
#include <cstring>

namespace mb::db {

static_assert(std::endian::native == std::endian::little,
              "token blobs are written as native int32");

lab::RunStatus runStatusFromName(std::string_view name) {
    for (auto s : {lab::RunStatus::Running, lab::RunStatus::Complete, lab::RunStatus::Interrupted,
                   lab::RunStatus::Failed})
        if (name == lab::runStatusName(s)) return s;
    throw DbError("unknown run status '" + std::string(name) +
                  "' (running, complete, interrupted or failed)");
}

lab::RequestStatus requestStatusFromName(std::string_view name) {
    for (auto s : {lab::RequestStatus::Ok, lab::RequestStatus::Error, lab::RequestStatus::Cancelled,
                   lab::RequestStatus::Rejected})
        if (name == lab::requestStatusName(s)) return s;
    throw DbError("unknown request status '" + std::string(name) +
                  "' (ok, error, cancelled or rejected)");
}

std::vector<int32_t> tokensFromBlob(const void* data, size_t bytes) {
    std::vector<int32_t> tokens(bytes / sizeof(int32_t));
    if (!tokens.empty()) std::memcpy(tokens.data(), data, tokens.size() * sizeof(int32_t));
    return tokens;
}

RowWriter::RowWriter(Connection& c)
    : m_connection(c),
      m_insertRun(
          c.prepare("INSERT INTO runs (created_at, name, tags, status, workload_json, config_json, "
                    "environment_json) VALUES (?, ?, ?, ?, ?, ?, ?)")),
      m_finishRun(c.prepare("UPDATE runs SET status = ?, summary_json = ? WHERE id = ?")),
      m_insertCandidate(
          c.prepare("INSERT INTO candidates (run_id, label, target_kind, model_path, model_bytes, "
                    "model_sha256, shape_json, profile_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")),
      m_candidateSummary(c.prepare("UPDATE candidates SET summary_json = ? WHERE id = ?")),
      m_insertRequest(c.prepare("INSERT INTO requests (candidate_id, idx, status, error, "
                                "prompt_tokens, cached_tokens, truncated_tokens, "
                                "output_tokens, submitted_ms, scheduled_ms, first_token_ms, "
                                "finished_ms, queue_ms, ttft_ms, e2e_ms, "
                                "tpot_ms, kv_bytes_peak, tokens, output_text, postprocessed, "
                                "postprocessed_text, postprocess_status, postprocess_ms, postprocess_start_ms, "
                                "postprocess_max_call_ms, postprocess_calls, output_times, images, image_tokens, "
                                "images_dropped, encode_ms) VALUES (?, ?, ?, ?, "
                                "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")),
      m_insertToken(c.prepare(
          "INSERT INTO token_events (request_id, token_index, time_ms) VALUES (?, ?, ?)")),
      m_insertSeries(c.prepare("INSERT OR REPLACE INTO series (candidate_id, metric, second, "
                               "value) VALUES (?, ?, ?, ?)")),
      m_savepoint(c.prepare("SAVEPOINT request")), m_release(c.prepare("RELEASE request")),
      m_rollbackTo(c.prepare("ROLLBACK TO request")) {}

namespace {
std::string tagsJson(const std::vector<std::string>& tags) {
    return nlohmann::json(tags).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
} // namespace

int64_t RowWriter::insertRun(const lab::RunInfo& info, lab::RunStatus status,
                             const std::string& createdAt) {
    m_insertRun.bind(1, createdAt)
        .bind(2, info.name)
        .bind(3, tagsJson(info.tags))
        .bind(4, lab::runStatusName(status));
    m_insertRun.bindTextOrNull(5, info.workloadJson).bindTextOrNull(6, info.configJson);
    m_insertRun.bindTextOrNull(7, info.environmentJson);
    m_insertRun.run();
    return m_connection.lastInsertId();
}

void RowWriter::finishRun(int64_t runId, lab::RunStatus status, const std::string& summaryJson) {
    m_finishRun.bind(1, lab::runStatusName(status)).bindTextOrNull(2, summaryJson).bind(3, runId);
    m_finishRun.run();
    if (m_connection.changes() == 0)
        throw DbError("no run " + std::to_string(runId) + " in " + m_connection.path());
}

int64_t RowWriter::insertCandidate(int64_t runId, const lab::CandidateInfo& info) {
    m_insertCandidate.bindAll(runId, info.label, info.targetKind, info.modelPath, info.modelBytes,
                              info.modelSha256);
    m_insertCandidate.bindTextOrNull(7, info.shapeJson).bindTextOrNull(8, info.profileJson);
    m_insertCandidate.run();
    return m_connection.lastInsertId();
}

void RowWriter::setCandidateSummary(int64_t candidateId, const std::string& summaryJson) {
    m_candidateSummary.bindTextOrNull(1, summaryJson).bind(2, candidateId);
    m_candidateSummary.run();
    if (m_connection.changes() == 0)
        throw DbError("no candidate " + std::to_string(candidateId) + " in " + m_connection.path());
}

int64_t RowWriter::insertRequest(int64_t candidateId, const lab::RequestRecord& r) {
    m_savepoint.run();
    try {
        Statement& s = m_insertRequest;
        s.bindAll(candidateId, r.id, lab::requestStatusName(r.status), r.error, r.promptTokens,
                  r.cachedTokens, r.truncatedTokens, r.outputTokens);
        int i = 9;
        for (double v : {r.submittedMs, r.scheduledMs, r.firstTokenMs, r.finishedMs, r.queueMs(),
                         r.ttftMs(), r.e2eMs(), r.tpotMs()})
            s.bindNonNegativeOrNull(i++, v);
        s.bind(17, r.kvBytesPeak);
        s.bindBlob(18, r.tokens.data(), r.tokens.size() * sizeof(int32_t));
        s.bind(19, r.text);
        s.bind(20, int64_t{r.postprocessed ? 1 : 0});
        s.bind(21, r.postprocessed ? r.output : std::string());
        s.bind(22, r.postprocessStatus);
        s.bind(23, r.postprocessMs);
        s.bind(24, r.postprocessStartMs);
        s.bind(25, r.postprocessMaxCallMs);
        s.bind(26, r.postprocessCalls);
        s.bindBlob(27, r.outputTimesMs.data(), r.outputTimesMs.size() * sizeof(double));
        s.bind(28, r.images);
        s.bind(29, r.imageTokens);
        s.bind(30, r.imagesDropped);
        s.bind(31, r.encodeMs);
        s.run();
        const int64_t id = m_connection.lastInsertId();
        for (size_t k = 0; k < r.tokenTimesMs.size(); ++k) {
            m_insertToken.bindInt(1, id)
                .bindInt(2, static_cast<int64_t>(k))
                .bind(3, r.tokenTimesMs[k]);
            m_insertToken.run();
        }
        m_release.run();
        return id;
    } catch (...) {
        m_insertRequest.reset();
        m_insertToken.reset();
        m_rollbackTo.run();
        m_release.run();
        throw;
    }
}

void RowWriter::insertSeries(int64_t candidateId, const SeriesList& series) {
    for (const auto& [metric, points] : series)
        for (const auto& [second, value] : points)
            m_insertSeries.bindAll(candidateId, metric, second, value).run();
}

} // namespace mb::db
