// Small plugins for testing the chain and its users: upper-case, hold to a space, end on a word, fail.
#pragma once

#include "plugins/chain.h"

#include <cctype>

namespace mb::plugins::test {

// Applies `f` to each chunk; `hold` keeps text back until a space arrives (flushed at the end);
// `endOn` ends the response before that word; `failOn` throws when the word arrives.
struct FakeSpec {
    bool upper = false;
    bool hold = false;
    std::string endOn, failOn;
};

class FakePlugin final : public Plugin {
public:
    explicit FakePlugin(FakeSpec s) : m_spec(std::move(s)) {}
    Emit text(std::string_view chunk) override {
        m_buf += chunk;
        if (!m_spec.failOn.empty() && m_buf.find(m_spec.failOn) != std::string::npos)
            throw PluginError("fake: failed on " + m_spec.failOn);
        if (!m_spec.endOn.empty()) {
            const size_t at = m_buf.find(m_spec.endOn);
            if (at != std::string::npos) return Emit{take(at), true, "saw " + m_spec.endOn};
        }
        if (!m_spec.hold) return Emit{take(m_buf.size())};
        const size_t sp = m_buf.rfind(' ');
        return Emit{sp == std::string::npos ? std::string() : take(sp + 1)};
    }
    Emit end() override { return Emit{take(m_buf.size())}; }

private:
    std::string take(size_t n) {
        std::string out = m_buf.substr(0, n);
        m_buf.erase(0, n);
        if (m_spec.upper)
            for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return out;
    }
    FakeSpec m_spec;
    std::string m_buf;
};

class FakeFactory final : public PluginFactory {
public:
    explicit FakeFactory(FakeSpec s) : m_spec(std::move(s)) {}
    std::string type() const override { return "fake"; }
    std::string describe() const override { return std::string("fake") + (m_spec.upper ? "(upper)" : "") + (m_spec.hold ? "(hold)" : ""); }
    nlohmann::json record() const override { return {{"type", "fake"}, {"upper", m_spec.upper}, {"hold", m_spec.hold}}; }
    std::unique_ptr<Plugin> make() const override { return std::make_unique<FakePlugin>(m_spec); }

private:
    FakeSpec m_spec;
};

inline Chain fakeChain(std::vector<FakeSpec> specs) {
    std::vector<std::shared_ptr<const PluginFactory>> entries;
    for (auto& s : specs) entries.push_back(std::make_shared<FakeFactory>(std::move(s)));
    return Chain(std::move(entries));
}

} // namespace mb::plugins::test
