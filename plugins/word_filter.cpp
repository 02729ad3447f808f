// word_filter: masks, drops or refuses listed words and phrases in the stream, CJK-aware.
#include "plugins/builtins.h"
#include "plugins/text_stream.h"

namespace mb::plugins {

namespace {

using Json = nlohmann::json;

enum class Action { Mask, Drop, Refuse };

struct Word {
    std::u32string cps; // folded when matching ignores case
    bool wholeWord;     // false for words with CJK characters (matched as substrings)
};

struct WordFilterConfig {
    std::vector<std::string> words;
    std::vector<Word> compiled;
    Action action = Action::Mask;
    bool customMask = false;
    std::string mask;
    bool caseSensitive = false;
    bool wholeWord = true;
};

const char* actionName(Action a) { return a == Action::Mask ? "mask" : a == Action::Drop ? "drop" : "refuse"; }

// A boundary for whole-word matching: anything but a letter, number or combining mark; a
// CJK character is a boundary too (a Latin word in Chinese text has no spaces around it).
bool wordy(char32_t cp) { return cp != 0 && isWordChar(cp) && !isCjk(cp); }

// What can be said at one position: the longest word that matches there for certain
// (0: none), and whether a word could still match there once more text arrives.
struct Decision {
    size_t length = 0;
    bool pending = false;
};

class WordFilter final : public StreamPlugin {
public:
    explicit WordFilter(const WordFilterConfig& c) : m_c(c) {}

private:
    Step step(std::string_view buf, bool final) override {
        const std::vector<CodePoint> cps = decodeAll(buf);
        const size_t n = cps.size() - 1;
        m_folded.resize(n);
        for (size_t k = 0; k < n; ++k) m_folded[k] = m_c.caseSensitive ? cps[k].cp : foldCase(cps[k].cp);
        Step s;
        size_t from = 0, i = 0; // bytes before `from` are in s.out; characters before i are decided
        while (i < n) {
            const Decision d = decide(cps, i, final);
            if (d.pending && !final) break;
            if (d.length == 0) {
                m_prev = cps[i++].cp;
                continue;
            }
            s.out.append(buf.substr(from, cps[i].offset - from));
            if (m_c.action == Action::Refuse)
                return Step{std::move(s.out), buf.size(), true, "refused: matched a filtered word"};
            if (m_c.action == Action::Mask) s.out += m_c.customMask ? m_c.mask : std::string(d.length, '*');
            m_prev = cps[i + d.length - 1].cp;
            i += d.length;
            from = cps[i].offset;
        }
        s.out.append(buf.substr(from, cps[i].offset - from));
        s.consumed = cps[i].offset;
        return s;
    }

    Decision decide(const std::vector<CodePoint>& cps, size_t i, bool final) const {
        const size_t n = cps.size() - 1;
        Decision d;
        for (const Word& w : m_c.compiled) {
            const size_t len = w.cps.size();
            if (w.wholeWord && wordy(m_prev)) continue; // i is inside a word
            size_t k = 0;
            while (k < len && i + k < n && m_folded[i + k] == w.cps[k]) ++k;
            if (k < len) {
                d.pending = d.pending || i + k == n; // matched all that has arrived
                continue;
            }
            if (w.wholeWord) {
                if (i + len == n && !final) { // the next character decides
                    d.pending = true;
                    continue;
                }
                if (i + len < n && wordy(cps[i + len].cp)) continue;
            }
            d.length = std::max(d.length, len);
        }
        return d;
    }

    const WordFilterConfig& m_c;
    std::u32string m_folded;
    char32_t m_prev = 0; // the character before the undecided text (0: none yet)
};

class WordFilterFactory final : public PluginFactory {
public:
    explicit WordFilterFactory(WordFilterConfig c) : m_c(std::move(c)) {}
    std::string type() const override { return "word_filter"; }
    std::string describe() const override {
        const size_t n = m_c.words.size();
        return "word_filter(" + std::to_string(n) + (n == 1 ? " word, " : " words, ") + actionName(m_c.action) + ")";
    }
    Json record() const override {
        Json r = {{"type", "word_filter"}, {"words", m_c.words}, {"action", actionName(m_c.action)},
                  {"case_sensitive", m_c.caseSensitive}, {"whole_word", m_c.wholeWord}};
        if (m_c.customMask) r["mask"] = m_c.mask;
        return r;
    }
    std::unique_ptr<Plugin> make() const override { return std::make_unique<WordFilter>(m_c); }

private:
    WordFilterConfig m_c;
};

} // namespace

std::shared_ptr<const PluginFactory> makeWordFilter(const Json& config) {
    const ConfigReader r(config, "word_filter", {"words", "action", "mask", "case_sensitive", "whole_word"});
    WordFilterConfig c;
    c.words = r.stringList("words", true);
    const std::string action = r.string("action", "mask");
    if (action == "mask") c.action = Action::Mask;
    else if (action == "drop") c.action = Action::Drop;
    else if (action == "refuse") c.action = Action::Refuse;
    else r.fail("\"action\" must be \"mask\", \"drop\" or \"refuse\", not \"" + action + "\"");
    if (r.find("mask")) {
        if (c.action != Action::Mask) r.fail("\"mask\" applies only to the action \"mask\"");
        c.customMask = true;
        c.mask = r.string("mask", "");
    }
    c.caseSensitive = r.boolean("case_sensitive", false);
    c.wholeWord = r.boolean("whole_word", true);
    for (const std::string& w : c.words) {
        Word word{{}, c.wholeWord};
        for (const CodePoint& cp : decodeAll(w)) {
            if (cp.offset == w.size()) break;
            word.cps.push_back(c.caseSensitive ? cp.cp : foldCase(cp.cp));
            if (isCjk(cp.cp)) word.wholeWord = false;
        }
        c.compiled.push_back(std::move(word));
    }
    return std::make_shared<WordFilterFactory>(std::move(c));
}

} // namespace mb::plugins
