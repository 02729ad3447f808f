// Queries over stored runs: listing, loading (token events in one pass), editing, diffing.
#include "db/run_store.h"

#include "db/run_document.h"
#include "db/run_lock.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace mb::db {

namespace {

std::vector<std::string> parseTags(std::string_view text) {
    std::vector<std::string> tags;
    if (text.empty()) return tags;
    try {
        for (const auto& t : nlohmann::json::parse(text))
            if (t.is_string()) tags.push_back(t.get<std::string>());
    } catch (const nlohmann::json::exception&) {
        // A hand-edited tags column: show no tags rather than fail the whole list.
    }
    return tags;
}

[[noreturn]] void noRun(int64_t id, const std::string& path) {
    throw DbError("no run " + std::to_string(id) + " in " + path);
}

} // namespace

RunStore RunStore::open(const std::string& path, const OpenOptions& options) {
    return RunStore(openDatabase(path, options));
}

std::vector<RunListing> RunStore::listRuns(const RunFilter& f) const {
    std::string where = " WHERE 1";
    if (f.status) where += " AND status = :status";
    if (!f.tag.empty())
        where += " AND EXISTS (SELECT 1 FROM json_each(runs.tags) WHERE json_each.value = :tag)";
    if (!f.nameContains.empty()) where += " AND instr(name, :name) > 0";
    if (!f.createdFrom.empty()) where += " AND created_at >= :from";
    if (!f.createdBefore.empty()) where += " AND created_at < :before";
    const std::string order = " ORDER BY created_at DESC, id DESC" +
                              (f.limit >= 0 ? " LIMIT " + std::to_string(f.limit) : std::string());
    auto bindFilter = [&](Statement& s) {
        auto bindNamed = [&](const char* name, const std::string& value) {
            if (const int i = s.parameterIndex(name); i > 0) s.bind(i, value);
        };
        if (f.status) bindNamed(":status", lab::runStatusName(*f.status));
        bindNamed(":tag", f.tag);
        bindNamed(":name", f.nameContains);
        bindNamed(":from", f.createdFrom);
        bindNamed(":before", f.createdBefore);
    };

    Transaction tx(m_connection, Transaction::Kind::Deferred); // one snapshot for both queries
    std::vector<RunListing> runs;
    std::unordered_map<int64_t, size_t> byId;
    Statement s =
        m_connection.prepare("SELECT id, created_at, name, tags, status FROM runs" + where + order);
    bindFilter(s);
    while (s.step()) {
        RunListing r;
        r.id = s.columnInt(0);
        r.createdAt = s.columnText(1);
        r.name = s.columnText(2);
        r.tags = parseTags(s.columnTextView(3));
        r.status = runStatusFromName(s.columnTextView(4));
        byId.emplace(r.id, runs.size());
        runs.push_back(std::move(r));
    }
    // One pass over the candidates of the selected runs; profile names come from JSON1.
    Statement c =
        m_connection.prepare("SELECT run_id, id, label, CASE WHEN json_valid(profile_json) THEN "
                             "json_extract(profile_json, '$.name') END, "
                             "target_kind, model_path FROM candidates" +
                             (where == " WHERE 1" && f.limit < 0
                                  ? std::string()
                                  : " WHERE run_id IN (SELECT id FROM runs" + where + order + ")") +
                             " ORDER BY run_id, id");
    bindFilter(c);
    while (c.step()) {
        const auto it = byId.find(c.columnInt(0));
        if (it == byId.end()) continue;
        runs[it->second].candidates.push_back(
            {c.columnInt(1), c.columnText(2), c.columnText(3), c.columnText(4), c.columnText(5)});
    }
    return runs;
}

bool RunStore::hasRun(int64_t id) const {
    Statement s = m_connection.prepare("SELECT 1 FROM runs WHERE id = ?");
    s.bind(1, id);
    return s.step();
}

StoredRun RunStore::getRun(int64_t id, RunDetail detail) const {
    Transaction tx(m_connection, Transaction::Kind::Deferred); // one snapshot for every table
    StoredRun run;
    {
        Statement s = m_connection.prepare(
            "SELECT id, created_at, name, tags, status, workload_json, config_json, "
            "environment_json, summary_json FROM runs WHERE id = ?");
        s.bind(1, id);
        if (!s.step()) noRun(id, path());
        run.id = s.columnInt(0);
        run.createdAt = s.columnText(1);
        run.info.name = s.columnText(2);
        run.info.tags = parseTags(s.columnTextView(3));
        run.status = runStatusFromName(s.columnTextView(4));
        run.info.workloadJson = s.columnText(5);
        run.info.configJson = s.columnText(6);
        run.info.environmentJson = s.columnText(7);
        run.summaryJson = s.columnText(8);
    }
    {
        Statement s = m_connection.prepare(
            "SELECT id, label, target_kind, model_path, model_bytes, model_sha256, "
            "shape_json, profile_json, summary_json FROM candidates WHERE run_id = ? "
            "ORDER BY id");
        s.bind(1, id);
        while (s.step()) {
            StoredCandidate c;
            c.id = s.columnInt(0);
            c.info.label = s.columnText(1);
            c.info.targetKind = s.columnText(2);
            c.info.modelPath = s.columnText(3);
            c.info.modelBytes = static_cast<uint64_t>(s.columnInt(4));
            c.info.modelSha256 = s.columnText(5);
            c.info.shapeJson = s.columnText(6);
            c.info.profileJson = s.columnText(7);
            c.summaryJson = s.columnText(8);
            run.candidates.push_back(std::move(c));
        }
    }
    if (detail == RunDetail::Summaries) {
        Statement count =
            m_connection.prepare("SELECT count(*) FROM requests WHERE candidate_id = ?");
        for (StoredCandidate& c : run.candidates) {
            count.bind(1, c.id);
            count.step();
            c.requestCount = count.columnInt(0);
            count.reset();
        }
        return run;
    }

    Statement requests =
        m_connection.prepare("SELECT id, idx, status, error, prompt_tokens, cached_tokens, "
                             "truncated_tokens, output_tokens, submitted_ms, "
                             "scheduled_ms, first_token_ms, finished_ms, kv_bytes_peak, tokens, "
                             "output_text, postprocessed, postprocessed_text, postprocess_status, "
                             "postprocess_ms, postprocess_start_ms, postprocess_max_call_ms, postprocess_calls, output_times, "
                             "images, image_tokens, images_dropped, encode_ms "
                             "FROM requests WHERE candidate_id = ? ORDER BY idx, id");
    // Token events of a candidate's requests in primary-key order: one range scan each.
    Statement tokens = m_connection.prepare(
        "SELECT request_id, time_ms FROM token_events WHERE request_id IN "
        "(SELECT id FROM requests WHERE candidate_id = ?) ORDER BY request_id, token_index");
    Statement series = m_connection.prepare(
        "SELECT metric, second, value FROM series WHERE candidate_id = ? ORDER BY metric, second");
    for (StoredCandidate& c : run.candidates) {
        std::unordered_map<int64_t, size_t> byRowId;
        requests.bind(1, c.id);
        while (requests.step()) {
            lab::RequestRecord r;
            r.id = static_cast<uint64_t>(requests.columnInt(1));
            r.status = requestStatusFromName(requests.columnTextView(2));
            r.error = requests.columnText(3);
            r.promptTokens = requests.columnInt(4);
            r.cachedTokens = requests.columnInt(5);
            r.truncatedTokens = requests.columnInt(6);
            r.outputTokens = requests.columnInt(7);
            r.submittedMs = requests.columnDoubleOrNegative(8);
            r.scheduledMs = requests.columnDoubleOrNegative(9);
            r.firstTokenMs = requests.columnDoubleOrNegative(10);
            r.finishedMs = requests.columnDoubleOrNegative(11);
            r.kvBytesPeak = static_cast<uint64_t>(requests.columnInt(12));
            size_t bytes = 0;
            const void* blob = requests.columnBlobData(13, &bytes);
            r.tokens = tokensFromBlob(blob, bytes);
            r.text = requests.columnText(14);
            r.postprocessed = requests.columnInt(15) != 0;
            r.output = r.postprocessed ? requests.columnText(16) : r.text;
            r.postprocessStatus = requests.columnText(17);
            r.postprocessMs = requests.columnDouble(18);
            r.postprocessStartMs = requests.columnDouble(19);
            r.postprocessMaxCallMs = requests.columnDouble(20);
            r.postprocessCalls = requests.columnInt(21);
            const void* times = requests.columnBlobData(22, &bytes);
            r.outputTimesMs.resize(bytes / sizeof(double));
            if (!r.outputTimesMs.empty()) std::memcpy(r.outputTimesMs.data(), times, r.outputTimesMs.size() * sizeof(double));
            r.images = requests.columnInt(23);
            r.imageTokens = requests.columnInt(24);
            r.imagesDropped = requests.columnInt(25);
            r.encodeMs = requests.columnDouble(26);
            byRowId.emplace(requests.columnInt(0), c.requests.size());
            c.requests.push_back(std::move(r));
        }
        requests.reset();
        c.requestCount = static_cast<int64_t>(c.requests.size());

        tokens.bind(1, c.id);
        int64_t lastId = -1;
        lab::RequestRecord* current = nullptr;
        while (tokens.step()) {
            const int64_t rid = tokens.columnInt(0);
            if (rid != lastId) {
                lastId = rid;
                const auto it = byRowId.find(rid);
                current = it == byRowId.end() ? nullptr : &c.requests[it->second];
                if (current)
                    current->tokenTimesMs.reserve(
                        static_cast<size_t>(std::max<int64_t>(current->outputTokens, 0)));
            }
            if (current) current->tokenTimesMs.push_back(tokens.columnDouble(1));
        }
        tokens.reset();

        series.bind(1, c.id);
        while (series.step()) {
            const std::string_view metric = series.columnTextView(0);
            if (c.series.empty() || c.series.back().first != metric)
                c.series.push_back({std::string(metric), {}});
            c.series.back().second.emplace_back(series.columnDouble(1), series.columnDouble(2));
        }
        series.reset();
    }
    return run;
}

std::vector<StoredSelection> RunStore::deleteRun(int64_t id, SelectionsOfRun policy) {
    Transaction tx(m_connection, Transaction::Kind::Immediate);
    Statement s = m_connection.prepare("SELECT status FROM runs WHERE id = ?");
    s.bind(1, id);
    if (!s.step()) noRun(id, path());
    if (s.columnTextView(0) == "running" && RunLock::isHeld(m_connection.filename(), id))
        throw DbError("run " + std::to_string(id) + " is still being written; stop it first");
    s.reset();
    // Read inside the write transaction: no selection can be saved between this and the delete.
    std::vector<StoredSelection> selections = listSelections(id);
    if (policy == SelectionsOfRun::Refuse && !selections.empty()) {
        std::string what = "run " + std::to_string(id) + " is part of saved selection" +
                           (selections.size() == 1 ? " " : "s ");
        for (size_t i = 0; i < selections.size(); ++i)
            what += (i == 0 ? "#" : ", #") + std::to_string(selections[i].id);
        throw RunHasSelectionsError(what, std::move(selections));
    }
    // Candidates, requests, token events, series and reports go by ON DELETE CASCADE; selections
    // that pooled the run by the trigger selections_follow_runs.
    Statement d = m_connection.prepare("DELETE FROM runs WHERE id = ?");
    d.bind(1, id).run();
    tx.commit();
    return selections;
}

void RunStore::renameRun(int64_t id, const std::string& name) {
    Statement s = m_connection.prepare("UPDATE runs SET name = ? WHERE id = ?");
    s.bindAll(name, id).run();
    if (m_connection.changes() == 0) noRun(id, path());
}

void RunStore::setTags(int64_t id, const std::vector<std::string>& tags) {
    Statement s = m_connection.prepare("UPDATE runs SET tags = ? WHERE id = ?");
    s.bindAll(nlohmann::json(tags).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
              id)
        .run();
    if (m_connection.changes() == 0) noRun(id, path());
}

nlohmann::ordered_json RunStore::exportRun(int64_t id) const {
    return exportDocument(getRun(id, RunDetail::Full));
}

int64_t RunStore::importRun(const nlohmann::ordered_json& document) {
    StoredRun run = runFromDocument(document);
    if (run.status == lab::RunStatus::Running)
        run.status = lab::RunStatus::Interrupted; // no writer comes with it
    return insert(run);
}

int64_t RunStore::insert(const StoredRun& run) {
    Transaction tx(m_connection, Transaction::Kind::Immediate);
    RowWriter rows(m_connection);
    const int64_t runId = rows.insertRun(run.info, run.status, run.createdAt);
    rows.finishRun(runId, run.status, run.summaryJson);
    for (const StoredCandidate& c : run.candidates) {
        const int64_t cid = rows.insertCandidate(runId, c.info);
        if (!c.summaryJson.empty()) rows.setCandidateSummary(cid, c.summaryJson);
        for (const auto& r : c.requests) rows.insertRequest(cid, r);
        rows.insertSeries(cid, c.series);
    }
    tx.commit();
    return runId;
}

// ---- diff ----

namespace {

struct DiffMetricDef {
    const char* key;
    const char* title;
    const char* pointer;
    int precision;
    double scale;
};

constexpr DiffMetricDef kDiffMetrics[] = {
    {"requests", "requests", "/requests", 0, 1},
    {"ok", "requests ok", "/ok", 0, 1},
    {"errors", "errors", "/errors", 0, 1},
    {"rejected", "rejected", "/rejected", 0, 1},
    {"truncated", "truncated requests", "/truncated", 0, 1},
    {"ttft_ms.p50", "TTFT p50 (ms)", "/ttft_ms/p50", 1, 1},
    {"ttft_ms.p95", "TTFT p95 (ms)", "/ttft_ms/p95", 1, 1},
    {"ttft_ms.p99", "TTFT p99 (ms)", "/ttft_ms/p99", 1, 1},
    {"tpot_ms.p50", "TPOT p50 (ms)", "/tpot_ms/p50", 2, 1},
    {"itl_ms.p99", "ITL p99 (ms)", "/itl_ms/p99", 2, 1},
    {"e2e_ms.p50", "e2e p50 (ms)", "/e2e_ms/p50", 1, 1},
    {"e2e_ms.p99", "e2e p99 (ms)", "/e2e_ms/p99", 1, 1},
    {"queue_ms.p50", "queue p50 (ms)", "/queue_ms/p50", 1, 1},
    {"output_tokens_per_s", "output tokens/s", "/output_tokens_per_s", 1, 1},
    {"requests_per_s", "requests/s", "/requests_per_s", 2, 1},
    {"goodput_per_s", "goodput/s", "/goodput_per_s", 2, 1},
    {"prefix_cache.hit_rate", "prefix hit rate", "/prefix_cache/hit_rate", 3, 1},
    {"kv_bytes_peak_mib", "KV peak (MiB)", "/kv_bytes_peak", 1, 1.0 / 1048576.0},
    {"duration_s", "duration (s)", "/duration_s", 2, 1},
};

std::string profileName(const std::string& profileJson) {
    try {
        const auto j = nlohmann::json::parse(profileJson);
        if (j.is_object() && j.contains("name") && j["name"].is_string())
            return j["name"].get<std::string>();
    } catch (const nlohmann::json::exception&) {
    }
    return {};
}

} // namespace

RunDiff RunStore::metricsTable(const std::vector<int64_t>& runIds) const {
    RunDiff diff;
    for (const auto& m : kDiffMetrics) diff.metrics.push_back({m.key, m.title, m.precision});
    for (const int64_t id : runIds) {
        const StoredRun run = getRun(id, RunDetail::Summaries);
        for (const StoredCandidate& c : run.candidates) {
            RunDiff::Column col{
                run.id, run.info.name, c.info.label, profileName(c.info.profileJson), {}};
            nlohmann::json summary;
            try {
                if (!c.summaryJson.empty()) summary = nlohmann::json::parse(c.summaryJson);
            } catch (const nlohmann::json::exception&) {
            }
            for (const auto& m : kDiffMetrics) {
                std::optional<double> v;
                const nlohmann::json::json_pointer ptr(m.pointer);
                if (summary.is_object() && summary.contains(ptr) && summary[ptr].is_number())
                    v = summary[ptr].get<double>() * m.scale;
                col.values.push_back(v);
            }
            diff.columns.push_back(std::move(col));
        }
    }
    return diff;
}

nlohmann::ordered_json RunDiff::toJson() const {
    nlohmann::ordered_json j;
    j["metrics"] = nlohmann::ordered_json::array();
    for (const auto& m : metrics) j["metrics"].push_back({{"key", m.key}, {"title", m.title}});
    j["columns"] = nlohmann::ordered_json::array();
    for (const auto& c : columns) {
        nlohmann::ordered_json values;
        for (size_t i = 0; i < metrics.size(); ++i)
            values[metrics[i].key] =
                c.values[i] ? nlohmann::ordered_json(*c.values[i]) : nlohmann::ordered_json();
        j["columns"].push_back({{"run_id", c.runId},
                                {"run_name", c.runName},
                                {"label", c.label},
                                {"profile", c.profile},
                                {"values", values}});
    }
    return j;
}

} // namespace mb::db
