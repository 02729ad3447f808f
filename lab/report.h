// The selection report model (PRODUCT.md §8): one value every format renders (HTML, Markdown,
// JSON, CSV, PDF), built from stored runs plus an optional selection and migration state.
//
// A report is a title, ordered sections (paragraphs, tables, chart references) and charts
// as data series. Renderers own no content: a new format walks the same sections.
#pragma once

#include "lab/executive_summary.h"
#include "lab/migration.h"
#include "lab/selection.h"
#include "lab/stored_run.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mb::lab {

struct ReportTable {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows; // each as wide as columns
};

struct ReportSeries {
    std::string name;
    std::vector<std::pair<double, double>> points; // Line: (x, y); Bars: (category index, value)
};

struct ReportChart {
    enum class Kind { Line, Bars };
    std::string id; // "ttft_histogram", "e2e_cdf", "ttft_over_time", "hit_rate_over_time", "throughput", "cost"
    std::string title, xLabel, yLabel;
    Kind kind = Kind::Line;
    std::vector<std::string> categories; // Bars only
    std::vector<ReportSeries> series;
};

struct ReportSection {
    std::string id; // "summary", "recommendation", "requirements", "candidates", "metrics", "charts", "trace",
                    // "plugins", "images", "capacity", "migration", "deployment", "runs", "appendix"
    std::string title;
    std::vector<std::string> paragraphs;
    std::vector<ReportTable> tables;
    std::vector<std::string> chartIds; // charts shown in this section, by id
};

// What a stored selection adds to a report.
struct ReportSelection {
    int64_t id = 0; // 0 when not stored
    SelectionResult result;
    nlohmann::ordered_json requirements; // lab::toJson(Requirements)
    nlohmann::ordered_json prices;       // lab::toJson(PriceSheet), null without one
    std::optional<MigrationState> migration;
};

struct Report {
    std::string title;
    std::string generatedAt; // ISO-8601 UTC, given by the caller (reports are reproducible)
    std::vector<int64_t> runIds;
    std::optional<ReportSelection> selection;
    std::optional<ExecutiveSummary> summary; // executiveSummary(selection->result); none without a selection
    // The executive summary first, then PRODUCT.md §8's order (deployment, §13, before the runs),
    // and the score formulas as the appendix last.
    std::vector<ReportSection> sections;
    std::vector<ReportChart> charts;

    const ReportChart* chart(const std::string& id) const;
};

// Runs must carry their requests (RunDetail::Full) for the latency tables and charts; a
// candidate without requests is reported from its stored summary and series only.
Report buildReport(const std::vector<StoredRun>& runs, const std::optional<ReportSelection>& selection,
                   const std::string& generatedAt);

// The "summary" section (report_summary.cpp): the verdict, the confidence with its basis, the
// deciding numbers and what would change the decision; without a selection, that there is none.
ReportSection summarySection(const std::optional<ExecutiveSummary>& summary);
// The "appendix" section (report_summary.cpp): scoreFormulas of the selection as a table.
ReportSection appendixSection(const std::optional<ReportSelection>& selection);
// The "migration" section (report_migration.cpp): the selection's monitoring plan, the flowchart
// state, the warm-up, every monitoring pass (node F) against the bounds, the checklist and the
// batching adjustments.
ReportSection migrationSection(const std::optional<ReportSelection>& selection);

// The "capacity" section (report_capacity.cpp): each mode's sweep points, its knee, the replicas
// for the month's mean and peak and the autoscaling thresholds; or that no sweep was measured.
ReportSection capacitySection(const std::optional<ReportSelection>& selection);

// The "deployment" section (report_deployment.cpp): the recommended candidate's launch command
// per server and the knobs without an equivalent (lab/deploy_export.h), or why there is none.
ReportSection deploymentSection(const std::vector<StoredRun>& runs, const std::optional<ReportSelection>& selection);

// The "plugins" section (report_plugins.cpp): each candidate's plugin chain, its measured cost
// per request from the stored requests, and each script's approval and audit as recorded.
ReportSection pluginsSection(const std::vector<StoredRun>& runs);

// The "images" section (report_images.cpp): per candidate, its requests with images, their image
// tokens, encode time and share of TTFT, cached tokens and dropped images; or that none had one.
ReportSection imagesSection(const std::vector<StoredRun>& runs);

// The candidate's display name in reports: "#RUN label (profile)".
std::string candidateName(const StoredRun& run, const StoredCandidate& c);

} // namespace mb::lab
