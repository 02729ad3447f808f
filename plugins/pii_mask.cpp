// pii_mask: replaces e-mail addresses, phone numbers and long ID numbers in the stream.
#include "plugins/builtins.h"
#include "plugins/text_stream.h"

#include <array>

namespace mb::plugins {

namespace {

using Json = nlohmann::json;

enum Kind : uint8_t { kEmail = 0, kPhone = 1, kId = 2 };
constexpr const char* kKindNames[] = {"email", "phone", "id"};
constexpr const char* kDefaultMasks[] = {"[EMAIL]", "[PHONE]", "[ID]"};
constexpr size_t kMaxEmail = 254, kMaxNumber = 64; // longer runs are not PII: decided without waiting

struct PiiConfig {
    std::array<bool, 3> on{true, true, true};
    std::array<std::string, 3> masks{kDefaultMasks[0], kDefaultMasks[1], kDefaultMasks[2]};
    int64_t minIdDigits = 9;
};

bool digit(char c) { return c >= '0' && c <= '9'; }
bool alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool alnum(char c) { return digit(c) || alpha(c); }
bool localChar(char c) { return alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'; }
bool domainChar(char c) { return alnum(c) || c == '.' || c == '-'; }

// At one position: the length of a certain match (0: none) or that more text must come first.
struct Found {
    size_t length = 0;
    bool pending = false;
    Kind kind = kEmail;
};
constexpr Found kWait{0, true};

// local@label.label...tld: the longest run of valid labels ending in a 2+ letter TLD.
Found email(std::string_view b, size_t i, char prev, bool final) {
    if (!localChar(b[i]) || localChar(prev) || prev == '@') return {};
    size_t j = i;
    while (j < b.size() && j - i < kMaxEmail && localChar(b[j])) ++j;
    if (j == b.size() && !final) return kWait;
    if (j == b.size() || b[j] != '@') return {};
    size_t k = j + 1;
    while (k < b.size() && k - i < kMaxEmail && domainChar(b[k])) ++k;
    if (k == b.size() && !final) return kWait;
    size_t best = 0, labels = 0;
    for (size_t s = j + 1; s < k;) {
        size_t e = s;
        while (e < k && b[e] != '.') ++e;
        const std::string_view label = b.substr(s, e - s);
        if (label.empty() || label.front() == '-' || label.back() == '-') break;
        bool letters = label.size() >= 2;
        for (char c : label) letters = letters && alpha(c);
        if (++labels >= 2 && letters) best = e;
        s = e + 1;
    }
    return best ? Found{best - i, false, kEmail} : Found{};
}

struct Group {
    size_t digits = 0, end = 0;
    char sepBefore = 0; // ' ', '-', '.' (0 for the first group and after a parenthesis)
    bool paren = false;
};

// Phone: 7..15 digits; with '+' or an "(area)" any grouping; "a.b.c" with dots only; else
// three or more groups, each after the first of 3+ digits. ID: min_id_digits or more (a
// trailing X counts), groups of 2+ digits all separated by single spaces or all by dashes.
// A run that is phone-shaped is a phone (left alone when phones are not masked), never an ID.
Found classify(const std::vector<Group>& g, size_t k, bool plus, bool x, const PiiConfig& c) {
    size_t digits = 0, shortAfterFirst = 0;
    bool dot = false, otherSep = false, paren = false, shortGroup = false;
    for (size_t n = 0; n < k; ++n) {
        digits += g[n].digits;
        paren = paren || g[n].paren;
        if (n > 0 && g[n].digits < 3) ++shortAfterFirst;
        shortGroup = shortGroup || g[n].digits + (x && n + 1 == k) < 2;
        (g[n].sepBefore == '.' ? dot : otherSep) |= n > 0 && g[n].sepBefore != 0;
    }
    bool phone = digits >= 7 && digits <= 15 && !x;
    if (dot) phone = phone && !otherSep && !paren && !plus && k >= 3 && shortAfterFirst == 0;
    else phone = phone && (plus || paren || (k >= 3 && shortAfterFirst == 0));
    if (phone) return Found{c.on[kPhone] ? g[k - 1].end : 0, false, kPhone};
    bool oneSep = true; // "123-45-6789 2024" is an ID and a year, not one ID
    for (size_t n = 2; n < k; ++n) oneSep = oneSep && g[n].sepBefore == g[1].sepBefore;
    const bool id = !plus && !paren && !dot && oneSep && !shortGroup && int64_t(digits + x) >= c.minIdDigits;
    return id && c.on[kId] ? Found{g[k - 1].end + x, false, kId} : Found{};
}

// Scans digit groups from i (each read past what has arrived makes the answer "wait"), then
// tries the longest run of groups first.
Found number(std::string_view b, size_t i, char prev, bool final, const PiiConfig& c) {
    if (!(digit(b[i]) || b[i] == '+' || b[i] == '(')) return {};
    if (alnum(prev) || prev == '+' || prev == '.' || prev == ',' || prev == '_' || prev == '@') return {};
    bool wait = false;
    auto peek = [&](size_t p) -> char {
        if (p - i >= kMaxNumber) return '\0';
        if (p >= b.size()) {
            wait = wait || !final;
            return '\0';
        }
        return b[p];
    };
    size_t j = i;
    const bool plus = peek(j) == '+';
    j += plus;
    std::vector<Group> g;
    bool x = false, glued = false;
    char sep = 0;
    while (true) {
        Group grp{0, 0, sep, false};
        if (peek(j) == '(') grp.paren = true, ++j;
        while (digit(peek(j))) ++j, ++grp.digits;
        if (grp.digits == 0 || (grp.paren && (peek(j) != ')' || grp.digits > 4))) break;
        j += grp.paren;
        grp.end = j - i;
        g.push_back(grp);
        const char ch = peek(j);
        if (ch == 'X' || ch == 'x') {
            (alnum(peek(j + 1)) ? glued : x) = true;
            break;
        }
        if (grp.paren && (digit(ch) || ch == '(')) {
            sep = 0;
            continue;
        }
        if (alnum(ch)) {
            glued = true;
            break;
        }
        if (ch == ',') {
            glued = digit(peek(j + 1)); // 1,234,567 is an amount
            break;
        }
        if (ch == ' ' || ch == '-' || ch == '.') {
            const char next = peek(j + 1);
            if (digit(next) || next == '(') {
                sep = ch;
                ++j;
                continue;
            }
        }
        break;
    }
    if (wait) return kWait;
    for (size_t k = g.size(); k >= 1; --k) {
        if (k == g.size() && glued) continue;
        if (k < g.size() && g[k].sepBefore != ' ') continue;
        const Found f = classify(g, k, plus, x && k == g.size(), c);
        if (f.length || f.kind == kPhone) return f; // phone-shaped: a phone, masked or not
    }
    return {};
}

class PiiMask final : public StreamPlugin {
public:
    explicit PiiMask(const PiiConfig& c) : m_c(c) {}

private:
    Step step(std::string_view buf, bool final) override {
        Step s;
        size_t from = 0, i = 0;
        for (; i < buf.size(); ++i) {
            const char prev = i ? buf[i - 1] : m_prev;
            Found e = m_c.on[kEmail] ? email(buf, i, prev, final) : Found{};
            const Found d = (m_c.on[kPhone] || m_c.on[kId]) ? number(buf, i, prev, final, m_c) : Found{};
            if ((e.pending || d.pending) && !final) break;
            if (d.length > e.length) e = d;
            if (!e.length) continue;
            s.out.append(buf.substr(from, i - from));
            s.out += m_c.masks[e.kind];
            i += e.length - 1;
            from = i + 1;
        }
        s.out.append(buf.substr(from, i - from));
        s.consumed = i;
        if (i > 0) m_prev = buf[i - 1];
        return s;
    }

    const PiiConfig& m_c;
    char m_prev = '\0'; // the last byte decided (what a match's left edge is checked against)
};

class PiiMaskFactory final : public PluginFactory {
public:
    explicit PiiMaskFactory(PiiConfig c) : m_c(std::move(c)) {}
    std::string type() const override { return "pii_mask"; }
    std::string describe() const override { return "pii_mask(" + kinds() + ")"; }
    Json record() const override {
        Json kinds = Json::array(), masks = Json::object();
        for (int k = 0; k < 3; ++k)
            if (m_c.on[k]) kinds.push_back(kKindNames[k]), masks[kKindNames[k]] = m_c.masks[k];
        return {{"type", "pii_mask"}, {"kinds", kinds}, {"mask", masks}, {"min_id_digits", m_c.minIdDigits}};
    }
    std::unique_ptr<Plugin> make() const override { return std::make_unique<PiiMask>(m_c); }

private:
    std::string kinds() const {
        std::string s;
        for (int k = 0; k < 3; ++k)
            if (m_c.on[k]) s += std::string(s.empty() ? "" : ", ") + kKindNames[k];
        return s;
    }
    PiiConfig m_c;
};

int kindIndex(const std::string& name) {
    for (int k = 0; k < 3; ++k)
        if (name == kKindNames[k]) return k;
    return -1;
}

} // namespace

std::shared_ptr<const PluginFactory> makePiiMask(const Json& config) {
    const ConfigReader r(config, "pii_mask", {"kinds", "mask", "min_id_digits"});
    PiiConfig c;
    if (r.find("kinds")) {
        c.on = {false, false, false};
        for (const std::string& name : r.stringList("kinds", true)) {
            const int k = kindIndex(name);
            if (k < 0) r.fail("unknown kind \"" + name + "\" in \"kinds\" (known: email, phone, id)");
            c.on[k] = true;
        }
    }
    if (const Json* masks = r.find("mask")) {
        if (!masks->is_object()) r.fail("\"mask\" must be an object such as {\"email\": \"[EMAIL]\"}");
        for (auto it = masks->begin(); it != masks->end(); ++it) {
            const int k = kindIndex(it.key());
            if (k < 0) r.fail("unknown kind \"" + it.key() + "\" in \"mask\" (known: email, phone, id)");
            if (!it.value().is_string()) r.fail("\"mask\" values must be strings");
            c.masks[k] = it.value().get<std::string>();
        }
    }
    c.minIdDigits = r.integer("min_id_digits", 9, 4, 64);
    return std::make_shared<PiiMaskFactory>(std::move(c));
}

} // namespace mb::plugins
