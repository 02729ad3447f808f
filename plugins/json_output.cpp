// json_output: strips a Markdown fence around a JSON answer and checks it parses (and fits a schema).
#include "plugins/builtins.h"
#include "plugins/json_schema.h"
#include "plugins/text_stream.h"

#include "engine/unicode.h"

namespace mb::plugins {

namespace {

using Json = nlohmann::json;

struct JsonOutputConfig {
    bool hasSchema = false;
    Json schema;
    bool stripFences = true;
    bool refuse = false; // on_invalid "refuse": hold everything until the end
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// nlohmann's message without its "[json.exception...] " prefix, on one line, not too long.
std::string oneLine(const std::string& what) {
    std::string s = what;
    if (s.rfind("[json.exception.", 0) == 0)
        if (const size_t close = s.find("] "); close != std::string::npos) s.erase(0, close + 2);
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    if (s.size() > 300) s = s.substr(0, 300) + "…";
    return engine::sanitizeUtf8(s);
}

// Report mode streams the text on, less a leading fence line (held until its newline) and,
// inside a fence, the trailing run of whitespace and backticks (it may be the closing fence).
// Refuse mode holds everything and runs the same pass once, at the end.
class JsonOutput final : public StreamPlugin {
public:
    explicit JsonOutput(const JsonOutputConfig& c) : m_c(c) {}

private:
    Step step(std::string_view buf, bool final) override {
        if (m_c.refuse && !final) return {};
        Step s = pass(buf, final);
        m_body += s.out;
        if (!final) return s;
        s.reason = check();
        s.end = !s.reason.empty();
        if (s.end && m_c.refuse) s.out.clear();
        return s;
    }

    Step pass(std::string_view buf, bool final) {
        Step s;
        size_t at = 0;
        if (!m_started) {
            size_t ws = 0;
            while (ws < buf.size() && isSpace(buf[ws])) ++ws;
            const std::string_view rest = buf.substr(ws);
            if (m_c.stripFences) {
                if (!final && rest.size() < 3 && std::string_view("```").substr(0, rest.size()) == rest) return s;
                if (rest.substr(0, 3) == "```") {
                    const size_t nl = rest.find('\n');
                    if (nl == std::string_view::npos && !final) return s;
                    m_fenced = true;
                    at = nl == std::string_view::npos ? buf.size() : ws + nl + 1;
                }
            }
            m_started = true;
        }
        const std::string_view body = buf.substr(at);
        size_t keep = body.size();
        if (m_fenced && !final) {
            while (keep > 0 && (isSpace(body[keep - 1]) || body[keep - 1] == '`')) --keep;
        } else if (m_fenced) {
            while (keep > 0 && isSpace(body[keep - 1])) --keep;
            if (keep >= 3 && body.substr(keep - 3, 3) == "```") keep -= 3;
            while (keep > 0 && isSpace(body[keep - 1])) --keep;
        }
        s.out = std::string(body.substr(0, keep));
        s.consumed = final ? buf.size() : at + keep;
        return s;
    }

    std::string check() const {
        Json value;
        try {
            value = Json::parse(m_body);
        } catch (const Json::exception& e) {
            return "json_output: not JSON: " + oneLine(e.what());
        }
        if (!m_c.hasSchema) return {};
        const std::string why = validateJson(m_c.schema, value);
        return why.empty() ? why : "json_output: schema: " + why;
    }

    const JsonOutputConfig& m_c;
    bool m_started = false, m_fenced = false;
    std::string m_body; // everything emitted (or to emit, in refuse mode): what is parsed
};

class JsonOutputFactory final : public PluginFactory {
public:
    explicit JsonOutputFactory(JsonOutputConfig c) : m_c(std::move(c)) {}
    std::string type() const override { return "json_output"; }
    std::string describe() const override {
        return std::string("json_output(") + (m_c.hasSchema ? "schema, " : "") + (m_c.refuse ? "refuse" : "report") + ")";
    }
    Json record() const override {
        Json r = {{"type", "json_output"}, {"strip_fences", m_c.stripFences}, {"on_invalid", m_c.refuse ? "refuse" : "report"}};
        if (m_c.hasSchema) r["schema"] = m_c.schema;
        return r;
    }
    std::unique_ptr<Plugin> make() const override { return std::make_unique<JsonOutput>(m_c); }

private:
    JsonOutputConfig m_c;
};

} // namespace

std::shared_ptr<const PluginFactory> makeJsonOutput(const Json& config) {
    const ConfigReader r(config, "json_output", {"schema", "strip_fences", "on_invalid"});
    JsonOutputConfig c;
    if (const Json* schema = r.find("schema")) {
        checkSchema(*schema);
        c.hasSchema = true;
        c.schema = *schema;
    }
    c.stripFences = r.boolean("strip_fences", true);
    const std::string onInvalid = r.string("on_invalid", "report");
    if (onInvalid != "report" && onInvalid != "refuse")
        r.fail("\"on_invalid\" must be \"report\" or \"refuse\", not \"" + onInvalid + "\"");
    c.refuse = onInvalid == "refuse";
    return std::make_shared<JsonOutputFactory>(std::move(c));
}

} // namespace mb::plugins
