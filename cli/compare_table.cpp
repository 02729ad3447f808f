// `compare`'s console output: the side-by-side table and why requests failed.
#include "cli/compare_table.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace mb::cli {

namespace {

std::string fmt(double v, int precision = 1) {
    std::ostringstream ss;
    ss << std::fixed << std::setprecision(precision) << v;
    return ss.str();
}

} // namespace

void printTable(const std::vector<lab::CandidateResult>& r, std::ostream& out) {
    struct Row {
        std::string name;
        double a, b;
        int precision;
        bool hasA = true, hasB = true; // false: no sample to take it from ("-")
    };
    const lab::RunSummary& A = r[0].summary;
    const lab::RunSummary& B = r[1].summary;
    using D = lab::Distribution;
    auto dist = [&](const std::string& name, D lab::RunSummary::*d, double D::*f, int precision) {
        return Row{name, A.*d.*f, B.*d.*f, precision, (A.*d).count > 0, (B.*d).count > 0};
    };
    std::vector<Row> rows = {
        {"requests ok", double(A.ok), double(B.ok), 0},
        {"errors + rejected", double(A.errors + A.rejected), double(B.errors + B.rejected), 0},
        {"truncated requests", double(A.truncated), double(B.truncated), 0},
        dist("TTFT p50 (ms)", &lab::RunSummary::ttftMs, &D::p50, 1),
        dist("TTFT p95 (ms)", &lab::RunSummary::ttftMs, &D::p95, 1),
        dist("TTFT p99 (ms)", &lab::RunSummary::ttftMs, &D::p99, 1),
        dist("TPOT p50 (ms)", &lab::RunSummary::tpotMs, &D::p50, 2),
        dist("ITL p99 (ms)", &lab::RunSummary::itlMs, &D::p99, 2),
        dist("e2e p50 (ms)", &lab::RunSummary::e2eMs, &D::p50, 1),
        dist("e2e p99 (ms)", &lab::RunSummary::e2eMs, &D::p99, 1),
        dist("queue p50 (ms)", &lab::RunSummary::queueMs, &D::p50, 1),
        {"output tokens/s", A.outputTokensPerS, B.outputTokensPerS, 1},
        {"requests/s", A.requestsPerS, B.requestsPerS, 2},
        {"prefix hit rate", A.hitRate, B.hitRate, 3},
        {"KV peak (MiB)", double(A.kvBytesPeak) / 1048576.0, double(B.kvBytesPeak) / 1048576.0, 1},
        {"startup (ms)", r[0].startupMs, r[1].startupMs, 1},
        {"duration (s)", A.durationS, B.durationS, 2},
    };
    std::vector<Row> precision;
    if (A.precision || B.precision) {
        // A candidate without a check (remote) shows 0 and no ratio.
        auto get = [](const lab::RunSummary& s, double lab::PrecisionCheck::*f) {
            return s.precision ? (*s.precision).*f : 0.0;
        };
        precision = {
            {"agreement vs f32", get(A, &lab::PrecisionCheck::agreement), get(B, &lab::PrecisionCheck::agreement), 4},
            {"mean KL vs f32", get(A, &lab::PrecisionCheck::meanKl), get(B, &lab::PrecisionCheck::meanKl), 6},
            {"perplexity", get(A, &lab::PrecisionCheck::candidatePerplexity),
             get(B, &lab::PrecisionCheck::candidatePerplexity), 3},
            {"f32 perplexity", get(A, &lab::PrecisionCheck::referencePerplexity),
             get(B, &lab::PrecisionCheck::referencePerplexity), 3},
        };
    }
    // A figure of an optional part of the summary; a candidate without it shows "-".
    auto part = [](const std::string& name, const auto& pa, const auto& pb, auto d, double D::*f, int prec) {
        const bool hasA = pa && ((*pa).*d).count > 0;
        const bool hasB = pb && ((*pb).*d).count > 0;
        return Row{name, hasA ? (*pa).*d.*f : 0, hasB ? (*pb).*d.*f : 0, prec, hasA, hasB};
    };
    if (A.postprocess || B.postprocess) {
        using P = lab::PostprocessSummary;
        auto pp = [&](const std::string& name, D P::*d, double D::*f, int prec) {
            return part(name, A.postprocess, B.postprocess, d, f, prec);
        };
        const std::vector<Row> post = {
            pp("plugins ms p50", &P::ms, &D::p50, 3),
            pp("plugins ms/call p50", &P::callMs, &D::p50, 4),
            pp("plugin +TTFT p50 (ms)", &P::extraTtftMs, &D::p50, 2),
            pp("shown ITL p50 (ms)", &P::outputItlMs, &D::p50, 2),
            {"plugin ended/failed", A.postprocess ? double(A.postprocess->ended + A.postprocess->failed) : 0,
             B.postprocess ? double(B.postprocess->ended + B.postprocess->failed) : 0, 0, bool(A.postprocess),
             bool(B.postprocess)},
        };
        rows.insert(rows.end(), post.begin(), post.end());
    }
    if (A.images || B.images) {
        using I = lab::ImageSummary;
        auto im = [&](const std::string& name, D I::*d, double D::*f, int prec) {
            return part(name, A.images, B.images, d, f, prec);
        };
        const std::vector<Row> images = {
            im("image tokens p50", &I::imageTokens, &D::p50, 0),
            im("encode p50 (ms)", &I::encodeMs, &D::p50, 1),
            im("encode p95 (ms)", &I::encodeMs, &D::p95, 1),
            dist("prefill p50 (ms)", &lab::RunSummary::prefillMs, &D::p50, 1),
            im("encode/TTFT p50", &I::encodeShare, &D::p50, 3),
            im("cached tok/img req", &I::cachedTokens, &D::mean, 1),
            {"images dropped", A.images ? double(A.images->dropped) : 0, B.images ? double(B.images->dropped) : 0, 0,
             bool(A.images), bool(B.images)},
        };
        rows.insert(rows.end(), images.begin(), images.end());
    }
    const std::string la = "A " + r[0].candidate.profile.name, lb = "B " + r[1].candidate.profile.name;
    out << std::left << std::setw(22) << "metric" << std::right << std::setw(14) << la << std::setw(14) << lb
        << std::setw(10) << "B/A" << '\n';
    rows.insert(rows.end(), precision.begin(), precision.end());
    for (const Row& row : rows) {
        out << std::left << std::setw(22) << row.name << std::right << std::setw(14)
            << (row.hasA ? fmt(row.a, row.precision) : "-") << std::setw(14)
            << (row.hasB ? fmt(row.b, row.precision) : "-") << std::setw(10)
            << (row.hasA && row.hasB && row.a != 0 ? fmt(row.b / row.a, 2) : std::string("-")) << '\n';
    }
}

bool reportFailures(const std::vector<lab::CandidateResult>& results) {
    bool noneOk = false;
    for (const auto& r : results) {
        std::map<std::string, int64_t> reasons;
        int64_t failed = 0;
        for (const auto& rec : r.run.records) {
            if (rec.status != lab::RequestStatus::Error && rec.status != lab::RequestStatus::Rejected) continue;
            ++failed;
            ++reasons[std::string(lab::requestStatusName(rec.status)) + ": " + rec.error];
        }
        if (failed == 0) continue;
        std::vector<std::pair<std::string, int64_t>> byCount(reasons.begin(), reasons.end());
        std::stable_sort(byCount.begin(), byCount.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
        std::cerr << "compare: " << r.candidate.label << " (" << r.candidate.profile.name << "): " << failed << " of "
                  << r.run.records.size() << " requests failed\n";
        for (size_t i = 0; i < byCount.size() && i < 3; ++i)
            std::cerr << "  " << byCount[i].second << "x " << byCount[i].first << '\n';
        if (byCount.size() > 3) std::cerr << "  (and " << byCount.size() - 3 << " other reasons; see --json)\n";
        if (r.summary.ok == 0 && !r.run.cancelled) noneOk = true;
    }
    return noneOk;
}

} // namespace mb::cli
