// The plugin chain's cost over a run's records (PRODUCT.md §11): time in plugins, added TTFT, shown ITL.
#include "lab/metrics.h"

namespace mb::lab {

std::optional<PostprocessSummary> summarizePostprocess(const std::vector<RequestRecord>& records) {
    PostprocessSummary p;
    std::vector<double> ms, startMs, callMs, maxCallMs, extraTtft, itl;
    for (const RequestRecord& r : records) {
        if (!r.postprocessed || r.status != RequestStatus::Ok) continue;
        ++p.requests;
        if (r.postprocessStatus.rfind("ended", 0) == 0) ++p.ended;
        if (r.postprocessStatus.rfind("failed", 0) == 0) ++p.failed;
        ms.push_back(r.postprocessMs);
        startMs.push_back(r.postprocessStartMs);
        if (r.postprocessCalls > 0)
            callMs.push_back((r.postprocessMs - r.postprocessStartMs) / static_cast<double>(r.postprocessCalls));
        maxCallMs.push_back(r.postprocessMaxCallMs);
        if (const double x = r.extraTtftMs(); x >= 0) extraTtft.push_back(x);
        for (size_t i = 1; i < r.outputTimesMs.size(); ++i)
            itl.push_back(r.outputTimesMs[i] - r.outputTimesMs[i - 1]);
    }
    if (p.requests == 0) return std::nullopt;
    p.ms = describe(std::move(ms));
    p.startMs = describe(std::move(startMs));
    p.callMs = describe(std::move(callMs));
    p.maxCallMs = describe(std::move(maxCallMs));
    p.extraTtftMs = describe(std::move(extraTtft));
    p.outputItlMs = describe(std::move(itl));
    return p;
}

nlohmann::ordered_json toJson(const PostprocessSummary& p) {
    nlohmann::ordered_json j;
    j["requests"] = p.requests;
    j["ended"] = p.ended;
    j["failed"] = p.failed;
    j["ms"] = toJson(p.ms);
    j["start_ms"] = toJson(p.startMs);
    j["call_ms"] = toJson(p.callMs);
    j["max_call_ms"] = toJson(p.maxCallMs);
    j["extra_ttft_ms"] = toJson(p.extraTtftMs);
    j["output_itl_ms"] = toJson(p.outputItlMs);
    return j;
}

} // namespace mb::lab
