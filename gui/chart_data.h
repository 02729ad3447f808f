// The points of the benchmark charts, computed from records and counter samples (no widgets).
#pragma once

#include "lab/request_record.h"

#include <QList>
#include <QPointF>

#include <map>
#include <string>
#include <vector>

namespace mb::gui {

// One candidate's raw data: live from the engine or rebuilt from the store.
struct ChartInput {
    std::vector<lab::RequestRecord> records;
    std::vector<QPointF> hitRate; // (seconds since start, cumulative hits / queries)
    std::vector<QPointF> kvMiB;   // (seconds, KV MiB in use)
};

// One candidate's chart points; x in seconds or ms as the chart's axis says.
struct ChartPoints {
    QList<QPointF> ttftHistogram; // (TTFT ms, requests): a step outline over shared bins
    QList<QPointF> e2eCdf;        // (e2e ms, fraction of requests <= x)
    QList<QPointF> itlCdf;        // (inter-token gap ms, fraction)
    QList<QPointF> ttftOverTime;  // (first token time s, TTFT ms): per request, see chartPoints
    QList<QPointF> hitRate;       // (s, hit rate)
    QList<QPointF> throughput;    // (bucket start s, output tokens/s in the bucket); see chartPoints
    QList<QPointF> kvMiB;         // (s, MiB)
};

// Bins of the TTFT histogram are shared by every candidate (edges from 0 to the largest
// TTFT, `bins` of them) so the outlines overlay. Only Ok requests count. CDFs keep at most
// `maxCdfPoints` points (evenly spaced ranks, the maximum always included).
// Bounded for the UI thread's redraw of a live run: a CDF sorts at most kMaxCdfSamples
// values (an even stride through the rest, the true minimum and maximum kept), and TTFT
// over time keeps at most 2 × kMaxScatterBins points (the lowest and highest TTFT of each
// time bin: the envelope, spikes included). Cost: linear in records and tokens, plus
// O(kMaxCdfSamples log kMaxCdfSamples) per CDF.
inline constexpr size_t kMaxCdfSamples = 1 << 16;
inline constexpr int kMaxScatterBins = 1000;
std::map<std::string, ChartPoints> chartPoints(const std::map<std::string, ChartInput>& inputs, int bins = 30,
                                               int maxCdfPoints = 256);

// The cumulative hit rate and KV MiB series of counter samples (seconds on x).
void appendSamples(ChartInput& input, const std::vector<lab::StatsSample>& samples);

} // namespace mb::gui
