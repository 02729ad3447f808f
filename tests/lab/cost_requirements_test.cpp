// Requirements and price-sheet files (errors name the key) and the monthly cost projection.
#include "lab/cost_model.h"
#include "lab/requirements.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace mb::lab;

namespace {

std::string errorOf(const nlohmann::json& j) {
    try {
        parseRequirements(j);
    } catch (const RequirementsError& e) {
        return e.what();
    }
    return "no error";
}

std::string priceErrorOf(const nlohmann::json& j) {
    try {
        parsePriceSheet(j);
    } catch (const RequirementsError& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(Requirements, ParsesTheProductExample) {
    const auto r = parseRequirements(nlohmann::json::parse(R"(
        {"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}},
         "inputs": {"prompt_file": "prompts.jsonl", "max_tokens": 40000, "over_cap_tolerance": 0.0},
         "monthly": {"requests": 3000000, "input_tokens_per_request": 100, "output_tokens_per_request": 50},
         "weights": {"latency": 0.5, "cost": 0.3, "features": 0.2},
         "ops_capability": "medium",
         "needs": {"hot_updates": false, "custom_batching": true}})"));
    ASSERT_EQ(r.slo.size(), 2u);
    EXPECT_EQ(r.slo[0].key(), "e2e_ms.p99");
    EXPECT_EQ(r.slo[0].limitMs, 10000);
    EXPECT_EQ(r.slo[1].key(), "ttft_ms.p95");
    EXPECT_EQ(r.minTtftLimitMs(), 3000);
    EXPECT_EQ(r.inputs.promptFile, "prompts.jsonl");
    EXPECT_EQ(r.inputs.maxTokens, 40000);
    EXPECT_EQ(r.monthly.requests, 3000000);
    EXPECT_EQ(r.monthly.outputTokensPerRequest, 50);
    EXPECT_DOUBLE_EQ(r.weights.cost, 0.3);
    EXPECT_EQ(r.opsCapability, OpsCapability::Medium);
    EXPECT_TRUE(r.needs.customBatching);
    EXPECT_FALSE(r.needs.hotUpdates);
    // toJson parses back to the same document.
    EXPECT_EQ(toJson(parseRequirements(toJson(r))), toJson(r));
}

TEST(Requirements, OnlySloIsRequired) {
    const auto r = parseRequirements(nlohmann::json::parse(R"({"slo": {"itl_ms": {"p99.9": 50, "max": 200}}})"));
    ASSERT_EQ(r.slo.size(), 2u);
    EXPECT_EQ(r.slo[0].key(), "itl_ms.max");
    EXPECT_EQ(r.slo[1].key(), "itl_ms.p99.9");
    EXPECT_FALSE(r.minTtftLimitMs());
    EXPECT_EQ(r.inputs.overCapTolerance, 0);
    EXPECT_FALSE(r.monthly.requests);
    EXPECT_DOUBLE_EQ(r.weights.latency + r.weights.cost + r.weights.features, 1.0);
}

TEST(Requirements, ErrorsNameTheKey) {
    using nlohmann::json;
    EXPECT_NE(errorOf(json::object()).find("requirements: slo: required"), std::string::npos);
    EXPECT_NE(errorOf(json::parse(R"({"slo": {}})")).find("slo: expected at least one bound"), std::string::npos);
    EXPECT_NE(errorOf(json::parse(R"({"slo": {"foo_ms": {"p95": 1}}})")).find("slo.foo_ms: unknown metric"),
              std::string::npos);
    EXPECT_NE(errorOf(json::parse(R"({"slo": {"ttft_ms": {"p42": 1}}})")).find("slo.ttft_ms.p42: unknown statistic"),
              std::string::npos);
    EXPECT_NE(errorOf(json::parse(R"({"slo": {"ttft_ms": {"p95": -1}}})")).find("slo.ttft_ms.p95: expected a positive"),
              std::string::npos);
    EXPECT_NE(errorOf(json::parse(R"({"slo": {"ttft_ms": {"p95": "fast"}}})")).find("slo.ttft_ms.p95"),
              std::string::npos);
    const json slo = json::parse(R"({"ttft_ms": {"p95": 100}})");
    EXPECT_NE(errorOf({{"slo", slo}, {"inputs", {{"prompt", "x"}}}}).find("inputs.prompt: unknown key"),
              std::string::npos);
    EXPECT_NE(errorOf({{"slo", slo}, {"inputs", {{"over_cap_tolerance", 1.5}}}}).find("inputs.over_cap_tolerance"),
              std::string::npos);
    EXPECT_NE(errorOf({{"slo", slo}, {"inputs", {{"max_tokens", 0}}}}).find("inputs.max_tokens"), std::string::npos);
    EXPECT_NE(errorOf({{"slo", slo}, {"ops_capability", "heroic"}}).find("ops_capability: expected"),
              std::string::npos);
    EXPECT_NE(errorOf({{"slo", slo}, {"weights", {{"latency", 0}, {"cost", 0}, {"features", 0}}}}).find("weights:"),
              std::string::npos);
    EXPECT_NE(errorOf({{"slo", slo}, {"needs", {{"hot_updates", "yes"}}}}).find("needs.hot_updates"),
              std::string::npos);
    EXPECT_NE(errorOf({{"slo", slo}, {"monthly", {{"requests", -5}}}}).find("monthly.requests"), std::string::npos);
    EXPECT_NE(errorOf({{"slo", slo}, {"colour", "red"}}).find("colour: unknown key"), std::string::npos);
    EXPECT_NE(errorOf(json::array()).find("expected a JSON object"), std::string::npos);
}

TEST(Requirements, ShippedExamplesParse) {
    const std::filesystem::path dir = std::filesystem::path(MODEBENCH_SOURCE_DIR) / "resources";
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir / "requirements")) {
        SCOPED_TRACE(e.path().string());
        EXPECT_NO_THROW(loadRequirements(e.path().string()));
        ++files;
    }
    EXPECT_GE(files, 3);
    const PriceSheet p = loadPriceSheet((dir / "prices" / "example.json").string());
    EXPECT_EQ(p.currency, "CNY");
    EXPECT_DOUBLE_EQ(p.input, 0.2);
    EXPECT_DOUBLE_EQ(p.cachedInput, 0.02);
    ASSERT_EQ(p.tiers.size(), 1u);
    EXPECT_DOUBLE_EQ(p.tiers[0].discount, 0.2);
}

TEST(Requirements, MissingAndMalformedFilesSayWhich) {
    try {
        loadRequirements("/nonexistent/req.json");
        FAIL();
    } catch (const RequirementsError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/req.json: cannot open"), std::string::npos);
    }
}

// A relative prompt_file names a file beside the requirements file; loading makes it
// absolute, so a selection saved with it reads the same file from any directory (migrate).
TEST(Requirements, LoadResolvesARelativePromptFileAgainstTheFile) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("mb_req_" + std::to_string(::getpid())) / "reqdir";
    fs::create_directories(dir);
    std::ofstream(dir / "req.json") << R"({"slo": {"ttft_ms": {"p95": 100}}, "inputs": {"prompt_file": "p.txt"}})";
    std::ofstream(dir / "abs.json") << R"({"slo": {"ttft_ms": {"p95": 100}}, "inputs": {"prompt_file": "/x/p.txt"}})";
    const Requirements r = loadRequirements((dir / ".." / "reqdir" / "req.json").string());
    EXPECT_TRUE(fs::path(r.inputs.promptFile).is_absolute()) << r.inputs.promptFile;
    EXPECT_EQ(fs::path(r.inputs.promptFile), fs::absolute(dir / "p.txt").lexically_normal());
    EXPECT_EQ(toJson(r)["inputs"]["prompt_file"], r.inputs.promptFile) << "the saved form is the resolved path";
    EXPECT_EQ(loadRequirements((dir / "abs.json").string()).inputs.promptFile, "/x/p.txt");
    // Parsing a document (a stored selection) keeps the path as written.
    EXPECT_EQ(parseRequirements(nlohmann::json::parse(R"({"slo": {"ttft_ms": {"p95": 1}}, "inputs": {"prompt_file": "p.txt"}})"))
                  .inputs.promptFile,
              "p.txt");
    fs::remove_all(dir.parent_path());
}

TEST(PriceSheet, ErrorsNameTheKey) {
    using nlohmann::json;
    EXPECT_NE(priceErrorOf({{"per_million", {{"input", -1}}}}).find("prices: per_million.input"), std::string::npos);
    EXPECT_NE(priceErrorOf({{"per_million", {{"inptu", 1}}}}).find("per_million.inptu: unknown key"),
              std::string::npos);
    EXPECT_NE(priceErrorOf({{"tiers", {{{"above_tokens", 10}, {"discount", 1.0}}}}}).find("tiers[0].discount"),
              std::string::npos);
    EXPECT_NE(priceErrorOf(json::parse(R"({"tiers": [{"above_tokens": 10, "discount": 0.1},
                                                       {"above_tokens": 5, "discount": 0.2}]})"))
                  .find("tiers[1].above_tokens: tiers must be in increasing order"),
              std::string::npos);
    EXPECT_NE(priceErrorOf({{"currency", 3}}).find("prices: currency"), std::string::npos);
    // Round trip.
    const PriceSheet p = parsePriceSheet(json::parse(R"({"currency": "EUR", "per_million": {"input": 1},
        "tiers": [{"above_tokens": 5, "discount": 0.1}]})"));
    EXPECT_DOUBLE_EQ(p.cachedInput, 1.0) << "without a cached price, cached tokens cost the input price";
    EXPECT_EQ(toJson(parsePriceSheet(toJson(p))), toJson(p));
}

// PRODUCT.md §6: 100,000 requests a day for 30 days, 100 input tokens each = 300 M input
// tokens a month; 6 at the cache-hit price of 0.02 per million, 60 at the uncached 0.2,
// each on top of the same base fee.
TEST(CostModel, ReproducesTheProductExample) {
    PriceSheet p;
    p.currency = "CNY";
    p.input = 0.2;
    p.cachedInput = 0.02;
    p.output = 0.8;
    p.baseFee = 100;
    Volume v;
    v.requests = 100000.0 * 30;
    v.inputTokensPerRequest = 100;
    v.outputTokensPerRequest = 0;

    v.hitRate = 1.0;
    const CostProjection cached = projectMonthlyCost(p, v);
    EXPECT_DOUBLE_EQ(cached.inputTokens, 300e6);
    EXPECT_DOUBLE_EQ(cached.cachedInputTokens, 300e6);
    EXPECT_NEAR(cached.cachedInputCost, 6.0, 1e-9);
    EXPECT_NEAR(cached.total, 100 + 6.0, 1e-9);

    v.hitRate = 0.0;
    const CostProjection uncached = projectMonthlyCost(p, v);
    EXPECT_NEAR(uncached.inputCost, 60.0, 1e-9);
    EXPECT_NEAR(uncached.total, 100 + 60.0, 1e-9);
    EXPECT_EQ(uncached.baseFee, cached.baseFee);
    EXPECT_NEAR(uncached.perMillionTokens, 160.0 / 300.0, 1e-12);

    // A measured hit rate in between is priced in proportion.
    v.hitRate = 0.75;
    EXPECT_NEAR(projectMonthlyCost(p, v).total, 100 + 0.25 * 60 + 0.75 * 6, 1e-9);
}

TEST(CostModel, TiersDiscountTheTokensAboveTheirThreshold) {
    PriceSheet p;
    p.input = 0.2;
    p.cachedInput = 0.02;
    p.tiers = {{100e6, 0.2}};
    Volume v{3e6, 100, 0, 0.0, 0};
    // 300 M uncached tokens: 100 M at 0.2/M (20) + 200 M at 0.16/M (32).
    const CostProjection c = projectMonthlyCost(p, v);
    EXPECT_NEAR(c.tierDiscount, 8.0, 1e-9);
    EXPECT_NEAR(c.total, 52.0, 1e-9);
    // Below the threshold nothing is discounted.
    v.requests = 0.5e6; // 50 M tokens
    EXPECT_NEAR(projectMonthlyCost(p, v).total, 10.0, 1e-9);
    // Two tiers are marginal bands: 100-200 M at -20%, above 200 M at -50%.
    p.tiers = {{100e6, 0.2}, {200e6, 0.5}};
    v.requests = 3e6;
    EXPECT_NEAR(projectMonthlyCost(p, v).total, 20 + 16 + 10, 1e-9);
}

TEST(CostModel, AcceleratorHoursFollowTheMeasuredThroughput) {
    PriceSheet p;
    p.acceleratorHour = 2.5;
    p.output = 1.0;
    Volume v{3.6e6, 10, 10, 0, 10.0}; // 3.6 M requests at 10 requests/s = 100 h
    const CostProjection c = projectMonthlyCost(p, v);
    EXPECT_NEAR(c.acceleratorHours, 100.0, 1e-9);
    EXPECT_NEAR(c.acceleratorCost, 250.0, 1e-9);
    EXPECT_NEAR(c.outputCost, 36.0, 1e-9);
    EXPECT_NEAR(c.total, 286.0, 1e-9);
    const auto j = toJson(c);
    EXPECT_EQ(j["total"].get<double>(), c.total);
    EXPECT_EQ(j["accelerator_hours"].get<double>(), c.acceleratorHours);
}
