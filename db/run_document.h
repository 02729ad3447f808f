// The run export document (JSON, self-describing and versioned) and the per-request CSV.
#pragma once

#include "db/run_store.h"

#include <nlohmann/json.hpp>

#include <ostream>

namespace mb::db {

inline constexpr const char* kRunDocumentFormat = "modebench-run";
// The document's own version, independent of the database schema version: bump it
// when a field changes meaning or a required field appears; readers accept <= theirs.
// 2: a request's workload index is "id" (lab::toJson(RequestRecord)); 1 said "index".
inline constexpr int kRunDocumentVersion = 2;

// {"format": "modebench-run", "format_version": 2, "schema_version", "exported_at",
//  "run": {id, created_at, name, tags, status, workload, config, environment, summary},
//  "candidates": [{id, label, target_kind, model_path, model_bytes, model_sha256, shape,
//                  profile, summary, series: {metric: [[second, value], ...]},
//                  requests: [lab::toJson(RequestRecord, true): {id, status, error, prompt_tokens,
//                              cached_tokens, truncated_tokens, output_tokens, submitted_ms, scheduled_ms,
//                              first_token_ms, finished_ms, queue_ms, prefill_ms, ttft_ms, tpot_ms, e2e_ms,
//                              kv_bytes_peak, tokens, text, token_times_ms}]}]}
// A request's workload index is "id"; version 1 documents, written before db and lab shared
// one serialiser, say "index", and still import.
// Stored JSON texts (workload, config, environment, shape, profile, summaries) appear
// parsed; a text that is not JSON appears as a string. Times never reached are null.
// queue/ttft/e2e/tpot are derived: written for readers, recomputed on import.
nlohmann::ordered_json exportDocument(const StoredRun& run);

// Validates and reads a document. Throws DbError "import: <json path>: <why>", e.g.
// "import: candidates[0].requests[3].status: expected one of ok, error, cancelled, rejected".
// ids in the document are ignored (the store assigns new ones).
StoredRun runFromDocument(const nlohmann::ordered_json& document);

// One row per request: run_id, candidate, profile, index, status, error, the token
// counts, the four timestamps, queue/ttft/e2e/tpot and kv_bytes_peak. RFC 4180 quoting,
// LF line ends; undefined values are empty cells; numbers in shortest round-trip form.
void writeRunCsv(const StoredRun& run, std::ostream& out);

} // namespace mb::db
