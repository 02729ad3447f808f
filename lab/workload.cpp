// Synthetic workload generation: length draws, arrival processes, the three prompt shapes.
#include "lab/workload.h"
#include "lab/workload_images.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace mb::lab {

namespace {

// Separate streams per purpose (see Rng::stream): adding warm-ups or changing the arrival
// process leaves the measured prompts as they were.
constexpr uint64_t kStreamMeasured = 0;
constexpr uint64_t kStreamWarmup = 1;
constexpr uint64_t kStreamArrival = 2;

std::vector<int32_t> startPrompt(const TokenSpace& ts) {
    return ts.bos >= 0 ? std::vector<int32_t>{ts.bos} : std::vector<int32_t>{};
}

void appendRandom(std::vector<int32_t>& out, int64_t n, const TokenSpace& ts, Rng& rng) {
    out.reserve(out.size() + static_cast<size_t>(std::max<int64_t>(n, 0)));
    for (int64_t i = 0; i < n; ++i)
        out.push_back(static_cast<int32_t>(rng.uniformInt(ts.firstId, ts.endId)));
}

// A random id that is none of `avoid`, so two prompts provably diverge at this position.
// Falls back to any id when the range is too small to avoid them all.
int32_t drawDistinct(const TokenSpace& ts, Rng& rng, const std::vector<int32_t>& avoid) {
    const bool possible =
        static_cast<int64_t>(ts.endId) - ts.firstId > static_cast<int64_t>(avoid.size());
    for (;;) {
        const auto id = static_cast<int32_t>(rng.uniformInt(ts.firstId, ts.endId));
        if (!possible || std::find(avoid.begin(), avoid.end(), id) == avoid.end()) return id;
    }
}

int32_t drawMaxTokens(const LengthDist& d, Rng& rng) {
    return static_cast<int32_t>(
        std::min<int64_t>(d.sample(rng), std::numeric_limits<int32_t>::max()));
}

std::string check(bool ok, const std::string& key, const std::string& why) {
    return ok ? std::string() : key + ": " + why;
}

} // namespace

int64_t LengthDist::sample(Rng& rng) const {
    double x = 0;
    switch (kind) {
    case Kind::Fixed:
        x = a;
        break;
    case Kind::Uniform: {
        // Integers in [ceil a, floor b], equally likely (rounding a continuous draw would
        // give the end points half weight).
        const auto lo = static_cast<int64_t>(std::ceil(a));
        const auto hi = std::max(lo, static_cast<int64_t>(std::floor(b)));
        x = static_cast<double>(rng.uniformInt(lo, hi + 1));
        break;
    }
    case Kind::Normal:
        x = a + b * rng.normal();
        break;
    case Kind::LogNormal: {
        if (a <= 0) break; // invalid (validate() says so); 0 rather than NaN
        const double sigma2 = std::log(1.0 + (b * b) / (a * a));
        const double mu = std::log(a) - 0.5 * sigma2;
        x = std::exp(mu + std::sqrt(sigma2) * rng.normal());
        break;
    }
    }
    if (std::isnan(x)) x = 0;
    // Clamp in double first: a wild draw must not overflow the integer conversion.
    x = std::clamp(std::round(x), static_cast<double>(min), static_cast<double>(max));
    return std::clamp(static_cast<int64_t>(x), min, max);
}

std::string LengthDist::validate() const {
    if (!std::isfinite(a) || !std::isfinite(b)) return "a/b: must be finite numbers";
    for (const std::string& e :
         {check(min >= 0, "min", "must be >= 0"), check(min <= max, "min", "greater than max"),
          check(kind != Kind::Fixed || a >= 0, "a", "must be >= 0"),
          check(kind != Kind::Uniform || a <= b, "b", "must be >= a"),
          check(kind != Kind::Uniform || a >= 0, "a", "must be >= 0"),
          check(kind != Kind::Normal || b >= 0, "b", "must be >= 0 (a std)"),
          check(kind != Kind::LogNormal || a > 0, "a", "must be > 0 (the mean length)"),
          check(kind != Kind::LogNormal || b >= 0, "b", "must be >= 0 (a std)")})
        if (!e.empty()) return e;
    return {};
}

double LengthDist::upperBound() const {
    double hi = a;
    if (kind == Kind::Uniform) hi = b;
    if (kind == Kind::Normal || kind == Kind::LogNormal) hi = a + 6 * b;
    return std::clamp(hi, static_cast<double>(min), static_cast<double>(max));
}

double WorkloadSpec::promptTokensBound() const {
    const auto& sp = sharedPrefix;
    const auto& mt = multiTurn;
    const double perWarmup = 1 + (sp.groups > 0 ? double(sp.prefixTokens + sp.suffixTokens) : input.upperBound());
    double measured = 0;
    if (sp.groups > 0) {
        measured = double(sp.groups) * sp.perGroup * (1 + double(sp.prefixTokens + sp.suffixTokens));
    } else if (mt.conversations > 0) {
        // Turn t repeats the t turns before it: 1 + input + t (reply + user) ids.
        const double t = mt.turns, grow = output.upperBound() + mt.userTokens.upperBound();
        measured = double(mt.conversations) * (t * (1 + input.upperBound()) + t * (t - 1) / 2 * grow);
    } else {
        measured = double(requests) * (1 + input.upperBound());
    }
    return measured + double(warmupRequests) * perWarmup;
}

std::string WorkloadSpec::validate() const {
    const auto& sp = sharedPrefix;
    const auto& mt = multiTurn;
    const bool open = arrival.kind != ArrivalSpec::Kind::Closed;
    if (std::string e = input.validate(); !e.empty()) return "input." + e;
    if (std::string e = output.validate(); !e.empty()) return "output." + e;
    if (std::string e = mt.userTokens.validate(); !e.empty()) return "multi_turn.user_tokens." + e;
    for (const std::string& e :
         {check(requests >= 0, "requests", "must be >= 0"),
          check(sp.groups >= 0, "shared_prefix.groups", "must be >= 0"),
          check(sp.perGroup >= 0, "shared_prefix.per_group", "must be >= 0"),
          check(sp.groups == 0 || sp.perGroup > 0, "shared_prefix.per_group",
                "must be > 0 when groups > 0"),
          check(sp.prefixTokens >= 0, "shared_prefix.prefix_tokens", "must be >= 0"),
          check(sp.suffixTokens >= 0, "shared_prefix.suffix_tokens", "must be >= 0"),
          check(mt.conversations >= 0, "multi_turn.conversations", "must be >= 0"),
          check(mt.turns >= 0, "multi_turn.turns", "must be >= 0"),
          check(mt.conversations == 0 || mt.turns > 0, "multi_turn.turns",
                "must be > 0 when conversations > 0"),
          check(sp.groups == 0 || mt.conversations == 0, "multi_turn",
                "cannot be combined with shared_prefix"),
          check(arrival.concurrency >= 1, "arrival.concurrency", "must be >= 1"),
          check(!open || (arrival.rate > 0 && std::isfinite(arrival.rate)), "arrival.rate",
                "must be > 0 for an open loop"),
          check(arrival.burstiness > 0 && std::isfinite(arrival.burstiness), "arrival.burstiness",
                "must be > 0"),
          check(arrival.rampSeconds >= 0 && std::isfinite(arrival.rampSeconds),
                "arrival.ramp_seconds", "must be >= 0"),
          check(warmupRequests >= 0, "warmup_requests", "must be >= 0")})
        if (!e.empty()) return e;
    if (std::string e = validateImages(images); !e.empty()) return e;
    // The requests are built in memory before the run: refuse what cannot fit rather than
    // fail (or swap) part-way through building it.
    if (const double tokens = promptTokensBound(); tokens > kMaxPromptTokens) {
        char why[160];
        std::snprintf(why, sizeof why, "the prompts would hold up to %.3g tokens; the limit is %.3g (1 GiB of ids)",
                      tokens, kMaxPromptTokens);
        return std::string("requests: ") + why;
    }
    return {};
}

std::vector<double> arrivalTimesMs(const ArrivalSpec& spec, size_t n, Rng& rng) {
    std::vector<double> times(n, 0.0);
    if (spec.kind == ArrivalSpec::Kind::Closed || n == 0) return times;
    const double rate = spec.rate;
    const double ramp = spec.kind == ArrivalSpec::Kind::Ramp ? spec.rampSeconds : 0.0;
    const bool gammaIntervals = spec.kind == ArrivalSpec::Kind::Gamma ||
                                (spec.kind == ArrivalSpec::Kind::Ramp && spec.burstiness != 1.0);
    // s counts expected arrivals (Λ-space): unit-mean renewal intervals, then Λ⁻¹(s).
    double s = 0;
    for (size_t i = 1; i < n; ++i) {
        s += gammaIntervals ? rng.gamma(spec.burstiness, 1.0 / spec.burstiness)
                            : rng.exponential(1.0);
        double seconds;
        if (ramp > 0 && s <= rate * ramp / 2)
            seconds = std::sqrt(2.0 * ramp * s / rate);
        else if (ramp > 0)
            seconds = ramp + (s - rate * ramp / 2) / rate;
        else
            seconds = s / rate;
        times[i] = seconds * 1000.0;
    }
    return times;
}

namespace {
std::vector<WorkloadRequest> buildPrompts(const WorkloadSpec& spec, const TokenSpace& tokens) {
    if (std::string e = spec.validate(); !e.empty())
        throw std::invalid_argument("workload spec: " + e);
    if (tokens.endId <= tokens.firstId || tokens.firstId < 0)
        throw std::invalid_argument("token space: need 0 <= firstId < endId");

    std::vector<WorkloadRequest> out;
    auto add = [&out](WorkloadRequest r) {
        r.index = out.size();
        out.push_back(std::move(r));
    };

    const auto& sp = spec.sharedPrefix;
    const auto& mt = spec.multiTurn;
    Rng warm = Rng::stream(spec.seed, kStreamWarmup);
    for (int32_t i = 0; i < spec.warmupRequests; ++i) {
        WorkloadRequest r;
        r.warmup = true;
        r.prompt = startPrompt(tokens);
        const int64_t len =
            sp.groups > 0 ? sp.prefixTokens + sp.suffixTokens : spec.input.sample(warm);
        appendRandom(r.prompt, len, tokens, warm);
        r.maxTokens = drawMaxTokens(spec.output, warm);
        add(std::move(r));
    }

    Rng rng = Rng::stream(spec.seed, kStreamMeasured);
    Rng arrivals = Rng::stream(spec.seed, kStreamArrival);

    if (sp.groups > 0) {
        // Group prefixes first, each starting with a different id so groups share only BOS.
        std::vector<std::vector<int32_t>> prefixes(static_cast<size_t>(sp.groups));
        std::vector<int32_t> firstIds;
        for (auto& prefix : prefixes) {
            prefix = startPrompt(tokens);
            if (sp.prefixTokens > 0) {
                firstIds.push_back(drawDistinct(tokens, rng, firstIds));
                prefix.push_back(firstIds.back());
                appendRandom(prefix, sp.prefixTokens - 1, tokens, rng);
            }
        }
        const size_t n = static_cast<size_t>(sp.groups) * static_cast<size_t>(sp.perGroup);
        const std::vector<double> times = arrivalTimesMs(spec.arrival, n, arrivals);
        std::vector<std::vector<int32_t>> suffixFirst(prefixes.size());
        size_t k = 0;
        for (int32_t rep = 0; rep < sp.perGroup; ++rep) {
            for (int32_t g = 0; g < sp.groups; ++g, ++k) {
                WorkloadRequest r;
                r.group = g;
                r.prompt = prefixes[static_cast<size_t>(g)];
                if (sp.suffixTokens > 0) {
                    auto& seen = suffixFirst[static_cast<size_t>(g)];
                    seen.push_back(drawDistinct(tokens, rng, seen));
                    r.prompt.push_back(seen.back());
                    appendRandom(r.prompt, sp.suffixTokens - 1, tokens, rng);
                }
                r.maxTokens = drawMaxTokens(spec.output, rng);
                r.arrivalMs = times[k];
                add(std::move(r));
            }
        }
        return out;
    }

    if (mt.conversations > 0) {
        const auto conversations = static_cast<size_t>(mt.conversations);
        const auto turns = static_cast<size_t>(mt.turns);
        std::vector<std::vector<WorkloadRequest>> grid(conversations);
        for (size_t c = 0; c < conversations; ++c) {
            for (size_t t = 0; t < turns; ++t) {
                WorkloadRequest r;
                r.conversation = static_cast<int64_t>(c);
                r.turn = static_cast<int32_t>(t);
                if (t == 0) {
                    r.prompt = startPrompt(tokens);
                    appendRandom(r.prompt, spec.input.sample(rng), tokens, rng);
                } else {
                    const WorkloadRequest& prev = grid[c].back();
                    r.prompt = prev.prompt;
                    appendRandom(r.prompt, prev.maxTokens, tokens, rng); // assistant reply
                    appendRandom(r.prompt, mt.userTokens.sample(rng), tokens, rng);
                }
                r.maxTokens = drawMaxTokens(spec.output, rng);
                grid[c].push_back(std::move(r));
            }
        }
        const std::vector<double> times = arrivalTimesMs(spec.arrival, conversations, arrivals);
        for (size_t t = 0; t < turns; ++t) {
            for (size_t c = 0; c < conversations; ++c) {
                grid[c][t].arrivalMs = times[c];
                add(std::move(grid[c][t]));
            }
        }
        return out;
    }

    const std::vector<double> times =
        arrivalTimesMs(spec.arrival, static_cast<size_t>(spec.requests), arrivals);
    for (int64_t i = 0; i < spec.requests; ++i) {
        WorkloadRequest r;
        r.prompt = startPrompt(tokens);
        appendRandom(r.prompt, spec.input.sample(rng), tokens, rng);
        r.maxTokens = drawMaxTokens(spec.output, rng);
        r.arrivalMs = times[static_cast<size_t>(i)];
        add(std::move(r));
    }
    return out;
}

} // namespace

std::vector<WorkloadRequest> buildWorkload(const WorkloadSpec& spec, const TokenSpace& tokens) {
    std::vector<WorkloadRequest> out = buildPrompts(spec, tokens);
    attachImages(out, spec);
    return out;
}

int64_t measuredRequestCount(const WorkloadSpec& spec) {
    if (spec.sharedPrefix.groups > 0) return int64_t{spec.sharedPrefix.groups} * spec.sharedPrefix.perGroup;
    if (spec.multiTurn.conversations > 0) return int64_t{spec.multiTurn.conversations} * spec.multiTurn.turns;
    return spec.requests;
}

WorkloadSpec promptFileSpec(const std::string& path, const std::vector<WorkloadRequest>& prompts, int32_t maxTokens) {
    if (prompts.empty()) throw std::invalid_argument(path + " holds no prompts");
    WorkloadSpec spec;
    spec.name = "file:" + path;
    spec.requests = static_cast<int64_t>(prompts.size());
    int64_t shortest = std::numeric_limits<int64_t>::max(), longest = 0; // the file's own lengths, as a range
    for (const auto& r : prompts) {
        shortest = std::min<int64_t>(shortest, static_cast<int64_t>(r.prompt.size()));
        longest = std::max<int64_t>(longest, static_cast<int64_t>(r.prompt.size()));
    }
    spec.input = {LengthDist::Kind::Uniform, double(shortest), double(longest), shortest, longest};
    spec.output = {LengthDist::Kind::Fixed, double(maxTokens), 0, 1, maxTokens};
    spec.arrival.kind = ArrivalSpec::Kind::Closed;
    spec.arrival.concurrency = 1;
    return spec;
}

std::vector<WorkloadRequest> promptFileWorkload(const WorkloadSpec& spec, std::vector<WorkloadRequest> prompts) {
    if (prompts.empty()) throw std::invalid_argument("a prompt file's workload needs at least one prompt");
    Rng rng(spec.seed); // not a stream: the arrivals compare has always drawn for prompt files
    const auto times = arrivalTimesMs(spec.arrival, prompts.size(), rng);
    std::vector<WorkloadRequest> out;
    out.reserve(prompts.size() + static_cast<size_t>(std::max<int32_t>(0, spec.warmupRequests)));
    for (int32_t i = 0; i < spec.warmupRequests; ++i) { // the file's prompts again, from the first
        WorkloadRequest w = prompts[static_cast<size_t>(i) % prompts.size()];
        w.warmup = true;
        w.arrivalMs = 0;
        out.push_back(std::move(w));
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
        prompts[i].arrivalMs = times[i];
        prompts[i].warmup = false;
        out.push_back(std::move(prompts[i]));
    }
    for (size_t i = 0; i < out.size(); ++i) out[i].index = i;
    return out;
}

std::vector<std::string> builtinWorkloadNames() {
    return {"shared-prefix", "chat", "long-context", "multi-turn"};
}

std::optional<WorkloadSpec> builtinWorkload(const std::string& name) {
    using K = LengthDist::Kind;
    WorkloadSpec s;
    s.name = name;
    if (name == "shared-prefix") {
        // 8 groups of 8 behind a 1024-token prefix: the prefix cache's best case, interleaved.
        s.requests = 64;
        s.input = {K::Fixed, 1024 + 64, 0};
        s.output = {K::Fixed, 32, 0};
        s.sharedPrefix = {8, 8, 1024, 64};
        s.arrival.concurrency = 1;
    } else if (name == "chat") {
        s.requests = 64;
        s.input = {K::LogNormal, 256, 192, 16, 2048};
        s.output = {K::LogNormal, 128, 64, 8, 512};
        s.arrival.concurrency = 8;
    } else if (name == "long-context") {
        // P(length > 32,768) = 2/3: most prompts exceed the fast-mode cap and get truncated,
        // the rest fit, so one run shows both sides.
        s.requests = 16;
        s.input = {K::Uniform, 16384, 65536};
        s.output = {K::Fixed, 16, 0};
        s.arrival.concurrency = 1;
    } else if (name == "multi-turn") {
        s.requests = 32;
        s.input = {K::LogNormal, 128, 64};
        s.output = {K::Fixed, 32, 0};
        s.multiTurn = {8, 4, {K::Fixed, 32, 0}};
        s.arrival.concurrency = 4;
    } else {
        return std::nullopt;
    }
    return s;
}

} // namespace mb::lab
