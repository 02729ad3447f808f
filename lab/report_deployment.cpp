// The report's Deployment section: the chosen candidate's launch command per server and the knobs
// left out.
#include "lab/deploy_export.h"
#include "lab/report.h"

namespace mb::lab {

namespace {

const char* kExportHint =
    "modebench-cli select ... --export-deploy DIR (or the Selection page's Export deployment "
    "button) writes these as scripts with the profile and an autoscaler manifest";

} // namespace

ReportSection deploymentSection(const std::vector<StoredRun>& runs,
                                const std::optional<ReportSelection>& sel) {
    ReportSection s{"deployment", "Deployment", {}, {}, {}};
    if (!sel) {
        s.paragraphs.push_back("No selection: no candidate was chosen to deploy.");
        return s;
    }
    // The selection's own (first) run holds the candidates' stored profiles.
    const StoredRun* run = runs.empty() ? nullptr : &runs.front();
    for (const auto& r : runs)
        if (!sel->result.runIds.empty() && r.id == sel->result.runIds.front()) run = &r;
    if (!run) {
        s.paragraphs.push_back("No run: nothing to deploy.");
        return s;
    }
    DeployTarget t;
    try {
        t = deployTargetOf(*run, sel->result, std::nullopt);
    } catch (const DeployExportError& e) {
        s.paragraphs.push_back(
            std::string("No deployment settings: ") + e.what() +
            ". Name a candidate with modebench-cli select ... --export-deploy DIR "
            "--deploy-candidate fast|regular to export one anyway.");
        return s;
    }
    const auto servers = launchSettings(t);
    s.paragraphs.push_back(
        "Launch settings of the recommended " + std::string(modeName(t.mode)) + " candidate (" +
        t.label + ", profile " + t.profile.name +
        ") for the servers a deployment beyond one "
        "machine would run, knob by knob; " +
        std::to_string(deployContext(t)) +
        " tokens of context per request. MODEL, HOST and PORT stand for the model to serve and "
        "where to listen.");
    s.paragraphs.push_back(std::string(kExportHint) + ".");
    ReportTable commands{"Launch commands", {"server", "command line"}, {}};
    ReportTable left{"Knobs without an equivalent option", {"server", "knob", "value", "note"}, {}};
    for (const auto& server : servers) {
        commands.rows.push_back({server.title, commandLine(server)});
        for (const auto& k : server.knobs)
            if (k.args.empty() && !k.note.empty())
                left.rows.push_back({server.title, k.knob, k.value, k.note});
    }
    s.tables.push_back(std::move(commands));
    s.tables.push_back(std::move(left));
    return s;
}

} // namespace mb::lab
