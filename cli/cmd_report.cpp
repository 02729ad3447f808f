// `modebench-cli report`: a selection report of stored runs as HTML, PDF, Markdown, JSON or CSV.
#include "cli/command_util.h"
#include "cli/selection_inputs.h"

#include "lab/atomic_file.h"
#include "lab/report.h"
#include "lab/report_render.h"
#ifdef MODEBENCH_HAVE_PDF
#include "lab/report_pdf.h"
#endif

#include <algorithm>
#include <iostream>

namespace mb::cli {

namespace {

struct ReportArgs {
    std::string db, format, out;
    std::vector<int64_t> runs;
    int64_t selection = 0;
    bool json = false;
};

nlohmann::json parseStored(const std::string& text, const std::string& what, int64_t id) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
        throw UsageError("selection " + std::to_string(id) + ": its " + what + " is not JSON");
    }
}

lab::ReportSelection reportSelection(const db::StoredSelection& s) {
    lab::ReportSelection r;
    r.id = s.id;
    try {
        r.result = lab::selectionResultFromJson(parseStored(s.resultJson, "result", s.id));
        if (!s.migrationJson.empty())
            r.migration = lab::migrationFromJson(parseStored(s.migrationJson, "migration state", s.id));
    } catch (const lab::SelectionError& e) {
        throw UsageError("selection " + std::to_string(s.id) + ": " + e.what());
    } catch (const lab::MigrationError& e) {
        throw UsageError("selection " + std::to_string(s.id) + ": " + e.what());
    }
    r.requirements = s.requirementsJson.empty() ? nlohmann::ordered_json()
                                                : nlohmann::ordered_json::parse(s.requirementsJson);
    r.prices = s.pricesJson.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json::parse(s.pricesJson);
    return r;
}

void runReport(const ReportArgs& a) {
    const auto format = lab::reportFormatFromName(a.format);
    if (!format) throw UsageError("--format: expected html, pdf, md, json or csv (got '" + a.format + "')");
#ifndef MODEBENCH_HAVE_PDF
    if (*format == lab::ReportFormat::Pdf)
        throw UsageError("PDF needs the Qt build: this modebench-cli was built without Qt 6 Gui; use --format html");
#endif
    if (a.runs.empty() && a.selection == 0) throw UsageError("--run or --selection is required");
    db::RunStore store = openExistingStore(a.db);
    std::optional<lab::ReportSelection> selection;
    std::vector<int64_t> runIds = a.runs;
    if (a.selection != 0) {
        db::StoredSelection stored;
        try {
            stored = store.getSelection(a.selection);
        } catch (const db::DbError& e) {
            throw UsageError(e.what());
        }
        for (const int64_t id : a.runs)
            if (std::find(stored.runIds.begin(), stored.runIds.end(), id) == stored.runIds.end())
                throw UsageError("selection " + std::to_string(a.selection) + " was not made on run " +
                                 std::to_string(id));
        runIds = stored.runIds; // the report covers every run the selection pooled
        selection = reportSelection(stored);
    }
    const auto runs = loadRuns(store, runIds);
    const lab::Report report = lab::buildReport(runs, selection, db::isoNowUtc());

    if (*format == lab::ReportFormat::Pdf) {
#ifdef MODEBENCH_HAVE_PDF
        try {
            lab::writeReportPdf(report, a.out);
        } catch (const std::runtime_error& e) {
            throw UsageError(e.what());
        }
#endif
    } else {
        // Rendered in memory, then written beside the target and renamed: a failed write leaves
        // no truncated report behind.
        std::string text;
        switch (*format) {
        case lab::ReportFormat::Html: text = lab::renderHtml(report); break;
        case lab::ReportFormat::Markdown: text = lab::renderMarkdown(report); break;
        case lab::ReportFormat::Json:
            text = lab::renderJson(report).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n';
            break;
        case lab::ReportFormat::Csv: text = lab::renderCsv(report); break;
        case lab::ReportFormat::Pdf: break;
        }
        try {
            lab::writeFileAtomically(a.out, text);
        } catch (const lab::AtomicFileError& e) {
            throw UsageError(e.what());
        }
    }
    if (a.json)
        printJson({{"path", a.out}, {"format", a.format}, {"run_ids", report.runIds},
                   {"selection_id", a.selection ? Json(a.selection) : Json()}});
    else
        std::cout << "wrote " << a.out << " (" << a.format << ", runs";
    if (!a.json) {
        for (const int64_t id : report.runIds) std::cout << " #" << id;
        std::cout << (selection ? ", selection " + std::to_string(a.selection) : std::string()) << ")\n";
    }
}

} // namespace

void addReportCommand(CLI::App& root) {
    auto a = std::make_shared<ReportArgs>();
    CLI::App* cmd = root.add_subcommand(
        "report", "Write a selection report (recommendation, requirements, candidates, metrics, charts, trace, "
                  "migration state, run ids) as html, pdf, md, json or csv");
    addDatabaseOption(*cmd, a->db);
    cmd->add_option("--run", a->runs, "Run id to report on (repeatable; with --selection, one of its runs)");
    cmd->add_option("--selection", a->selection, "Saved selection id (from select --save); adds its decision")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--format", a->format, "html (self-contained), pdf (needs the Qt build), md, json or csv")
        ->required();
    cmd->add_option("--out", a->out, "Output file")->required();
    cmd->add_flag("--json", a->json, "Print what was written as JSON");
    cmd->callback([a] { runReport(*a); });
}

} // namespace mb::cli
