// The Markdown, JSON and CSV reports.
#include "lab/report_render.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace mb::lab {

namespace {

using OJson = nlohmann::ordered_json;

// Pipe-table cells: no pipes or line breaks inside.
std::string mdCell(std::string s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += ' ';
        else out += c;
    }
    return out;
}

void mdTable(std::ostringstream& m, const std::vector<std::string>& columns,
             const std::vector<std::vector<std::string>>& rows) {
    m << '|';
    for (const auto& c : columns) m << ' ' << mdCell(c) << " |";
    m << "\n|";
    for (size_t i = 0; i < columns.size(); ++i) m << " --- |";
    m << '\n';
    for (const auto& r : rows) {
        m << '|';
        for (const auto& c : r) m << ' ' << mdCell(c) << " |";
        m << '\n';
    }
    m << '\n';
}

std::string shortNum(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string csvCell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string fullNum(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

} // namespace

std::string renderMarkdown(const Report& rep) {
    std::ostringstream m;
    m << "# " << rep.title << "\n\nGenerated " << rep.generatedAt << " by ModeBench.\n\n";
    for (const auto& sec : rep.sections) {
        m << "## " << sec.title << "\n\n";
        for (const auto& p : sec.paragraphs) m << p << "\n\n";
        for (const auto& t : sec.tables) {
            m << "**" << t.title << "**\n\n";
            mdTable(m, t.columns, t.rows);
        }
        for (const auto& id : sec.chartIds) {
            const ReportChart* c = rep.chart(id);
            if (!c) continue;
            m << "### " << c->title << "\n\n";
            if (c->kind == ReportChart::Kind::Bars) {
                // Bar charts are small: the whole table.
                std::vector<std::string> cols{c->xLabel.empty() ? "category" : c->xLabel};
                for (const auto& s : c->series) cols.push_back(s.name);
                std::vector<std::vector<std::string>> rows;
                for (size_t k = 0; k < c->categories.size(); ++k) {
                    std::vector<std::string> row{c->categories[k]};
                    for (const auto& s : c->series) {
                        std::string v;
                        for (const auto& [x, y] : s.points)
                            if (static_cast<size_t>(x) == k) v = shortNum(y);
                        row.push_back(v);
                    }
                    rows.push_back(std::move(row));
                }
                mdTable(m, cols, rows);
            } else {
                // Lines: a summary per series; every point is in the JSON and CSV reports.
                std::vector<std::vector<std::string>> rows;
                for (const auto& s : c->series) {
                    if (s.points.empty()) {
                        rows.push_back({s.name, "0", "", "", "", ""});
                        continue;
                    }
                    double ymin = s.points[0].second, ymax = ymin, sum = 0;
                    for (const auto& [x, y] : s.points) ymin = std::min(ymin, y), ymax = std::max(ymax, y), sum += y;
                    rows.push_back({s.name, std::to_string(s.points.size()),
                                    shortNum(s.points.front().first) + " to " + shortNum(s.points.back().first),
                                    shortNum(ymin), shortNum(sum / static_cast<double>(s.points.size())),
                                    shortNum(ymax)});
                }
                mdTable(m, {"series", "points", c->xLabel, "min " + c->yLabel, "mean", "max"}, rows);
            }
        }
    }
    return m.str();
}

OJson renderJson(const Report& rep) {
    OJson j;
    j["format"] = "modebench-report";
    j["format_version"] = 1;
    j["title"] = rep.title;
    j["generated_at"] = rep.generatedAt;
    j["run_ids"] = rep.runIds;
    // What a reader sees first, before the documents it rests on.
    j["executive_summary"] = rep.summary ? toJson(*rep.summary) : OJson();
    if (rep.selection) {
        j["selection_id"] = rep.selection->id > 0 ? OJson(rep.selection->id) : OJson();
        j["selection"] = toJson(rep.selection->result);
        j["requirements"] = rep.selection->requirements;
        j["prices"] = rep.selection->prices;
        j["migration"] = rep.selection->migration ? toJson(*rep.selection->migration) : OJson();
    } else {
        j["selection_id"] = j["selection"] = j["requirements"] = j["prices"] = j["migration"] = nullptr;
    }
    OJson sections = OJson::array();
    for (const auto& s : rep.sections) {
        OJson tables = OJson::array();
        for (const auto& t : s.tables) tables.push_back({{"title", t.title}, {"columns", t.columns}, {"rows", t.rows}});
        sections.push_back({{"id", s.id},
                            {"title", s.title},
                            {"paragraphs", s.paragraphs},
                            {"tables", tables},
                            {"charts", s.chartIds}});
    }
    j["sections"] = sections;
    OJson charts = OJson::array();
    for (const auto& c : rep.charts) {
        OJson series = OJson::array();
        for (const auto& s : c.series) {
            OJson pts = OJson::array();
            for (const auto& [x, y] : s.points) pts.push_back({x, y});
            series.push_back({{"name", s.name}, {"points", pts}});
        }
        charts.push_back({{"id", c.id},
                          {"title", c.title},
                          {"kind", c.kind == ReportChart::Kind::Bars ? "bars" : "line"},
                          {"x_label", c.xLabel},
                          {"y_label", c.yLabel},
                          {"categories", c.categories},
                          {"series", series}});
    }
    j["charts"] = charts;
    return j;
}

std::string renderCsv(const Report& rep) {
    std::ostringstream c;
    c << "section,table,row,column,value\n";
    c << "report,title,0,title," << csvCell(rep.title) << '\n';
    c << "report,title,0,generated_at," << csvCell(rep.generatedAt) << '\n';
    for (const auto& s : rep.sections) {
        for (size_t p = 0; p < s.paragraphs.size(); ++p)
            c << csvCell(s.id) << ",paragraphs," << p << ",text," << csvCell(s.paragraphs[p]) << '\n';
        for (const auto& t : s.tables)
            for (size_t r = 0; r < t.rows.size(); ++r)
                for (size_t k = 0; k < t.columns.size() && k < t.rows[r].size(); ++k)
                    c << csvCell(s.id) << ',' << csvCell(t.title) << ',' << r << ',' << csvCell(t.columns[k]) << ','
                      << csvCell(t.rows[r][k]) << '\n';
    }
    for (const auto& ch : rep.charts)
        for (const auto& s : ch.series)
            for (const auto& [x, y] : s.points)
                c << "chart," << csvCell(ch.id) << ',' << csvCell(s.name) << ',' << fullNum(x) << ',' << fullNum(y)
                  << '\n';
    return c.str();
}

} // namespace mb::lab
