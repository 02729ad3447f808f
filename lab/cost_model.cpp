// Price-sheet parsing and the monthly cost projection (tiers are marginal discounts).
#include "lab/cost_model.h"

#include "lab/requirements.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace mb::lab {

namespace {
constexpr const char* kWhat = "prices";
}

PriceSheet parsePriceSheet(const nlohmann::json& j) {
    using namespace json_check;
    constexpr double kInf = std::numeric_limits<double>::max();
    requireObject(j, kWhat, "");
    rejectUnknownKeys(j, {"currency", "per_million", "accelerator_hour", "base_fee", "tiers", "tiers_apply"}, kWhat,
                      "");
    PriceSheet p;
    if (j.contains("currency")) {
        if (!j["currency"].is_string() || j["currency"].get<std::string>().empty())
            throw RequirementsError("prices: currency: expected a currency code such as \"CNY\"");
        p.currency = j["currency"].get<std::string>();
    }
    if (j.contains("per_million")) {
        const auto& pm = j["per_million"];
        requireObject(pm, kWhat, "per_million");
        rejectUnknownKeys(pm, {"input", "cached_input", "output"}, kWhat, "per_million.");
        if (pm.contains("input")) p.input = number(pm["input"], kWhat, "per_million.input", 0, kInf);
        // Without a cached price, cached tokens cost what uncached ones do.
        p.cachedInput = pm.contains("cached_input")
                            ? number(pm["cached_input"], kWhat, "per_million.cached_input", 0, kInf)
                            : p.input;
        if (pm.contains("output")) p.output = number(pm["output"], kWhat, "per_million.output", 0, kInf);
    }
    if (j.contains("accelerator_hour"))
        p.acceleratorHour = number(j["accelerator_hour"], kWhat, "accelerator_hour", 0, kInf);
    if (j.contains("base_fee")) p.baseFee = number(j["base_fee"], kWhat, "base_fee", 0, kInf);
    if (j.contains("tiers_apply")) {
        const auto& t = j["tiers_apply"];
        if (t == "whole") p.tiersApply = PriceSheet::TiersApply::Whole;
        else if (t != "above")
            throw RequirementsError("prices: tiers_apply: expected \"above\" (the tokens above each threshold) or "
                                    "\"whole\" (the whole volume once over it)");
    }
    if (j.contains("tiers")) {
        if (!j["tiers"].is_array()) throw RequirementsError("prices: tiers: expected an array");
        for (size_t i = 0; i < j["tiers"].size(); ++i) {
            const auto& t = j["tiers"][i];
            const std::string at = "tiers[" + std::to_string(i) + "]";
            requireObject(t, kWhat, at);
            rejectUnknownKeys(t, {"above_tokens", "discount"}, kWhat, at + ".");
            if (!t.contains("above_tokens") || !t.contains("discount"))
                throw RequirementsError("prices: " + at + ": needs above_tokens and discount");
            PriceSheet::Tier tier{number(t["above_tokens"], kWhat, at + ".above_tokens", 0, kInf),
                                  number(t["discount"], kWhat, at + ".discount", 0, 0.999999)};
            if (!p.tiers.empty() && tier.aboveTokens <= p.tiers.back().aboveTokens)
                throw RequirementsError("prices: " + at +
                                        ".above_tokens: tiers must be in increasing order");
            p.tiers.push_back(tier);
        }
    }
    return p;
}

PriceSheet loadPriceSheet(const std::string& path) {
    return json_check::loadFile(path, kWhat, parsePriceSheet);
}

nlohmann::ordered_json toJson(const PriceSheet& p) {
    nlohmann::ordered_json tiers = nlohmann::ordered_json::array();
    for (const auto& t : p.tiers) tiers.push_back({{"above_tokens", t.aboveTokens}, {"discount", t.discount}});
    return {{"currency", p.currency},
            {"per_million", {{"input", p.input}, {"cached_input", p.cachedInput}, {"output", p.output}}},
            {"accelerator_hour", p.acceleratorHour},
            {"base_fee", p.baseFee},
            {"tiers", tiers},
            {"tiers_apply", tiersApplyName(p.tiersApply)}};
}

const char* tiersApplyName(PriceSheet::TiersApply t) {
    return t == PriceSheet::TiersApply::Whole ? "whole" : "above";
}

CostProjection projectMonthlyCost(const PriceSheet& p, const Volume& v) {
    CostProjection c;
    c.currency = p.currency;
    const double hit = std::clamp(v.hitRate, 0.0, 1.0);
    c.inputTokens = v.requests * v.inputTokensPerRequest;
    c.cachedInputTokens = c.inputTokens * hit;
    c.uncachedInputTokens = c.inputTokens - c.cachedInputTokens;
    c.outputTokens = v.requests * v.outputTokensPerRequest;
    c.inputCost = c.uncachedInputTokens * p.input / 1e6;
    c.cachedInputCost = c.cachedInputTokens * p.cachedInput / 1e6;
    c.outputCost = c.outputTokens * p.output / 1e6;
    const double list = c.inputCost + c.cachedInputCost + c.outputCost;
    const double tokens = c.inputTokens + c.outputTokens;
    if (tokens > 0 && p.tiersApply == PriceSheet::TiersApply::Whole) {
        // The highest tier reached discounts the whole volume.
        for (const auto& t : p.tiers)
            if (tokens > t.aboveTokens) c.tierDiscount = list * t.discount;
    } else if (tokens > 0) {
        const double blended = list / tokens;
        for (size_t i = 0; i < p.tiers.size(); ++i) {
            const double from = p.tiers[i].aboveTokens;
            const double to = i + 1 < p.tiers.size() ? p.tiers[i + 1].aboveTokens : tokens;
            const double band = std::max(0.0, std::min(tokens, to) - from);
            c.tierDiscount += band * blended * p.tiers[i].discount;
        }
    }
    if (v.replicas > 0) {
        c.replicas = v.replicas;
        c.acceleratorHours = v.replicas * kHoursPerMonth;
        c.acceleratorCost = c.acceleratorHours * p.acceleratorHour;
    } else if (v.requestsPerS > 0) {
        c.acceleratorHours = v.requests / v.requestsPerS / 3600.0;
        c.acceleratorCost = c.acceleratorHours * p.acceleratorHour;
    }
    c.baseFee = p.baseFee;
    c.total = c.baseFee + list - c.tierDiscount + c.acceleratorCost;
    c.perMillionTokens = tokens > 0 ? c.total / tokens * 1e6 : 0;
    return c;
}

nlohmann::ordered_json toJson(const CostProjection& c) {
    return {{"currency", c.currency},
            {"input_tokens", c.inputTokens},
            {"cached_input_tokens", c.cachedInputTokens},
            {"uncached_input_tokens", c.uncachedInputTokens},
            {"output_tokens", c.outputTokens},
            {"input_cost", c.inputCost},
            {"cached_input_cost", c.cachedInputCost},
            {"output_cost", c.outputCost},
            {"tier_discount", c.tierDiscount},
            {"accelerator_hours", c.acceleratorHours},
            {"accelerator_cost", c.acceleratorCost},
            {"replicas", c.replicas},
            {"base_fee", c.baseFee},
            {"total", c.total},
            {"per_million_tokens", c.perMillionTokens}};
}

CostProjection costProjectionFromJson(const nlohmann::json& j) {
    CostProjection c;
    c.currency = j.at("currency").get<std::string>();
    c.inputTokens = j.at("input_tokens").get<double>();
    c.cachedInputTokens = j.at("cached_input_tokens").get<double>();
    c.uncachedInputTokens = j.at("uncached_input_tokens").get<double>();
    c.outputTokens = j.at("output_tokens").get<double>();
    c.inputCost = j.at("input_cost").get<double>();
    c.cachedInputCost = j.at("cached_input_cost").get<double>();
    c.outputCost = j.at("output_cost").get<double>();
    c.tierDiscount = j.at("tier_discount").get<double>();
    c.acceleratorHours = j.at("accelerator_hours").get<double>();
    c.acceleratorCost = j.at("accelerator_cost").get<double>();
    c.replicas = j.value("replicas", 0); // absent in selections saved before capacity sweeps
    c.baseFee = j.at("base_fee").get<double>();
    c.total = j.at("total").get<double>();
    c.perMillionTokens = j.at("per_million_tokens").get<double>();
    return c;
}

std::string groupedNumber(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v));
    const std::string digits = buf;
    const size_t whole = std::min(digits.find('.'), digits.size());
    std::string out = v < 0 && digits.find_first_not_of("0.") != std::string::npos ? "-" : "";
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && i < whole && (whole - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

namespace {
std::string money(double v, const std::string& cur) {
    return groupedNumber(v, 2) + " " + cur;
}
} // namespace

std::vector<std::string> costFormulaLines(const PriceSheet& p, const CostProjection& c) {
    const std::string& cur = c.currency;
    auto term = [&](const char* what, double tokens, double price, double cost) {
        return std::string(what) + " " + groupedNumber(tokens, 0) + " tokens × " + groupedNumber(price, 4) + " " + cur +
               "/M = " + money(cost, cur);
    };
    std::vector<std::string> lines{term("uncached input", c.uncachedInputTokens, p.input, c.inputCost),
                                   term("cached input", c.cachedInputTokens, p.cachedInput, c.cachedInputCost),
                                   term("output", c.outputTokens, p.output, c.outputCost)};
    if (c.tierDiscount > 0)
        lines.push_back(std::string("tier discount (") + tiersApplyName(p.tiersApply) +
                        (p.tiersApply == PriceSheet::TiersApply::Whole ? ": the whole volume at the highest tier reached"
                                                                       : ": the tokens above each threshold") +
                        ") − " + money(c.tierDiscount, cur));
    if (c.acceleratorHours > 0 && c.replicas > 0)
        lines.push_back("accelerator " + std::to_string(c.replicas) + (c.replicas == 1 ? " replica" : " replicas") +
                        " × 720 h × " + money(p.acceleratorHour, cur) + "/h = " + money(c.acceleratorCost, cur) +
                        " (provisioned for the peak)");
    else if (c.acceleratorHours > 0)
        lines.push_back("accelerator " + groupedNumber(c.acceleratorHours, 1) + " h × " + money(p.acceleratorHour, cur) +
                        "/h = " + money(c.acceleratorCost, cur));
    if (c.baseFee > 0) lines.push_back("base fee " + money(c.baseFee, cur));
    lines.push_back("total " + money(c.total, cur) + " a month (" + groupedNumber(c.perMillionTokens, 4) + " " + cur +
                    " per million tokens)");
    return lines;
}

} // namespace mb::lab
