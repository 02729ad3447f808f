// The audit report of a script plugin: gathered from the file and the analyser, as JSON and as text.
#include "plugins/audit.h"

#include "plugins/sha256.h"

#include <fstream>
#include <sstream>

namespace mb::plugins {

namespace {

using Json = nlohmann::json;

const char* const kCategories[] = {"process", "network", "filesystem", "environment", "dynamic", "native", "import", "interface"};

void fill(AuditReport& r, const Json& a) {
    r.parsed = a.value("parsed", false);
    if (!r.parsed) {
        r.parseError = a.value("message", std::string("cannot be parsed"));
        r.parseLine = a.value("line", 0);
        return;
    }
    for (const Json& i : a.value("imports", Json::array())) r.imports.push_back({i.value("module", ""), i.value("line", 0)});
    for (const Json& c : a.value("calls", Json::array())) r.calls.push_back({c.value("name", ""), c.value("line", 0)});
    for (const Json& f : a.value("findings", Json::array()))
        r.findings.push_back({f.value("category", ""), f.value("severity", ""), f.value("what", ""), f.value("line", 0)});
    const Json functions = a.value("functions", Json::object()); // items() must not outlive it
    for (const auto& [name, defined] : functions.items()) r.functions[name] = defined.is_boolean() && defined.get<bool>();
}

std::string lineOf(int line) { return line > 0 ? "line " + std::to_string(line) : "file"; }

} // namespace

AuditReport auditScript(const std::filesystem::path& script, const ChainOptions& options) {
    std::ifstream in(script, std::ios::binary);
    if (!in) throw PluginError("cannot read " + script.string());
    std::ostringstream bytes;
    bytes << in.rdbuf();
    const std::string source = bytes.str();
    AuditReport r;
    r.script = script;
    r.size = source.size();
    try {
        r.sha256 = sha256Hex(source);
    } catch (const std::runtime_error& e) {
        throw PluginError(std::string("cannot audit ") + script.string() + ": " + e.what());
    }
    r.sandbox = probeSandbox();
    fill(r, detail::analyzeSource(source, script.filename().string(), options, r.limits));
    if (!r.parsed) r.findings.push_back({"interface", "high", "the file is not valid Python: " + r.parseError, r.parseLine});
    return r;
}

int AuditReport::count(const std::string& severity) const {
    int n = 0;
    for (const AuditFinding& f : findings) n += f.severity == severity;
    return n;
}

std::string AuditReport::verdict() const {
    if (!parsed) return "not valid Python (line " + std::to_string(parseLine) + "): it cannot run";
    if (findings.empty()) return "no findings: nothing in it reaches beyond its text";
    const int high = count("high"), medium = count("medium");
    std::string s = std::to_string(findings.size()) + (findings.size() == 1 ? " finding" : " findings");
    if (high || medium) {
        s += " (";
        if (high) s += std::to_string(high) + " high";
        if (high && medium) s += ", ";
        if (medium) s += std::to_string(medium) + " medium";
        s += ")";
    }
    return s + (high ? ": review before approving" : ": low risk, review if unsure");
}

nlohmann::json AuditReport::toJson() const {
    Json j = {{"script", script.string()}, {"sha256", sha256}, {"size", size}, {"parsed", parsed}};
    if (!parsed) j["parse_error"] = {{"message", parseError}, {"line", parseLine}};
    Json imp = Json::array(), cal = Json::array(), fin = Json::array();
    for (const AuditImport& i : imports) imp.push_back({{"module", i.module}, {"line", i.line}});
    for (const AuditCall& c : calls) cal.push_back({{"name", c.name}, {"line", c.line}});
    for (const AuditFinding& f : findings)
        fin.push_back({{"category", f.category}, {"severity", f.severity}, {"what", f.what}, {"line", f.line}});
    j["imports"] = imp;
    j["calls"] = cal;
    j["findings"] = fin;
    j["functions"] = functions;
    j["sandbox"] = sandbox.toJson();
    j["limits"] = limits.toJson();
    j["verdict"] = verdict();
    return j;
}

std::string AuditReport::toText() const {
    std::ostringstream s;
    s << "Script " << script.string() << " (" << size << " bytes)\n  sha256 " << sha256 << "\n";
    if (!parsed) s << "\nNot valid Python: " << parseError << " (" << lineOf(parseLine) << ")\n";
    s << "\nImports:" << (imports.empty() ? " none" : "") << "\n";
    for (const AuditImport& i : imports) s << "  " << i.module << " (" << lineOf(i.line) << ")\n";
    for (const char* category : kCategories) {
        bool header = false;
        for (const AuditFinding& f : findings) {
            if (f.category != category) continue;
            if (!header) s << "\n" << category << ":\n", header = true;
            s << "  [" << f.severity << "] " << lineOf(f.line) << ": " << f.what << "\n";
        }
    }
    if (parsed) {
        s << "\nFunctions:";
        for (const auto& [name, defined] : functions) s << " " << name << (defined ? "" : " (missing)");
        s << "\n";
    }
    s << "\nSandbox it will get:\n" << sandbox.describe();
    s << "  limits: " << limits.cpuSeconds << " s CPU, " << (limits.memoryBytes >> 20) << " MiB memory, "
      << (limits.fileBytes >> 20) << " MiB per file, " << limits.openFiles << " open files\n";
    for (const std::string& m : sandbox.missing()) s << "  WARNING: " << m << "\n";
    s << "\nVerdict: " << verdict() << "\n";
    s << "Approve it by hash: modebench-cli plugins approve " << script.string() << "\n";
    return s.str();
}

} // namespace mb::plugins
