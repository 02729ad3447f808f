// The migration walk-through state as JSON (saved with its selection) and back.
#include "lab/migration.h"

namespace mb::lab {

namespace {

using OJson = nlohmann::ordered_json;

MigrationNode nodeFrom(const nlohmann::json& j) {
    const std::string name = j.get<std::string>();
    for (int i = 0; i <= static_cast<int>(MigrationNode::I); ++i)
        if (name == nodeName(static_cast<MigrationNode>(i))) return static_cast<MigrationNode>(i);
    throw MigrationError("migration state: unknown node \"" + name + "\"");
}

OJson checksJson(const std::vector<SloCheck>& checks) {
    OJson a = OJson::array();
    for (const auto& c : checks)
        a.push_back({{"key", c.key}, {"limit_ms", c.limitMs}, {"measured_ms", c.measuredMs}, {"met", c.met},
                  {"measured", c.measured}});
    return a;
}

std::vector<SloCheck> checksFrom(const nlohmann::json& j) {
    std::vector<SloCheck> out;
    for (const auto& c : j)
        out.push_back({c.at("key").get<std::string>(), c.at("limit_ms").get<double>(),
                       c.at("measured_ms").get<double>(), c.at("met").get<bool>(), c.value("measured", true)});
    return out;
}

OJson knobsJson(const BatchingKnobs& k) {
    return {{"batching", k.dynamic ? "dynamic" : "off"},
            {"max_batch", k.maxBatch},
            {"max_batch_tokens", k.maxBatchTokens},
            {"max_wait_ms", k.maxWaitMs}};
}

BatchingKnobs knobsFrom(const nlohmann::json& j) {
    return {j.at("batching").get<std::string>() == "dynamic", j.at("max_batch").get<int32_t>(),
            j.at("max_batch_tokens").get<int32_t>(), j.at("max_wait_ms").get<double>()};
}

} // namespace

nlohmann::ordered_json toJson(const MigrationState& s) {
    OJson j;
    j["node"] = nodeName(s.node);
    j["node_title"] = nodeTitle(s.node);
    j["finished"] = s.finished();
    OJson path = OJson::array();
    for (auto n : s.path) path.push_back(nodeName(n));
    j["path"] = path;
    j["adjustments"] = s.adjustments;
    j["max_adjustments"] = s.maxAdjustments;
    j["rolled_back"] = s.rolledBack;
    j["rollback_reason"] = s.rollbackReason;
    j["over_cap_tolerance"] = s.overCapTolerance;
    j["hit_rate_floor"] = s.trigger.hitRateFloor;
    j["regular_because"] = s.regularBecause;
    j["context_cap"] = s.contextCap;
    j["stated_max_input"] = s.statedMaxInput ? OJson(*s.statedMaxInput) : OJson(nullptr);
    OJson regular = OJson::array();
    for (const auto& c : s.regularSlo)
        regular.push_back({{"key", c.key}, {"limit_ms", c.limitMs}, {"measured_ms", c.measuredMs}, {"met", c.met},
                           {"measured", c.measured}});
    j["regular_slo"] = regular;
    if (s.histogram) {
        OJson bins = OJson::array();
        for (const auto& b : s.histogram->bins) bins.push_back({{"up_to", b.upTo}, {"count", b.count}});
        j["histogram"] = {{"bins", bins},           {"count", s.histogram->count},     {"over_cap", s.histogram->overCap},
                          {"longest", s.histogram->longest}, {"cap", s.histogram->cap}, {"share", s.histogram->share}};
    } else {
        j["histogram"] = nullptr;
    }
    if (s.warmup)
        j["warmup"] = {{"wall_ms", s.warmup->wallMs},
                       {"engine_warmup_ms", s.warmup->engineWarmupMs},
                       {"primed_prompts", s.warmup->primedPrompts},
                       {"cached_bytes", s.warmup->cachedBytes},
                       {"reload_attempted", s.warmup->reloadAttempted},
                       {"reload_refused", s.warmup->reloadRefused},
                       {"reload_message", s.warmup->reloadMessage},
                       {"image_prompts", s.warmup->imagePrompts},
                       {"image_prompts_skipped", s.warmup->imagePromptsSkipped}};
    else
        j["warmup"] = nullptr;
    OJson monitoring = OJson::array();
    for (const auto& m : s.monitoring)
        monitoring.push_back({{"run_id", m.runId},
                              {"hit_rate", m.hitRate},
                              {"slo", checksJson(m.slo)},
                              {"p99", checksJson(m.p99)},
                              {"queue_p95_ms", m.queueP95Ms},
                              {"ttft_p95_ms", m.ttftP95Ms},
                              {"mean_prompt_tokens", m.meanPromptTokens},
                              {"requests_per_s", m.requestsPerS},
                              {"requests", m.requests}});
    j["monitoring"] = monitoring;
    OJson proposals = OJson::array();
    for (const auto& p : s.proposals)
        proposals.push_back({{"from", knobsJson(p.from)}, {"to", knobsJson(p.to)}, {"reason", p.reason}});
    j["proposals"] = proposals;
    j["batching"] = knobsJson(s.batching);
    j["checklist"] = {{"client_streams", s.checklist.clientStreams ? OJson(*s.checklist.clientStreams) : OJson()},
                      {"warmup_plan", s.checklist.warmupPlan},
                      {"monitoring_metrics", s.checklist.monitoringMetrics},
                      {"rollback_plan", s.checklist.rollbackPlan},
                      {"complete", s.checklist.complete()}};
    j["last_note"] = s.lastNote;
    return j;
}

MigrationState migrationFromJson(const nlohmann::json& j) {
    try {
        MigrationState s;
        s.node = nodeFrom(j.at("node"));
        s.path.clear();
        for (const auto& n : j.at("path")) s.path.push_back(nodeFrom(n));
        s.adjustments = j.at("adjustments").get<int32_t>();
        s.maxAdjustments = j.at("max_adjustments").get<int32_t>();
        s.rolledBack = j.at("rolled_back").get<bool>();
        s.rollbackReason = j.at("rollback_reason").get<std::string>();
        s.overCapTolerance = j.at("over_cap_tolerance").get<double>();
        s.trigger.hitRateFloor = j.at("hit_rate_floor").get<double>();
        // Absent in walk-throughs saved before these fields: the old defaults.
        s.regularBecause = j.value("regular_because", std::string());
        s.contextCap = j.value("context_cap", kFastContextCap);
        if (j.contains("stated_max_input") && !j["stated_max_input"].is_null())
            s.statedMaxInput = j["stated_max_input"].get<int64_t>();
        if (j.contains("regular_slo"))
            for (const auto& c : j["regular_slo"])
                s.regularSlo.push_back({c.at("key").get<std::string>(), c.at("limit_ms").get<double>(),
                                        c.at("measured_ms").get<double>(), c.at("met").get<bool>(),
                                        c.at("measured").get<bool>()});
        if (const auto& h = j.at("histogram"); !h.is_null()) {
            PromptHistogram ph;
            for (const auto& b : h.at("bins")) ph.bins.push_back({b.at("up_to").get<int64_t>(), b.at("count").get<int64_t>()});
            ph.count = h.at("count").get<int64_t>();
            ph.overCap = h.at("over_cap").get<int64_t>();
            ph.longest = h.at("longest").get<int64_t>();
            ph.cap = h.at("cap").get<int64_t>();
            ph.share = h.at("share").get<double>();
            s.histogram = ph;
        }
        if (const auto& w = j.at("warmup"); !w.is_null()) // the image counts are absent in older states
            s.warmup = WarmupResult{w.at("wall_ms").get<double>(),          w.at("engine_warmup_ms").get<double>(),
                                    w.at("primed_prompts").get<int64_t>(),  w.at("cached_bytes").get<uint64_t>(),
                                    w.at("reload_attempted").get<bool>(),   w.at("reload_refused").get<bool>(),
                                    w.at("reload_message").get<std::string>(),
                                    w.value("image_prompts", int64_t{0}),   w.value("image_prompts_skipped", int64_t{0})};
        for (const auto& m : j.at("monitoring"))
            s.monitoring.push_back({m.at("run_id").get<int64_t>(), m.at("hit_rate").get<double>(),
                                    checksFrom(m.at("slo")), checksFrom(m.at("p99")),
                                    m.at("queue_p95_ms").get<double>(), m.at("ttft_p95_ms").get<double>(),
                                    m.at("mean_prompt_tokens").get<double>(), m.at("requests_per_s").get<double>(),
                                    m.at("requests").get<int64_t>()});
        for (const auto& p : j.at("proposals"))
            s.proposals.push_back({knobsFrom(p.at("from")), knobsFrom(p.at("to")), p.at("reason").get<std::string>()});
        s.batching = knobsFrom(j.at("batching"));
        const auto& c = j.at("checklist");
        if (!c.at("client_streams").is_null()) s.checklist.clientStreams = c.at("client_streams").get<bool>();
        s.checklist.warmupPlan = c.at("warmup_plan").get<std::string>();
        s.checklist.monitoringMetrics = c.at("monitoring_metrics").get<std::vector<std::string>>();
        s.checklist.rollbackPlan = c.at("rollback_plan").get<std::string>();
        s.lastNote = j.at("last_note").get<std::string>();
        if (s.path.empty() || s.path.back() != s.node)
            throw MigrationError("migration state: path must end at the current node");
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw MigrationError(std::string("migration state: ") + e.what());
    }
}

} // namespace mb::lab
