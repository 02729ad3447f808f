// The HTML report: one self-contained XHTML file with the charts as inline SVG.
#include "lab/report_render.h"

#include <iomanip>
#include <sstream>

namespace mb::lab {

namespace {

std::string escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string px(double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << v;
    return s.str();
}

const char* kStyle = R"css(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } caption { font-weight: bold; text-align: left; padding: 0.3em 0; }
.recommendation { font-size: 1.2em; font-weight: bold; } figure { margin: 1em 0; }
)css";

} // namespace

std::optional<ReportFormat> reportFormatFromName(const std::string& name) {
    if (name == "html") return ReportFormat::Html;
    if (name == "pdf") return ReportFormat::Pdf;
    if (name == "md") return ReportFormat::Markdown;
    if (name == "json") return ReportFormat::Json;
    if (name == "csv") return ReportFormat::Csv;
    return std::nullopt;
}

std::string renderSvg(const ChartLayout& l) {
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(l.width) << "\" height=\"" << px(l.height)
      << "\" viewBox=\"0 0 " << px(l.width) << ' ' << px(l.height) << "\" font-family=\"DejaVu Sans, sans-serif\">";
    s << "<rect x=\"0\" y=\"0\" width=\"" << px(l.width) << "\" height=\"" << px(l.height) << "\" fill=\"#ffffff\"/>";
    for (const auto& g : l.lines)
        s << "<line x1=\"" << px(g.x1) << "\" y1=\"" << px(g.y1) << "\" x2=\"" << px(g.x2) << "\" y2=\"" << px(g.y2)
          << "\" stroke=\"" << (g.grid ? "#e4e4e4" : "#444444") << "\" stroke-width=\"1\"/>";
    for (const auto& r : l.rects)
        s << "<rect x=\"" << px(r.x) << "\" y=\"" << px(r.y) << "\" width=\"" << px(r.w) << "\" height=\"" << px(r.h)
          << "\" fill=\"" << chartColour(r.colour) << "\"/>";
    for (const auto& p : l.polylines) {
        s << "<polyline fill=\"none\" stroke=\"" << chartColour(p.colour) << "\" stroke-width=\"1.5\" points=\"";
        for (const auto& [x, y] : p.points) s << px(x) << ',' << px(y) << ' ';
        s << "\"/>";
    }
    for (const auto& t : l.texts) {
        const char* anchor = t.anchor == ChartLayout::Text::Anchor::Start    ? "start"
                             : t.anchor == ChartLayout::Text::Anchor::Middle ? "middle"
                                                                             : "end";
        s << "<text x=\"" << px(t.x) << "\" y=\"" << px(t.y) << "\" font-size=\"" << px(t.size)
          << "\" text-anchor=\"" << anchor << '"';
        if (t.vertical) s << " transform=\"rotate(-90 " << px(t.x) << ' ' << px(t.y) << ")\"";
        s << '>' << escape(t.text) << "</text>";
    }
    s << "</svg>";
    return s.str();
}

std::string renderHtml(const Report& rep, const HtmlOptions& opt) {
    std::ostringstream h;
    if (!opt.richTextSubset) h << "<!DOCTYPE html>\n";
    h << "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/><title>"
      << escape(rep.title) << "</title>";
    if (!opt.richTextSubset) h << "<style>" << kStyle << "</style>";
    h << "</head><body>\n<h1>" << escape(rep.title) << "</h1>\n<p>Generated " << escape(rep.generatedAt)
      << " by ModeBench.</p>\n";
    for (const auto& sec : rep.sections) {
        h << "<h2 id=\"" << escape(sec.id) << "\">" << escape(sec.title) << "</h2>\n";
        for (size_t i = 0; i < sec.paragraphs.size(); ++i) {
            const bool lead = (sec.id == "summary" || sec.id == "recommendation") && i == 0;
            h << (lead ? "<p class=\"recommendation\">" : "<p>") << (lead && opt.richTextSubset ? "<b>" : "")
              << escape(sec.paragraphs[i]) << (lead && opt.richTextSubset ? "</b>" : "") << "</p>\n";
        }
        for (const auto& t : sec.tables) {
            if (opt.richTextSubset) h << "<h3>" << escape(t.title) << "</h3>";
            h << "<table" << (opt.richTextSubset ? " border=\"1\" cellspacing=\"0\" cellpadding=\"3\"" : "") << '>';
            if (!opt.richTextSubset) h << "<caption>" << escape(t.title) << "</caption>";
            h << "<thead><tr>";
            for (const auto& c : t.columns) h << "<th>" << escape(c) << "</th>";
            h << "</tr></thead><tbody>";
            for (const auto& row : t.rows) {
                h << "<tr>";
                for (const auto& cell : row) h << "<td>" << escape(cell) << "</td>";
                h << "</tr>";
            }
            h << "</tbody></table>\n";
        }
        for (const auto& id : sec.chartIds) {
            const ReportChart* c = rep.chart(id);
            if (!c) continue;
            if (opt.inlineSvg)
                h << "<figure id=\"chart-" << escape(id) << "\">" << renderSvg(layoutChart(*c)) << "</figure>\n";
            else
                h << "<p><img src=\"chart:" << escape(id) << "\" width=\"560\" height=\"280\" alt=\""
                  << escape(c->title) << "\"/></p>\n";
        }
    }
    h << "</body></html>\n";
    return h.str();
}

} // namespace mb::lab
