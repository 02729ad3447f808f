// Run export/import as a versioned JSON document, with path-naming validation, and the CSV writer.
#include "db/run_document.h"

#include "db/schema.h"
#include "lab/metrics.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

namespace mb::db {

using Json = nlohmann::ordered_json;

namespace {

// A stored JSON text as a value: parsed, null when empty, a string when it is not JSON.
Json jsonOf(const std::string& text) {
    if (text.empty()) return nullptr;
    try {
        return Json::parse(text);
    } catch (const Json::exception&) {
        return text;
    }
}

// The inverse of jsonOf.
std::string textOf(const Json& v) {
    if (v.is_null()) return {};
    if (v.is_string()) return v.get<std::string>();
    return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// ---- validation ----

[[noreturn]] void bad(const std::string& path, const std::string& why) {
    throw DbError("import: " + (path.empty() ? std::string("document") : path) + ": " + why);
}

std::string child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}
std::string item(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

const char* typeName(const Json& v) {
    return v.type_name();
}

bool isLowerHex64(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// YYYY-MM-DDTHH:MM:SS, optional .fraction, then Z or ±HH:MM.
bool isIso8601(const std::string& s) {
    auto digits = [&](size_t at, size_t n) {
        if (at + n > s.size()) return false;
        for (size_t i = at; i < at + n; ++i)
            if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
        return true;
    };
    auto is = [&](size_t at, char c) { return at < s.size() && s[at] == c; };
    if (!(digits(0, 4) && is(4, '-') && digits(5, 2) && is(7, '-') && digits(8, 2) && is(10, 'T') &&
          digits(11, 2) && is(13, ':') && digits(14, 2) && is(16, ':') && digits(17, 2)))
        return false;
    size_t i = 19;
    if (is(i, '.')) {
        const size_t start = ++i;
        while (digits(i, 1)) ++i;
        if (i == start) return false;
    }
    if (is(i, 'Z')) return i + 1 == s.size();
    return (is(i, '+') || is(i, '-')) && digits(i + 1, 2) && is(i + 3, ':') && digits(i + 4, 2) &&
           i + 6 == s.size();
}

// A view of one JSON object that names the path of whatever is wrong.
class Obj {
public:
    Obj(const Json& v, std::string path) : m_v(v), m_path(std::move(path)) {
        if (!v.is_object()) bad(m_path, std::string("expected an object, got ") + typeName(v));
    }
    const Json* find(const char* key) const {
        const auto it = m_v.find(key);
        return it == m_v.end() ? nullptr : &*it;
    }
    const Json& need(const char* key) const {
        const Json* v = find(key);
        if (!v) bad(m_path, std::string("missing \"") + key + "\"");
        return *v;
    }
    std::string path(const char* key) const { return child(m_path, key); }

    std::string str(const char* key, bool required, const std::string& fallback = {}) const {
        const Json* v = required ? &need(key) : find(key);
        if (!v || v->is_null()) return fallback;
        if (!v->is_string()) bad(path(key), std::string("expected a string, got ") + typeName(*v));
        return v->get<std::string>();
    }
    int64_t integer(const char* key, bool required, int64_t min = 0) const {
        const Json* v = required ? &need(key) : find(key);
        if (!v || v->is_null()) return 0;
        if (!v->is_number_integer())
            bad(path(key), std::string("expected an integer, got ") + typeName(*v));
        if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
            bad(path(key), "out of range");
        const auto n = v->get<int64_t>();
        if (n < min)
            bad(path(key), "must be >= " + std::to_string(min) + ", got " + std::to_string(n));
        return n;
    }
    // -1 for null or absent (a time that never happened).
    double timeOrNegative(const char* key) const {
        const Json* v = find(key);
        if (!v || v->is_null()) return -1;
        if (!v->is_number())
            bad(path(key), std::string("expected a number or null, got ") + typeName(*v));
        const double d = v->get<double>();
        if (d < 0) bad(path(key), "a time cannot be negative (use null)");
        return d;
    }
    const Json& array(const char* key, bool required) const {
        static const Json kEmpty = Json::array();
        const Json* v = required ? &need(key) : find(key);
        if (!v || v->is_null()) return kEmpty;
        if (!v->is_array()) bad(path(key), std::string("expected an array, got ") + typeName(*v));
        return *v;
    }
    // A stored JSON text: anything goes, kept as text.
    std::string jsonText(const char* key) const {
        const Json* v = find(key);
        return v ? textOf(*v) : std::string();
    }

private:
    const Json& m_v;
    std::string m_path;
};

lab::RequestRecord requestFromJson(const Json& v, const std::string& path) {
    const Obj o(v, path);
    lab::RequestRecord r;
    // "id", as lab::toJson writes it; documents exported before it was shared say "index".
    r.id = static_cast<uint64_t>(o.integer(o.find("id") || !o.find("index") ? "id" : "index", true));
    try {
        r.status = requestStatusFromName(o.str("status", true));
    } catch (const DbError&) {
        bad(o.path("status"), "expected one of ok, error, cancelled, rejected");
    }
    r.error = o.str("error", false);
    r.promptTokens = o.integer("prompt_tokens", false);
    r.cachedTokens = o.integer("cached_tokens", false);
    r.truncatedTokens = o.integer("truncated_tokens", false);
    r.outputTokens = o.integer("output_tokens", false);
    r.submittedMs = o.timeOrNegative("submitted_ms");
    r.scheduledMs = o.timeOrNegative("scheduled_ms");
    r.firstTokenMs = o.timeOrNegative("first_token_ms");
    r.finishedMs = o.timeOrNegative("finished_ms");
    r.kvBytesPeak = static_cast<uint64_t>(o.integer("kv_bytes_peak", false));
    const Json& tokens = o.array("tokens", false);
    for (size_t i = 0; i < tokens.size(); ++i) {
        const Json& t = tokens[i];
        if (!t.is_number_integer() || t.get<int64_t>() < INT32_MIN || t.get<int64_t>() > INT32_MAX)
            bad(item(o.path("tokens"), i), "expected a 32-bit integer token id");
        r.tokens.push_back(t.get<int32_t>());
    }
    r.text = o.str("text", false);
    r.output = o.str("output", false, r.text);
    r.postprocessMs = std::max(0.0, o.timeOrNegative("postprocess_ms"));
    r.images = o.integer("images", false);
    r.imageTokens = o.integer("image_tokens", false);
    r.imagesDropped = o.integer("images_dropped", false);
    r.encodeMs = std::max(0.0, o.timeOrNegative("encode_ms"));
    if (const Json* p = o.find("postprocess"); p && !p->is_null()) {
        const Obj pp(*p, o.path("postprocess"));
        r.postprocessed = true;
        const std::string status = pp.str("status", false, "ok");
        r.postprocessStatus = status == "ok" ? std::string() : status;
        r.postprocessCalls = pp.integer("calls", false);
        r.postprocessStartMs = std::max(0.0, pp.timeOrNegative("start_ms"));
        r.postprocessMaxCallMs = std::max(0.0, pp.timeOrNegative("max_call_ms"));
        const Json& shown = pp.array("output_times_ms", false);
        for (size_t i = 0; i < shown.size(); ++i) {
            if (!shown[i].is_number()) bad(item(pp.path("output_times_ms"), i), "expected a number");
            r.outputTimesMs.push_back(shown[i].get<double>());
        }
    }
    const Json& times = o.array("token_times_ms", false);
    for (size_t i = 0; i < times.size(); ++i) {
        if (!times[i].is_number()) bad(item(o.path("token_times_ms"), i), "expected a number");
        r.tokenTimesMs.push_back(times[i].get<double>());
    }
    return r;
}

StoredCandidate candidateFromJson(const Json& v, const std::string& path) {
    const Obj o(v, path);
    StoredCandidate c;
    c.info.label = o.str("label", true);
    if (c.info.label.empty()) bad(o.path("label"), "must not be empty");
    c.info.targetKind = o.str("target_kind", false, "embedded");
    c.info.modelPath = o.str("model_path", false);
    c.info.modelBytes = static_cast<uint64_t>(o.integer("model_bytes", false));
    c.info.modelSha256 = o.str("model_sha256", false);
    if (!c.info.modelSha256.empty() && !isLowerHex64(c.info.modelSha256))
        bad(o.path("model_sha256"), "expected 64 lowercase hex digits");
    c.info.shapeJson = o.jsonText("shape");
    c.info.profileJson = o.jsonText("profile");
    c.summaryJson = o.jsonText("summary");
    if (const Json* series = o.find("series"); series && !series->is_null()) {
        const Obj s(*series, o.path("series"));
        for (const auto& [metric, points] : series->items()) {
            const std::string p = s.path(metric.c_str());
            if (!points.is_array())
                bad(p,
                    std::string("expected an array of [second, value], got ") + typeName(points));
            std::vector<std::pair<double, double>> pts;
            for (size_t i = 0; i < points.size(); ++i) {
                const Json& pt = points[i];
                if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number())
                    bad(item(p, i), "expected [second, value]");
                pts.emplace_back(pt[0].get<double>(), pt[1].get<double>());
            }
            c.series.emplace_back(metric, std::move(pts));
        }
    }
    const Json& requests = o.array("requests", false);
    std::set<uint64_t> seen;
    for (size_t i = 0; i < requests.size(); ++i) {
        const std::string p = item(o.path("requests"), i);
        c.requests.push_back(requestFromJson(requests[i], p));
        if (!seen.insert(c.requests.back().id).second)
            bad(p + ".id", "id " + std::to_string(c.requests.back().id) + " appears twice");
    }
    return c;
}

} // namespace

Json exportDocument(const StoredRun& run) {
    Json doc;
    doc["format"] = kRunDocumentFormat;
    doc["format_version"] = kRunDocumentVersion;
    doc["schema_version"] = latestSchemaVersion();
    doc["exported_at"] = isoNowUtc();
    Json r;
    r["id"] = run.id;
    r["created_at"] = run.createdAt;
    r["name"] = run.info.name;
    r["tags"] = run.info.tags;
    r["status"] = lab::runStatusName(run.status);
    r["workload"] = jsonOf(run.info.workloadJson);
    r["config"] = jsonOf(run.info.configJson);
    r["environment"] = jsonOf(run.info.environmentJson);
    r["summary"] = jsonOf(run.summaryJson);
    doc["run"] = std::move(r);
    Json candidates = Json::array();
    for (const StoredCandidate& c : run.candidates) {
        Json j;
        j["id"] = c.id;
        j["label"] = c.info.label;
        j["target_kind"] = c.info.targetKind;
        j["model_path"] = c.info.modelPath;
        j["model_bytes"] = c.info.modelBytes;
        j["model_sha256"] = c.info.modelSha256;
        j["shape"] = jsonOf(c.info.shapeJson);
        j["profile"] = jsonOf(c.info.profileJson);
        j["summary"] = jsonOf(c.summaryJson);
        Json series = Json::object();
        for (const auto& [metric, points] : c.series) {
            Json pts = Json::array();
            for (const auto& [second, value] : points) pts.push_back({second, value});
            series[metric] = std::move(pts);
        }
        j["series"] = std::move(series);
        Json requests = Json::array();
        for (const auto& rec : c.requests) requests.push_back(lab::toJson(rec, true)); // lab's one request serialiser
        j["requests"] = std::move(requests);
        candidates.push_back(std::move(j));
    }
    doc["candidates"] = std::move(candidates);
    return doc;
}

StoredRun runFromDocument(const Json& document) {
    const Obj doc(document, "");
    const std::string format = doc.str("format", true);
    if (format != kRunDocumentFormat)
        bad("format",
            std::string("expected \"") + kRunDocumentFormat + "\", got \"" + format + "\"");
    const int64_t version = doc.integer("format_version", true, 1);
    if (version > kRunDocumentVersion)
        bad("format_version", std::to_string(version) + " is newer than this build reads (" +
                                  std::to_string(kRunDocumentVersion) +
                                  "); import it with a newer ModeBench");

    const Obj r(doc.need("run"), "run");
    StoredRun run;
    run.createdAt = r.str("created_at", true);
    if (!isIso8601(run.createdAt))
        bad(r.path("created_at"),
            "expected ISO-8601 like 2024-05-01T12:00:00.000Z, got \"" + run.createdAt + "\"");
    run.info.name = r.str("name", false);
    const Json& tags = r.array("tags", false);
    for (size_t i = 0; i < tags.size(); ++i) {
        if (!tags[i].is_string()) bad(item(r.path("tags"), i), "expected a string");
        run.info.tags.push_back(tags[i].get<std::string>());
    }
    try {
        run.status = runStatusFromName(r.str("status", true));
    } catch (const DbError&) {
        bad(r.path("status"), "expected one of running, complete, interrupted, failed");
    }
    run.info.workloadJson = r.jsonText("workload");
    run.info.configJson = r.jsonText("config");
    run.info.environmentJson = r.jsonText("environment");
    run.summaryJson = r.jsonText("summary");

    const Json& candidates = doc.array("candidates", true);
    std::set<std::string> labels;
    for (size_t i = 0; i < candidates.size(); ++i) {
        const std::string p = item("candidates", i);
        run.candidates.push_back(candidateFromJson(candidates[i], p));
        if (!labels.insert(run.candidates.back().info.label).second)
            bad(p + ".label", "label \"" + run.candidates.back().info.label + "\" appears twice");
    }
    return run;
}

// ---- CSV ----

namespace {

std::string csvCell(std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string number(double v) {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

std::string orEmpty(double v) {
    return v < 0 ? std::string() : number(v);
}

std::string profileNameOf(const std::string& profileJson) {
    const Json j = jsonOf(profileJson);
    return j.is_object() && j.contains("name") && j["name"].is_string()
               ? j["name"].get<std::string>()
               : "";
}

} // namespace

void writeRunCsv(const StoredRun& run, std::ostream& out) {
    out << "run_id,candidate,profile,index,status,error,prompt_tokens,cached_tokens,truncated_"
           "tokens,output_tokens,"
           "submitted_ms,scheduled_ms,first_token_ms,finished_ms,queue_ms,prefill_ms,ttft_ms,e2e_ms,tpot_ms,"
           "kv_bytes_peak\n";
    for (const StoredCandidate& c : run.candidates) {
        const std::string label = csvCell(c.info.label);
        const std::string profile = csvCell(profileNameOf(c.info.profileJson));
        for (const auto& r : c.requests) {
            out << run.id << ',' << label << ',' << profile << ',' << r.id << ','
                << lab::requestStatusName(r.status) << ',' << csvCell(r.error) << ','
                << r.promptTokens << ',' << r.cachedTokens << ',' << r.truncatedTokens << ','
                << r.outputTokens << ',' << orEmpty(r.submittedMs) << ',' << orEmpty(r.scheduledMs)
                << ',' << orEmpty(r.firstTokenMs) << ',' << orEmpty(r.finishedMs) << ','
                << orEmpty(r.queueMs()) << ',' << orEmpty(r.prefillMs()) << ',' << orEmpty(r.ttftMs()) << ',' << orEmpty(r.e2eMs())
                << ',' << orEmpty(r.tpotMs()) << ',' << r.kvBytesPeak << '\n';
        }
    }
}

} // namespace mb::db
