// `modebench-cli runs`: list, show, export, import, delete, diff, rename and tag stored runs.
#include "cli/command_util.h"

#include "db/run_document.h"
#include "db/run_store.h"
#include "lab/atomic_file.h"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace mb::cli {

namespace {

struct RunsArgs {
    std::string db;
    bool json = false;
    int64_t id = 0, id2 = 0;
    std::string format = "json", out, file, name, status, tag;
    std::vector<std::string> tags;
    bool remove = false, force = false;
    int64_t limit = -1;
};

// Commands that only read or edit runs do not create a store at an explicit --db that
// does not exist (a typo would otherwise leave an empty database behind).
db::RunStore openStore(const RunsArgs& a, bool create = false) {
    return db::RunStore::open(databasePath(a.db), {.create = create || a.db.empty()});
}

std::string fmt(double v, int precision) {
    std::ostringstream ss;
    ss << std::fixed << std::setprecision(precision) << v;
    return ss.str();
}

std::string joined(const std::vector<std::string>& items, const char* sep) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
    return s;
}

Json listingJson(const db::RunListing& r) {
    Json candidates = Json::array();
    for (const auto& c : r.candidates)
        candidates.push_back({{"id", c.id},
                              {"label", c.label},
                              {"profile", c.profileName},
                              {"target_kind", c.targetKind},
                              {"model_path", c.modelPath}});
    return {{"id", r.id},
            {"name", r.name},
            {"status", lab::runStatusName(r.status)},
            {"created_at", r.createdAt},
            {"tags", r.tags},
            {"candidates", candidates}};
}

void runList(const RunsArgs& a) {
    db::RunFilter filter;
    if (!a.status.empty()) {
        try {
            filter.status = db::runStatusFromName(a.status);
        } catch (const db::DbError& e) {
            throw UsageError(std::string("--status: ") + e.what());
        }
    }
    filter.tag = a.tag;
    filter.limit = a.limit;
    const auto runs = openStore(a).listRuns(filter);
    if (a.json) {
        Json j = Json::array();
        for (const auto& r : runs) j.push_back(listingJson(r));
        printJson(j);
        return;
    }
    if (runs.empty()) {
        std::cout << "no runs\n";
        return;
    }
    std::cout << std::left << std::setw(6) << "ID" << std::setw(21) << "CREATED (UTC)"
              << std::setw(13) << "STATUS" << std::setw(24) << "CANDIDATES"
              << "NAME\n";
    for (const auto& r : runs) {
        std::vector<std::string> cands;
        for (const auto& c : r.candidates) cands.push_back(c.label + ":" + c.profileName);
        std::string created = r.createdAt.substr(0, 19);
        std::replace(created.begin(), created.end(), 'T', ' ');
        std::cout << std::left << std::setw(6) << r.id << std::setw(21) << created << std::setw(13)
                  << lab::runStatusName(r.status) << std::setw(24) << joined(cands, " ") << r.name
                  << (r.tags.empty() ? "" : "  [" + joined(r.tags, ", ") + "]") << '\n';
    }
}

// Metric rows, one column per candidate; with two runs, a ratio column per shared label.
void printMetricsTable(const db::RunDiff& d, bool ratios) {
    std::vector<std::string> headers;
    for (const auto& c : d.columns)
        headers.push_back("#" + std::to_string(c.runId) + " " + c.label + " " + c.profile);
    struct Ratio {
        size_t first, second;
        std::string header;
    };
    std::vector<Ratio> ratioCols;
    if (ratios && !d.columns.empty()) {
        const int64_t run1 = d.columns.front().runId;
        for (size_t i = 0; i < d.columns.size(); ++i) {
            if (d.columns[i].runId != run1) continue;
            for (size_t k = 0; k < d.columns.size(); ++k)
                if (d.columns[k].runId != run1 && d.columns[k].label == d.columns[i].label)
                    ratioCols.push_back({i, k, d.columns[i].label + " 2/1"});
        }
    }
    size_t width = 12;
    for (const auto& h : headers) width = std::max(width, h.size() + 2);
    std::cout << std::left << std::setw(22) << "metric" << std::right;
    for (const auto& h : headers) std::cout << std::setw(static_cast<int>(width)) << h;
    for (const auto& r : ratioCols) std::cout << std::setw(10) << r.header;
    std::cout << '\n';
    for (size_t m = 0; m < d.metrics.size(); ++m) {
        std::cout << std::left << std::setw(22) << d.metrics[m].title << std::right;
        for (const auto& c : d.columns)
            std::cout << std::setw(static_cast<int>(width))
                      << (c.values[m] ? fmt(*c.values[m], d.metrics[m].precision)
                                      : std::string("-"));
        for (const auto& r : ratioCols) {
            const auto& a = d.columns[r.first].values[m];
            const auto& b = d.columns[r.second].values[m];
            std::cout << std::setw(10) << (a && b && *a != 0 ? fmt(*b / *a, 2) : std::string("-"));
        }
        std::cout << '\n';
    }
}

void runShow(const RunsArgs& a) {
    db::RunStore store = openStore(a);
    const db::StoredRun run = store.getRun(a.id, db::RunDetail::Summaries);
    if (a.json) {
        Json doc = db::exportDocument(run);
        Json j = doc["run"];
        j["candidates"] = Json::array();
        for (size_t i = 0; i < run.candidates.size(); ++i) {
            Json c = doc["candidates"][i];
            c.erase("requests");
            c.erase("series");
            c["request_count"] = run.candidates[i].requestCount;
            j["candidates"].push_back(std::move(c));
        }
        printJson(j);
        return;
    }
    std::cout << "run " << run.id << (run.info.name.empty() ? "" : ": " + run.info.name) << '\n'
              << "  created   " << run.createdAt << '\n'
              << "  status    " << lab::runStatusName(run.status) << '\n';
    if (!run.info.tags.empty()) std::cout << "  tags      " << joined(run.info.tags, ", ") << '\n';
    try {
        const auto w = Json::parse(run.info.workloadJson);
        std::cout << "  workload  " << w.value("name", std::string("?")) << ", seed "
                  << w.value("seed", 0) << '\n';
    } catch (const Json::exception&) {
    }
    std::cout << "candidates:\n";
    for (const auto& c : run.candidates) {
        std::string profile;
        try {
            profile = Json::parse(c.info.profileJson).value("name", std::string());
        } catch (const Json::exception&) {
        }
        std::cout << "  " << c.info.label << "  " << profile << "  " << c.info.targetKind << "  "
                  << c.info.modelPath << " ("
                  << fmt(static_cast<double>(c.info.modelBytes) / 1048576.0, 1) << " MiB"
                  << (c.info.modelSha256.empty() ? ""
                                                 : ", sha256 " + c.info.modelSha256.substr(0, 12))
                  << "), " << c.requestCount << " requests\n";
    }
    printMetricsTable(store.metricsTable({run.id}), false);
}

void writeOut(const std::string& path, const std::string& text) {
    if (path.empty() || path == "-") {
        std::cout << text << std::flush;
        return;
    }
    try {
        lab::writeFileAtomically(path, text); // a failed write leaves no truncated export
    } catch (const lab::AtomicFileError& e) {
        throw UsageError(e.what());
    }
}

void runExport(const RunsArgs& a) {
    db::RunStore store = openStore(a);
    if (a.format == "json") {
        writeOut(a.out,
                 store.exportRun(a.id).dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
    } else {
        std::ostringstream csv;
        db::writeRunCsv(store.getRun(a.id, db::RunDetail::Full), csv);
        writeOut(a.out, csv.str());
    }
    if (!a.out.empty() && a.out != "-")
        std::cerr << "runs: exported run " << a.id << " to " << a.out << '\n';
}

void runImport(const RunsArgs& a) {
    const std::string text = readTextFile(a.file);
    Json doc;
    try {
        doc = Json::parse(text);
    } catch (const Json::exception& e) {
        throw UsageError(a.file + " is not JSON: " + e.what());
    }
    db::RunStore store = openStore(a, true);
    std::cout << store.importRun(doc) << '\n';
}

// "#4 (fast, runs #2 #3, saved 2024-05-01, migration at D)": saved selections have no name,
// so they are told apart by what they decided and pooled.
std::string describeSelection(const db::StoredSelection& s) {
    std::string d = "#" + std::to_string(s.id) + " (";
    try {
        d += Json::parse(s.resultJson).value("recommendation", std::string("?")) + ", ";
    } catch (const Json::exception&) {
    }
    d += "runs";
    for (const int64_t id : s.runIds) d += " #" + std::to_string(id);
    d += ", saved " + s.createdAt.substr(0, 10);
    if (!s.migrationJson.empty()) {
        try {
            d += ", migration at " + Json::parse(s.migrationJson).value("node", std::string("?"));
        } catch (const Json::exception&) {
        }
    }
    return d + ")";
}

std::string describeSelections(const std::vector<db::StoredSelection>& selections) {
    std::string d;
    for (const auto& s : selections) d += (d.empty() ? "" : ", ") + describeSelection(s);
    return d;
}

void runDelete(const RunsArgs& a) {
    std::vector<db::StoredSelection> gone;
    try {
        gone = openStore(a).deleteRun(a.id, a.force ? db::SelectionsOfRun::Delete : db::SelectionsOfRun::Refuse);
    } catch (const db::RunHasSelectionsError& e) {
        throw UsageError("run " + std::to_string(a.id) + " is part of saved selection" +
                         (e.selections.size() == 1 ? " " : "s ") + describeSelections(e.selections) +
                         "; --force deletes " + (e.selections.size() == 1 ? "it" : "them") +
                         " with the run (deleted nothing)");
    }
    std::cerr << "runs: deleted run " << a.id;
    if (!gone.empty())
        std::cerr << " and saved selection" << (gone.size() == 1 ? " " : "s ") << describeSelections(gone);
    std::cerr << '\n';
}

void runDiff(const RunsArgs& a) {
    const db::RunDiff d = openStore(a).diffRuns(a.id, a.id2);
    if (a.json) {
        printJson(d.toJson());
        return;
    }
    printMetricsTable(d, true);
}

bool blank(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

void runRename(const RunsArgs& a) {
    if (blank(a.name)) throw UsageError("a run name cannot be empty");
    openStore(a).renameRun(a.id, a.name);
}

void runTag(const RunsArgs& a) {
    db::RunStore store = openStore(a);
    std::vector<std::string> tags = store.getRun(a.id, db::RunDetail::Summaries).info.tags;
    for (const auto& t : a.tags) {
        if (blank(t)) throw UsageError("a tag cannot be empty");
        const auto it = std::find(tags.begin(), tags.end(), t);
        if (a.remove && it != tags.end()) tags.erase(it);
        if (!a.remove && it == tags.end()) tags.push_back(t);
    }
    store.setTags(a.id, tags);
    std::cout << joined(tags, " ") << '\n';
}

} // namespace

void addRunsCommand(CLI::App& root) {
    CLI::App* runs =
        root.add_subcommand("runs", "List, show, export, import, compare and edit stored runs");
    runs->require_subcommand(1);
    auto sub = [runs](const char* name, const char* help, void (*fn)(const RunsArgs&)) {
        auto a = std::make_shared<RunsArgs>();
        CLI::App* cmd = runs->add_subcommand(name, help);
        addDatabaseOption(*cmd, a->db);
        cmd->callback([a, fn] { fn(*a); });
        return std::make_pair(cmd, a);
    };
    auto idArg = [](CLI::App* cmd, int64_t& id, const char* name = "id") {
        cmd->add_option(name, id, "Run id")->required()->check(CLI::PositiveNumber);
    };
    {
        auto [cmd, a] = sub("list", "List stored runs, newest first", runList);
        cmd->add_flag("--json", a->json, "Print a JSON array");
        cmd->add_option("--status", a->status,
                        "Only runs with this status (running, complete, interrupted, failed)");
        cmd->add_option("--tag", a->tag, "Only runs with this tag");
        cmd->add_option("--limit", a->limit, "At most this many runs")
            ->check(CLI::NonNegativeNumber);
    }
    {
        auto [cmd, a] = sub("show", "Show a run: candidates and their key metrics", runShow);
        idArg(cmd, a->id);
        cmd->add_flag("--json", a->json, "Print JSON (the run and candidates, without requests)");
    }
    {
        auto [cmd, a] =
            sub("export", "Export a run with every request: JSON document or CSV", runExport);
        idArg(cmd, a->id);
        cmd->add_option("--format", a->format, "json (re-importable) or csv (one row per request)")
            ->check(CLI::IsMember({"json", "csv"}))
            ->capture_default_str();
        cmd->add_option("--out,-o", a->out, "Output file (default: stdout)");
    }
    {
        auto [cmd, a] =
            sub("import", "Import a JSON run document; prints the new run id", runImport);
        cmd->add_option("file", a->file, "JSON file written by 'runs export --format json'")
            ->required();
    }
    {
        auto [cmd, a] = sub("delete", "Delete a run and everything recorded for it", runDelete);
        idArg(cmd, a->id);
        cmd->add_flag("--force", a->force,
                      "Also delete the saved selections that pooled the run (otherwise they stop the deletion)");
    }
    {
        auto [cmd, a] = sub("diff", "Two runs' summaries side by side", runDiff);
        idArg(cmd, a->id, "id1");
        idArg(cmd, a->id2, "id2");
        cmd->add_flag("--json", a->json, "Print JSON");
    }
    {
        auto [cmd, a] = sub("rename", "Rename a run", runRename);
        idArg(cmd, a->id);
        cmd->add_option("name", a->name, "New name")->required();
    }
    {
        auto [cmd, a] =
            sub("tag", "Add tags to a run (or remove them with --remove); prints its tags", runTag);
        idArg(cmd, a->id);
        cmd->add_option("tags", a->tags, "Tags")->required();
        cmd->add_flag("--remove", a->remove, "Remove the tags instead");
    }
}

} // namespace mb::cli
