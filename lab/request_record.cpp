// Derived per-request metrics (PRODUCT.md §3) computed from the runner's raw timestamps.
#include "lab/request_record.h"
#include "lab/run_sink.h"

#include <algorithm>

namespace mb::lab {

const char* requestStatusName(RequestStatus s) {
    switch (s) {
    case RequestStatus::Ok:
        return "ok";
    case RequestStatus::Error:
        return "error";
    case RequestStatus::Cancelled:
        return "cancelled";
    case RequestStatus::Rejected:
        return "rejected";
    }
    return "unknown";
}

namespace {
// Times are ms since run start, so 0 is a real time; only negative means "never happened".
double span(double fromMs, double toMs) {
    return (fromMs >= 0 && toMs >= 0) ? toMs - fromMs : -1.0;
}
} // namespace

double RequestRecord::queueMs() const {
    return span(submittedMs, scheduledMs);
}
double RequestRecord::prefillMs() const {
    return span(scheduledMs, firstTokenMs);
}
double RequestRecord::ttftMs() const {
    return span(submittedMs, firstTokenMs);
}
double RequestRecord::e2eMs() const {
    return span(submittedMs, finishedMs);
}

double RequestRecord::tpotMs() const {
    // One token has no "per output token" time after the first.
    if (outputTokens < 2) return -1.0;
    const double ttft = ttftMs();
    const double e2e = e2eMs();
    if (ttft < 0 || e2e < 0) return -1.0;
    return (e2e - ttft) / static_cast<double>(outputTokens - 1);
}

double RequestRecord::extraTtftMs() const {
    if (!postprocessed || outputTimesMs.empty()) return -1.0;
    return span(firstTokenMs, outputTimesMs.front());
}

double RequestRecord::encodeShare() const {
    const double ttft = ttftMs();
    if (images <= 0 || ttft <= 0) return -1.0;
    return std::clamp(encodeMs / ttft, 0.0, 1.0);
}

} // namespace mb::lab

namespace mb::lab {
const char* runStatusName(RunStatus s) {
    switch (s) {
    case RunStatus::Running: return "running";
    case RunStatus::Complete: return "complete";
    case RunStatus::Interrupted: return "interrupted";
    case RunStatus::Failed: return "failed";
    }
    return "?";
}

} // namespace mb::lab
