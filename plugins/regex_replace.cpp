// regex_replace: RE2 search and replace over the stream, holding back at most max_match bytes.
#include "plugins/builtins.h"
#include "plugins/text_stream.h"

#include "engine/unicode.h"

#ifdef MODEBENCH_HAVE_RE2
#include <re2/re2.h>
#endif

namespace mb::plugins {

using Json = nlohmann::json;

#ifndef MODEBENCH_HAVE_RE2

std::shared_ptr<const PluginFactory> makeRegexReplace(const Json&) {
    throw PluginError("regex_replace needs RE2 (libre2-dev), which this build lacks");
}

#else

namespace {

struct RegexConfig {
    std::string pattern, replacement;
    int64_t maxMatch = 256;
    bool caseSensitive = true;
    std::shared_ptr<const re2::RE2> re; // const RE2 is safe to share between threads
    int groups = 1;                     // \0 and the groups the replacement names
};

// Matches are searched in the held buffer; whatever lies more than max_match bytes before
// its end can no longer be part of a future match (of at most max_match bytes), so it is
// replaced and emitted. A match that straddles that cut waits whole. Empty matches are
// skipped. ^, $ and \b see the held buffer's edges, not the response's.
class RegexReplace final : public StreamPlugin {
public:
    explicit RegexReplace(const RegexConfig& c) : m_c(c), m_groups(static_cast<size_t>(c.groups)) {}

private:
    Step step(std::string_view buf, bool final) override {
        Step s;
        size_t cut = buf.size();
        if (!final) {
            const size_t limit = static_cast<size_t>(m_c.maxMatch);
            if (buf.size() <= limit) return s;
            cut = buf.size() - limit;
            while (cut > 0 && (static_cast<unsigned char>(buf[cut]) & 0xC0) == 0x80) --cut;
        }
        const re2::StringPiece text(buf.data(), buf.size());
        size_t from = 0, pos = 0;
        while (pos <= buf.size()) {
            if (!m_c.re->Match(text, pos, buf.size(), re2::RE2::UNANCHORED, m_groups.data(), m_c.groups)) break;
            const size_t ms = static_cast<size_t>(m_groups[0].data() - buf.data());
            const size_t me = ms + m_groups[0].size();
            if (ms >= cut && !final) break;
            if (ms == me) { // an empty match: step over one character
                if (ms >= buf.size()) break;
                pos = ms + engine::decodeUtf8(buf, ms).length;
                continue;
            }
            if (me > cut && !final && me - ms <= static_cast<size_t>(m_c.maxMatch)) {
                cut = ms; // may still grow: wait for it whole
                break;
            }
            s.out.append(buf.substr(from, ms - from));
            m_c.re->Rewrite(&s.out, m_c.replacement, m_groups.data(), m_c.groups);
            from = pos = me;
        }
        cut = std::max(cut, from);
        s.out.append(buf.substr(from, cut - from));
        s.consumed = cut;
        return s;
    }

    const RegexConfig& m_c;
    std::vector<re2::StringPiece> m_groups;
};

class RegexReplaceFactory final : public PluginFactory {
public:
    explicit RegexReplaceFactory(RegexConfig c) : m_c(std::move(c)) {}
    std::string type() const override { return "regex_replace"; }
    std::string describe() const override {
        std::string p = m_c.pattern.size() > 40 ? m_c.pattern.substr(0, 40) + "…" : m_c.pattern;
        for (char& ch : p)
            if (ch == '\n' || ch == '\r') ch = ' ';
        return "regex_replace(/" + engine::sanitizeUtf8(p) + "/)";
    }
    Json record() const override {
        return {{"type", "regex_replace"}, {"pattern", m_c.pattern}, {"replacement", m_c.replacement},
                {"max_match", m_c.maxMatch}, {"case_sensitive", m_c.caseSensitive}};
    }
    std::unique_ptr<Plugin> make() const override { return std::make_unique<RegexReplace>(m_c); }

private:
    RegexConfig m_c;
};

int maxGroupIn(const std::string& rewrite) {
    int most = 0;
    for (size_t i = 0; i + 1 < rewrite.size(); ++i)
        if (rewrite[i] == '\\') {
            if (rewrite[i + 1] >= '0' && rewrite[i + 1] <= '9') most = std::max(most, rewrite[i + 1] - '0');
            ++i;
        }
    return most;
}

} // namespace

std::shared_ptr<const PluginFactory> makeRegexReplace(const Json& config) {
    const ConfigReader r(config, "regex_replace", {"pattern", "replacement", "max_match", "case_sensitive"});
    RegexConfig c;
    c.pattern = r.requiredString("pattern");
    if (c.pattern.empty()) r.fail("\"pattern\" must not be empty");
    c.replacement = r.string("replacement", "");
    c.maxMatch = r.integer("max_match", 256, 1, 1 << 20);
    c.caseSensitive = r.boolean("case_sensitive", true);
    re2::RE2::Options options;
    options.set_log_errors(false);
    options.set_case_sensitive(c.caseSensitive);
    auto re = std::make_shared<re2::RE2>(c.pattern, options);
    if (!re->ok()) r.fail("invalid pattern: " + re->error());
    std::string why;
    if (!re->CheckRewriteString(c.replacement, &why)) r.fail("invalid replacement: " + why);
    c.groups = maxGroupIn(c.replacement) + 1;
    c.re = std::move(re);
    return std::make_shared<RegexReplaceFactory>(std::move(c));
}

#endif

} // namespace mb::plugins
