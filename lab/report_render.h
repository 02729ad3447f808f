// Report renderers without Qt: HTML (self-contained, inline SVG charts), Markdown, JSON, CSV.
// The PDF renderer needs Qt Gui and lives in its own target (lab/report_pdf.h).
#pragma once

#include "lab/report.h"
#include "lab/report_chart.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mb::lab {

enum class ReportFormat { Html, Pdf, Markdown, Json, Csv };
// "html", "pdf", "md", "json", "csv"; nullopt otherwise.
std::optional<ReportFormat> reportFormatFromName(const std::string& name);

struct HtmlOptions {
    // Charts as inline <svg>; false writes <img src="chart:ID"> for a renderer that
    // supplies the images itself (Qt's rich text has no SVG).
    bool inlineSvg = true;
    // Simple table and heading markup only (what QTextDocument understands).
    bool richTextSubset = false;
};

// One self-contained file: no scripts, no external resources. Well-formed XML (XHTML
// syntax) so that it can be checked by any XML parser.
std::string renderHtml(const Report& report, const HtmlOptions& options = {});
std::string renderMarkdown(const Report& report);
// {"format": "modebench-report", "format_version": 1, "title", "generated_at", "run_ids",
//  "executive_summary": {...} | null (lab/executive_summary.h), "selection": {...} | null,
//  "migration": {...} | null, "sections": [...], "charts": [...]}
nlohmann::ordered_json renderJson(const Report& report);
// Long format, RFC 4180: section,table,row,column,value for every table cell, then
// chart,<id>,<series>,<x>,<y> for every chart point.
std::string renderCsv(const Report& report);
// One chart as an <svg> element (no XML declaration), for embedding.
std::string renderSvg(const ChartLayout& layout);

} // namespace mb::lab
