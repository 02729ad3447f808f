// The report's "plugins" section (PRODUCT.md §11): each candidate's chain, its measured cost, and each script's audit and approval.
#include "lab/report.h"

#include "lab/metrics.h"
#include "lab/run_config.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace mb::lab {

namespace {

using Json = nlohmann::json;

std::string num(double v, int decimals) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

// "word_filter → script(p.py)" from a chain's record.
std::string chainText(const Json& chain) {
    std::string s;
    for (const Json& e : chain["plugins"]) {
        std::string one = e.value("type", "?");
        if (one == "script") one += "(" + e.value("path", "") + ")";
        s += (s.empty() ? "" : " → ") + one;
    }
    return s;
}

// "namespaces, landlock, seccomp" of the layers that held.
std::string layersHeld(const Json& sandbox) {
    std::string s;
    if (sandbox.is_object() && sandbox.contains("layers") && sandbox["layers"].is_array())
        for (const Json& l : sandbox["layers"])
            if (l.is_object() && l.value("holds", false)) s += (s.empty() ? "" : ", ") + l.value("name", "?");
    return s.empty() ? "none" : s;
}

std::vector<std::string> auditRow(const std::string& who, const Json& e) {
    const Json a = e.contains("approval") && e["approval"].is_object() ? e["approval"] : Json::object();
    const Json f = a.contains("findings") && a["findings"].is_object() ? a["findings"] : Json::object();
    auto count = [&](const char* k) { return f.contains(k) && f[k].is_number() ? std::to_string(f[k].get<int>()) : "-"; };
    return {who,
            e.value("path", ""),
            e.value("sha256", ""),
            a.value("approved_by", "(not recorded)"),
            a.value("approved_at", ""),
            count("high") + " / " + count("medium") + " / " + count("low"),
            a.value("verdict", ""),
            layersHeld(e.value("sandbox", Json::object()))};
}

} // namespace

ReportSection pluginsSection(const std::vector<StoredRun>& runs) {
    ReportSection s{"plugins", "Output plugins", {}, {}, {}};
    ReportTable chains{"Plugin chains", {"candidate", "chain"}, {}};
    ReportTable cost{"Post-processing cost (ms)",
                     {"candidate", "requests", "plugins p50", "plugins p95", "set-up p50", "per call p50", "+TTFT p50",
                      "+TTFT p95", "shown ITL p50", "ended", "failed"},
                     {}};
    ReportTable audits{"Script plugins: audit and approval",
                       {"candidate", "script", "sha256", "approved by", "approved at", "findings high / medium / low",
                        "audit verdict", "sandbox layers"},
                       {}};
    for (const StoredRun& run : runs) {
        const RunConfig config = runConfigFromText(run.info.configJson);
        for (const StoredCandidate& c : run.candidates) {
            const std::string who = candidateName(run, c);
            const RunConfig::Side* side = config.side(c.info.label);
            const bool has = side && side->plugins.is_object() && side->plugins.contains("plugins");
            chains.rows.push_back({who, has ? chainText(side->plugins) : "none"});
            if (has)
                for (const Json& e : side->plugins["plugins"])
                    if (e.value("type", "") == "script") audits.rows.push_back(auditRow(who, e));
            const auto p = summarizePostprocess(c.requests);
            if (!p) continue;
            cost.rows.push_back({who, std::to_string(p->requests), num(p->ms.p50, 3), num(p->ms.p95, 3),
                                 num(p->startMs.p50, 3), num(p->callMs.p50, 4), num(p->extraTtftMs.p50, 2),
                                 num(p->extraTtftMs.p95, 2), num(p->outputItlMs.p50, 2), std::to_string(p->ended),
                                 std::to_string(p->failed)});
        }
    }
    if (cost.rows.empty() && audits.rows.empty() &&
        std::all_of(chains.rows.begin(), chains.rows.end(), [](const auto& r) { return r[1] == "none"; })) {
        s.paragraphs.push_back("No output plugins ran in these runs: each response is the model's raw output.");
        return s;
    }
    s.paragraphs.push_back(
        "The plugin chain runs on every response in the post-processing stage, the same in every mode. "
        "\"plugins\" is the time inside the plugins per request (set-up included: a script plugin takes a ready "
        "sandboxed process); \"+TTFT\" is when the first post-processed text was shown minus the first token "
        "(held-back text and plugin time); \"shown ITL\" is the gap between pieces of shown text. Figures come "
        "from the stored requests; a candidate without stored requests has no row.");
    s.tables.push_back(std::move(chains));
    s.tables.push_back(std::move(cost));
    if (!audits.rows.empty()) s.tables.push_back(std::move(audits));
    return s;
}

} // namespace mb::lab
