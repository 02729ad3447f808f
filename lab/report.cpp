// Building the report model: sections, tables and chart series from runs, selection and migration.
#include "lab/report.h"

#include "lab/metrics.h"
#include "lab/run_config.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace mb::lab {

namespace {

using OJson = nlohmann::ordered_json;

std::string num(double v, int decimals) {
    if (!std::isfinite(v)) return "";
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

OJson parsedOrNull(const std::string& text) {
    try {
        if (!text.empty()) return OJson::parse(text);
    } catch (const nlohmann::json::exception&) {
        return OJson(text);
    }
    return OJson();
}

// {"a": {"b": 1}} → ("a.b", "1"); arrays of scalars joined, other arrays as JSON.
void flatten(const OJson& j, const std::string& prefix, std::vector<std::vector<std::string>>& rows) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, rows);
        return;
    }
    std::string value;
    if (j.is_string()) value = j.get<std::string>();
    else if (j.is_null()) value = "";
    else value = j.dump(-1, ' ', false, OJson::error_handler_t::replace);
    rows.push_back({prefix, value});
}

ReportTable keyValueTable(const std::string& title, const OJson& j) {
    ReportTable t{title, {"key", "value"}, {}};
    flatten(j, "", t.rows);
    return t;
}

struct Measured {
    std::string name;
    RunSummary summary;
    bool fromRequests = false;
    const StoredCandidate* candidate = nullptr;
};

std::vector<std::pair<double, double>> storedSeries(const StoredCandidate& c, const std::string& metric) {
    for (const auto& [name, points] : c.series)
        if (name == metric) return points;
    return {};
}

std::vector<std::pair<double, double>> timePoints(const std::vector<TimePoint>& pts) {
    std::vector<std::pair<double, double>> out;
    for (const auto& p : pts) out.emplace_back(p.second, p.value);
    return out;
}

std::vector<double> okValues(const StoredCandidate& c, double (RequestRecord::*metric)() const) {
    std::vector<double> v;
    for (const auto& r : c.requests)
        if (r.status == RequestStatus::Ok && (r.*metric)() >= 0) v.push_back((r.*metric)());
    return v;
}

// "lo-hi" for each bin, with as many decimals as the bin width needs for every edge to read
// differently (whole milliseconds for wide bins; sub-millisecond TTFTs get "0.12-0.25").
std::vector<std::string> binLabels(double lo, double width, int bins) {
    int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(width))), 0, 9);
    std::vector<std::string> edges;
    for (;; ++decimals) {
        edges.clear();
        for (int b = 0; b <= bins; ++b) edges.push_back(num(lo + width * b, decimals));
        bool distinct = true;
        for (size_t b = 0; b + 1 < edges.size(); ++b) distinct = distinct && edges[b] != edges[b + 1];
        if (distinct || decimals >= 9) break;
    }
    std::vector<std::string> labels;
    for (size_t b = 0; b + 1 < edges.size(); ++b) labels.push_back(edges[b] + "-" + edges[b + 1]);
    return labels;
}

ReportChart ttftHistogram(const std::vector<Measured>& ms) {
    ReportChart c{"ttft_histogram", "TTFT histogram", "TTFT (ms)", "requests", ReportChart::Kind::Bars, {}, {}};
    std::vector<std::vector<double>> values;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& m : ms) {
        values.push_back(okValues(*m.candidate, &RequestRecord::ttftMs));
        for (double v : values.back()) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    if (!(hi >= lo)) return c;
    constexpr int kBins = 12;
    const double width = hi > lo ? (hi - lo) / kBins : 1.0;
    c.categories = binLabels(lo, width, kBins);
    for (size_t i = 0; i < ms.size(); ++i) {
        ReportSeries s{ms[i].name, {}};
        std::vector<int> counts(kBins, 0);
        for (double v : values[i]) ++counts[std::min(kBins - 1, static_cast<int>((v - lo) / width))];
        for (int b = 0; b < kBins; ++b) s.points.emplace_back(b, counts[static_cast<size_t>(b)]);
        c.series.push_back(std::move(s));
    }
    return c;
}

ReportChart e2eCdf(const std::vector<Measured>& ms) {
    ReportChart c{"e2e_cdf", "End-to-end latency CDF", "e2e (ms)", "share of requests", ReportChart::Kind::Line, {}, {}};
    for (const auto& m : ms) {
        auto v = okValues(*m.candidate, &RequestRecord::e2eMs);
        std::sort(v.begin(), v.end());
        ReportSeries s{m.name, {}};
        // At most ~200 points: every k-th sorted value, the last always.
        const size_t step = std::max<size_t>(1, v.size() / 200);
        for (size_t i = 0; i < v.size(); i += step)
            s.points.emplace_back(v[i], static_cast<double>(i + 1) / static_cast<double>(v.size()));
        if (!v.empty() && s.points.back().second < 1.0) s.points.emplace_back(v.back(), 1.0);
        c.series.push_back(std::move(s));
    }
    return c;
}

ReportChart overTime(const std::vector<Measured>& ms, const char* id, const char* title, const char* yLabel,
                     const char* metric, std::vector<TimePoint> RunSummary::Series::*computed) {
    ReportChart c{id, title, "time (s)", yLabel, ReportChart::Kind::Line, {}, {}};
    for (const auto& m : ms) {
        auto pts = storedSeries(*m.candidate, metric);
        if (pts.empty() && m.fromRequests) pts = timePoints(m.summary.series.*computed);
        c.series.push_back({m.name, std::move(pts)});
    }
    return c;
}

ReportTable distributionTable(const char* title, const std::vector<Measured>& ms, Distribution RunSummary::*d,
                              int decimals) {
    ReportTable t{title, {"candidate", "count", "p50", "p90", "p95", "p99", "p99.9", "mean", "std", "min", "max"}, {}};
    for (const auto& m : ms) {
        const Distribution& x = m.summary.*d;
        t.rows.push_back({m.name, std::to_string(x.count), num(x.p50, decimals), num(x.p90, decimals),
                          num(x.p95, decimals), num(x.p99, decimals), num(x.p999, decimals), num(x.mean, decimals),
                          num(x.std, decimals), num(x.min, decimals), num(x.max, decimals)});
    }
    return t;
}

// A summary from the records, else what the store kept.
RunSummary summaryOf(const StoredCandidate& c, bool& fromRequests) {
    fromRequests = !c.requests.empty();
    const OJson j = parsedOrNull(c.summaryJson);
    if (fromRequests) {
        RunSummary s = summarize(c.requests, {});
        s.precision = precisionCheckFromJson(j);
        return s;
    }
    RunSummary s;
    if (!j.is_object()) return s;
    s.precision = precisionCheckFromJson(j);
    auto dist = [&](const char* key, Distribution& d) {
        if (!j.contains(key) || !j[key].is_object()) return;
        const auto& o = j[key];
        auto get = [&](const char* k) { return o.contains(k) && o[k].is_number() ? o[k].get<double>() : 0.0; };
        d.count = static_cast<int64_t>(get("count"));
        d.p50 = get("p50"), d.p90 = get("p90"), d.p95 = get("p95"), d.p99 = get("p99"), d.p999 = get("p99.9");
        d.mean = get("mean"), d.std = get("std"), d.min = get("min"), d.max = get("max");
    };
    dist("ttft_ms", s.ttftMs);
    dist("tpot_ms", s.tpotMs);
    dist("itl_ms", s.itlMs);
    dist("e2e_ms", s.e2eMs);
    dist("queue_ms", s.queueMs);
    auto get = [&](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
    s.requests = static_cast<int64_t>(get("requests"));
    s.ok = static_cast<int64_t>(get("ok"));
    s.errors = static_cast<int64_t>(get("errors"));
    s.durationS = get("duration_s");
    s.requestsPerS = get("requests_per_s");
    s.outputTokensPerS = get("output_tokens_per_s");
    if (j.contains("prefix_cache") && j["prefix_cache"].is_object() && j["prefix_cache"].contains("hit_rate"))
        s.hitRate = j["prefix_cache"]["hit_rate"].get<double>();
    return s;
}

ReportSection recommendationSection(const std::optional<ReportSelection>& sel) {
    ReportSection s{"recommendation", "Recommendation", {}, {}, {}};
    if (!sel) {
        s.paragraphs.push_back("No selection was made for these runs: this report holds the measurements only "
                               "(run modebench-cli select --save to add one).");
        return s;
    }
    const SelectionResult& r = sel->result;
    s.paragraphs.push_back("Recommendation: " + r.headline + ".");
    s.paragraphs.push_back("Basis: " + r.basis + ".");
    for (const auto& w : r.warnings) s.paragraphs.push_back("Warning: " + w + ".");
    for (size_t i = 1; i < r.tieReasons.size(); ++i) s.paragraphs.push_back("No clear winner: " + r.tieReasons[i] + ".");
    if (!r.dominance.empty() && r.headline.find(r.dominance) == std::string::npos)
        s.paragraphs.push_back("Dominance: " + r.dominance + ".");
    ReportTable feasibility{"Feasibility (every SLO bound and the effective context cap)",
                            {"mode", "feasible", "context cap", "inputs over cap", "gaps", "could close it"},
                            {}};
    for (const auto& c : r.scores) {
        std::string gaps, remedies;
        for (const auto& g : c.gaps) gaps += (gaps.empty() ? "" : "; ") + g;
        for (const auto& m : c.remedies) remedies += (remedies.empty() ? "" : "; ") + m;
        feasibility.rows.push_back({modeName(c.mode), c.feasible ? "yes" : "no", std::to_string(c.contextCap),
                                    std::to_string(c.inputsOverCap) + " of " + std::to_string(c.inputs), gaps,
                                    remedies});
    }
    s.tables.push_back(std::move(feasibility));
    ReportTable scores{"Scores (weights: latency " + num(r.weights.latency, 2) + ", cost " + num(r.weights.cost, 2) +
                           ", features " + num(r.weights.features, 2) + ")",
                       {"mode", "candidate", "total", "latency", "cost", "features", "ops penalty", "meets SLO"},
                       {}};
    for (const auto& c : r.scores)
        scores.rows.push_back({modeName(c.mode), c.label + " (" + c.profile + ")", num(c.total, 3), num(c.latency, 3),
                               num(c.costScore, 3), num(c.features, 3), num(c.opsPenalty, 2),
                               c.meetsSlo ? "yes" : "no"});
    s.tables.push_back(std::move(scores));
    ReportTable quality{"Precision and quality (against the model's F32 output)",
                        {"mode", "precision", "greedy agreement", "mean KL (nats)", "perplexity ratio", "prompts"},
                        {}};
    for (const auto& c : r.scores) {
        const auto& q = c.quality;
        quality.rows.push_back({modeName(c.mode), c.precision, q ? num(q->agreement, 3) : "not measured",
                                q ? num(q->meanKl, 4) : "-",
                                q && q->referencePerplexity > 0 ? num(q->candidatePerplexity / q->referencePerplexity, 3)
                                                                : "-",
                                q ? std::to_string(q->prompts) : "-"});
    }
    s.tables.push_back(std::move(quality));
    ReportTable slo{"SLO checks", {"mode", "bound", "limit (ms)", "measured (ms)", "met", "headroom score"}, {}};
    for (const auto& c : r.scores)
        for (const auto& k : c.slo)
            slo.rows.push_back({modeName(c.mode), k.key, num(k.limitMs, 0), num(k.measuredMs, 1), k.met ? "yes" : "no",
                                num(k.headroom, 3)});
    s.tables.push_back(std::move(slo));
    return s;
}

ReportSection requirementsSection(const std::optional<ReportSelection>& sel) {
    ReportSection req{"requirements", "Requirements", {}, {}, {}};
    if (sel) {
        req.tables.push_back(keyValueTable("Requirements", sel->requirements));
        if (!sel->prices.is_null()) req.tables.push_back(keyValueTable("Price sheet", sel->prices));
        else req.paragraphs.push_back("No price sheet: costs were not projected.");
    } else {
        req.paragraphs.push_back("No requirements: no selection was made.");
    }
    return req;
}

ReportSection candidatesSection(const std::vector<StoredRun>& runs) {
    ReportSection cand{"candidates", "Candidates, configuration and environment", {}, {}, {}};
    ReportTable overview{"Candidates", {"candidate", "target", "model", "bytes", "sha256", "requests"}, {}};
    for (const auto& run : runs)
        for (const auto& c : run.candidates)
            overview.rows.push_back({candidateName(run, c), c.info.targetKind, c.info.modelPath,
                                     std::to_string(c.info.modelBytes), c.info.modelSha256,
                                     std::to_string(c.requests.empty() ? c.requestCount
                                                                       : static_cast<int64_t>(c.requests.size()))});
    cand.tables.push_back(std::move(overview));
    for (const auto& run : runs) {
        for (const auto& c : run.candidates) {
            OJson config;
            config["profile"] = parsedOrNull(c.info.profileJson);
            config["shape"] = parsedOrNull(c.info.shapeJson);
            cand.tables.push_back(keyValueTable("Configuration of " + candidateName(run, c), config));
        }
        OJson env;
        env["environment"] = parsedOrNull(run.info.environmentJson);
        env["workload"] = parsedOrNull(run.info.workloadJson);
        // Read through the one type, so that runs of older builds show this build's keys.
        const OJson config = parsedOrNull(run.info.configJson);
        env["config"] = config.is_object() ? toJson(runConfigFromJson(config)) : config;
        cand.tables.push_back(keyValueTable("Environment and workload of run #" + std::to_string(run.id), env));
    }
    return cand;
}

ReportSection metricsSection(const std::vector<Measured>& ms) {
    ReportSection met{"metrics", "Metrics", {}, {}, {}};
    met.tables.push_back(distributionTable("TTFT (ms)", ms, &RunSummary::ttftMs, 1));
    met.tables.push_back(distributionTable("TPOT (ms)", ms, &RunSummary::tpotMs, 2));
    met.tables.push_back(distributionTable("ITL (ms)", ms, &RunSummary::itlMs, 2));
    met.tables.push_back(distributionTable("End-to-end latency (ms)", ms, &RunSummary::e2eMs, 1));
    met.tables.push_back(distributionTable("Queue time (ms)", ms, &RunSummary::queueMs, 1));
    ReportTable thr{"Throughput and cache",
                    {"candidate", "requests", "ok", "errors", "duration (s)", "requests/s", "output tokens/s", "hit rate"},
                    {}};
    for (const auto& m : ms)
        thr.rows.push_back({m.name, std::to_string(m.summary.requests), std::to_string(m.summary.ok),
                            std::to_string(m.summary.errors), num(m.summary.durationS, 2),
                            num(m.summary.requestsPerS, 2), num(m.summary.outputTokensPerS, 1),
                            num(m.summary.hitRate, 3)});
    met.tables.push_back(std::move(thr));
    if (std::none_of(ms.begin(), ms.end(), [](const Measured& m) { return m.summary.precision.has_value(); }))
        return met;
    ReportTable pt{"Precision A/B (against the same model file in F32)",
                   {"candidate", "precision", "prompts", "positions", "greedy agreement", "mean KL (nats)",
                    "perplexity", "reference perplexity"},
                   {}};
    for (const auto& m : ms) {
        if (!m.summary.precision) {
            pt.rows.push_back({m.name, "not checked", "", "", "", "", "", ""});
            continue;
        }
        const PrecisionCheck& p = *m.summary.precision;
        pt.rows.push_back({m.name, p.precision, std::to_string(p.prompts), std::to_string(p.positions),
                           num(p.agreement, 4), num(p.meanKl, 6), num(p.candidatePerplexity, 3),
                           num(p.referencePerplexity, 3)});
    }
    met.tables.push_back(std::move(pt));
    met.paragraphs.push_back("Precision A/B: the reference (the model file computed in F32) continues each "
                             "prompt greedily; both then score prompt and continuation. Agreement is the share "
                             "of positions whose most likely next token is the same; KL compares the full "
                             "next-token distributions.");
    return met;
}

// The cost bars, the projection table (with the 0% and 100% hit reference rows) and each bill's formula.
void addCost(const SelectionResult& r, Report& rep, ReportSection& charts) {
    const std::string& currency = r.scores[0].cost->currency;
    ReportChart cost{"cost", "Projected monthly cost (" + currency + ")", "", currency, ReportChart::Kind::Bars,
                     {"uncached input", "cached input", "output", "accelerator", "base fee", "tier discount", "total"},
                     {}};
    ReportTable t{"Monthly cost projection (" + currency + ")",
                  {"mode", "input tokens", "cached share", "input", "cached input", "output", "accelerator",
                   "base fee", "tier discount", "total", "per million tokens"},
                  {}};
    auto row = [](const std::string& label, const CostProjection& p) {
        return std::vector<std::string>{label, num(p.inputTokens, 0),
                                        num(p.inputTokens > 0 ? p.cachedInputTokens / p.inputTokens : 0, 3),
                                        num(p.inputCost, 2), num(p.cachedInputCost, 2), num(p.outputCost, 2),
                                        num(p.acceleratorCost, 2), num(p.baseFee, 2), num(p.tierDiscount, 2),
                                        num(p.total, 2), num(p.perMillionTokens, 4)};
    };
    for (const auto& s : r.scores) {
        const CostProjection& p = *s.cost;
        cost.series.push_back({modeName(s.mode),
                               {{0, p.inputCost}, {1, p.cachedInputCost}, {2, p.outputCost}, {3, p.acceleratorCost},
                                {4, p.baseFee}, {5, -p.tierDiscount}, {6, p.total}}});
        t.rows.push_back(row(modeName(s.mode), p));
    }
    // Reference rows: the same month with no cache hits and with every input cached.
    for (const auto& s : r.scores) {
        if (s.costNoHits) t.rows.push_back(row(std::string(modeName(s.mode)) + " at 0% hits", *s.costNoHits));
        if (s.costAllHits) t.rows.push_back(row(std::string(modeName(s.mode)) + " at 100% hits", *s.costAllHits));
    }
    rep.charts.push_back(std::move(cost));
    charts.chartIds.push_back("cost");
    charts.tables.push_back(std::move(t));
    if (!r.prices) return;
    for (const auto& s : r.scores) {
        std::string formula = std::string("Cost of ") + modeName(s.mode) + ": ";
        const auto lines = costFormulaLines(*r.prices, *s.cost);
        for (size_t i = 0; i < lines.size(); ++i) formula += (i ? "; " : "") + lines[i];
        charts.paragraphs.push_back(formula + ".");
    }
}

ReportSection chartsSection(const std::vector<Measured>& ms, const std::optional<ReportSelection>& sel, Report& rep) {
    rep.charts.push_back(ttftHistogram(ms));
    rep.charts.push_back(e2eCdf(ms));
    rep.charts.push_back(overTime(ms, "ttft_over_time", "TTFT over time", "TTFT (ms)", "ttft_ms",
                                  &RunSummary::Series::ttftMs));
    rep.charts.push_back(overTime(ms, "hit_rate_over_time", "Prefix hit rate over time", "hit rate", "hit_rate",
                                  &RunSummary::Series::hitRate));
    rep.charts.push_back(overTime(ms, "throughput", "Throughput", "output tokens/s", "throughput",
                                  &RunSummary::Series::throughput));
    ReportSection charts{"charts", "Charts", {}, {}, {}};
    for (const auto& c : rep.charts) charts.chartIds.push_back(c.id);
    if (sel && sel->result.scores.size() == 2 && sel->result.scores[0].cost && sel->result.scores[1].cost)
        addCost(sel->result, rep, charts);
    return charts;
}

ReportSection traceSection(const std::optional<ReportSelection>& sel) {
    ReportSection trace{"trace", "Decision trace", {}, {}, {}};
    if (!sel) {
        trace.paragraphs.push_back("No selection: no rules were applied.");
        return trace;
    }
    ReportTable t{"Rules, in order", {"rule", "fired", "detail"}, {}};
    for (const auto& e : sel->result.trace) t.rows.push_back({e.rule, e.fired ? "yes" : "no", e.detail});
    trace.tables.push_back(std::move(t));
    for (const auto& c : sel->result.conflicts) trace.paragraphs.push_back("Conflict: " + c + ".");
    return trace;
}

ReportSection runsSection(const std::vector<StoredRun>& runs, const std::optional<ReportSelection>& sel) {
    ReportSection ids{"runs", "Runs (raw data)", {}, {}, {}};
    ReportTable rt{"Runs", {"run id", "name", "created (UTC)", "status", "candidate ids"}, {}};
    for (const auto& run : runs) {
        std::string cids;
        for (const auto& c : run.candidates) cids += (cids.empty() ? "" : ", ") + std::to_string(c.id);
        rt.rows.push_back({std::to_string(run.id), run.info.name, run.createdAt, runStatusName(run.status), cids});
    }
    ids.tables.push_back(std::move(rt));
    ids.paragraphs.push_back("Export the raw requests with: modebench-cli runs export ID");
    if (sel && sel->id > 0) ids.paragraphs.push_back("Selection id: " + std::to_string(sel->id) + ".");
    return ids;
}

} // namespace

const ReportChart* Report::chart(const std::string& id) const {
    for (const auto& c : charts)
        if (c.id == id) return &c;
    return nullptr;
}

std::string candidateName(const StoredRun& run, const StoredCandidate& c) {
    const OJson p = parsedOrNull(c.info.profileJson);
    const std::string profile = p.is_object() && p.contains("name") && p["name"].is_string()
                                    ? p["name"].get<std::string>()
                                    : std::string("?");
    return "#" + std::to_string(run.id) + " " + c.info.label + " (" + profile + ")";
}

Report buildReport(const std::vector<StoredRun>& runs, const std::optional<ReportSelection>& sel,
                   const std::string& generatedAt) {
    Report rep;
    rep.generatedAt = generatedAt;
    rep.selection = sel;
    if (sel) rep.summary = executiveSummary(sel->result);
    std::string ids;
    for (const auto& r : runs) {
        rep.runIds.push_back(r.id);
        ids += (ids.empty() ? "#" : ", #") + std::to_string(r.id);
    }
    rep.title = "ModeBench selection report: run" + std::string(runs.size() > 1 ? "s " : " ") + ids;

    std::vector<Measured> ms;
    for (const auto& run : runs)
        for (const auto& c : run.candidates) {
            Measured m{candidateName(run, c), {}, false, &c};
            m.summary = summaryOf(c, m.fromRequests);
            ms.push_back(std::move(m));
        }

    // PRODUCT.md §8's contents, the executive summary first and the formulas last.
    rep.sections.push_back(summarySection(rep.summary));
    rep.sections.push_back(recommendationSection(sel));
    rep.sections.push_back(requirementsSection(sel));
    rep.sections.push_back(candidatesSection(runs));
    rep.sections.push_back(metricsSection(ms));
    rep.sections.push_back(pluginsSection(runs));
    rep.sections.push_back(imagesSection(runs));
    rep.sections.push_back(chartsSection(ms, sel, rep));
    rep.sections.push_back(traceSection(sel));
    rep.sections.push_back(capacitySection(sel));
    rep.sections.push_back(migrationSection(sel));
    rep.sections.push_back(deploymentSection(runs, sel)); // PRODUCT.md §13
    rep.sections.push_back(runsSection(runs, sel));
    rep.sections.push_back(appendixSection(sel));
    return rep;
}

} // namespace mb::lab
