// Price sheets and monthly cost projections from measured token counts and prefix hit rates.
//
// Formula (docs/SELECTION.md):
//   input      I = requests × input_tokens_per_request        (tokens a month)
//   cached     Ic = I × hit_rate,   uncached Iu = I − Ic
//   output     O = requests × output_tokens_per_request
//   list       L = (Iu·p_input + Ic·p_cached_input + O·p_output) / 1e6
//   tokens     T = I + O; blended price b = L / T per token
//   tiers      "tiers_apply": "above" (default): each tier discounts the tokens above its
//              threshold, up to the next tier's (marginal, like tax brackets):
//              discount = Σ_bands n_band·b·d_band;
//              "whole": the highest tier whose threshold T exceeds discounts every token:
//              discount = L·d_highest reached
//   hardware   with a capacity sweep: H = accelerator_hour × replicas × 720 h (provisioned
//              for the month's peak); without one: accelerator_hour × requests /
//              measured_requests_per_s / 3600 (busy hours of one replica, a lower bound)
//   total      = base_fee + token charge + H;   per million tokens = total / T × 1e6
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mb::lab {

// The month every projection is of: 30 days.
inline constexpr double kHoursPerMonth = 30 * 24.0;
inline constexpr double kSecondsPerMonth = kHoursPerMonth * 3600.0;

struct PriceSheet {
    std::string currency = "USD";
    double input = 0;       // per million uncached input tokens
    double cachedInput = 0; // per million input tokens served from the prefix cache
    double output = 0;      // per million output tokens
    double acceleratorHour = 0;
    double baseFee = 0; // per month
    struct Tier {
        double aboveTokens = 0; // monthly tokens (input + output) beyond which the discount applies
        double discount = 0;    // fraction off, [0, 1)
    };
    std::vector<Tier> tiers; // strictly increasing aboveTokens
    enum class TiersApply { Above, Whole } tiersApply = TiersApply::Above;
};
const char* tiersApplyName(PriceSheet::TiersApply t); // "above", "whole"

// Unknown keys and impossible values throw RequirementsError naming the key
// ("prices: per_million.input: ..."). Every key is optional; prices default to 0.
PriceSheet parsePriceSheet(const nlohmann::json& j);
PriceSheet loadPriceSheet(const std::string& path);
nlohmann::ordered_json toJson(const PriceSheet& p);

// What is being projected: a month of traffic with the measured cache behaviour.
struct Volume {
    double requests = 0;               // a month
    double inputTokensPerRequest = 0;  // prompt tokens
    double outputTokensPerRequest = 0;
    double hitRate = 0;                // share of input tokens served from the prefix cache, [0, 1]
    double requestsPerS = 0;           // measured throughput; 0: no accelerator-hour charge
    int replicas = 0;                  // a sweep's replicas for the peak: charged all month; 0: busy hours
};

struct CostProjection {
    std::string currency;
    double inputTokens = 0, cachedInputTokens = 0, uncachedInputTokens = 0, outputTokens = 0;
    double inputCost = 0, cachedInputCost = 0, outputCost = 0; // at list price
    double tierDiscount = 0;     // subtracted from the token charges
    double acceleratorHours = 0, acceleratorCost = 0;
    int replicas = 0; // > 0: acceleratorHours = replicas × 720 h (a capacity sweep sized them)
    double baseFee = 0;
    double total = 0;
    double perMillionTokens = 0; // total / (input + output) × 1e6; 0 without tokens
};

CostProjection projectMonthlyCost(const PriceSheet& prices, const Volume& volume);
nlohmann::ordered_json toJson(const CostProjection& c);
CostProjection costProjectionFromJson(const nlohmann::json& j); // toJson's output back

// A number with thousands separators and `decimals` places: 2410.5, 1 -> "2,410.5". The
// selection's texts use it too.
std::string groupedNumber(double v, int decimals);

// The projection written out as its formula with the sheet's prices and the currency, one
// line per term ("uncached input 270,000,000 tokens × 0.2 CNY/M = 54.00 CNY").
std::vector<std::string> costFormulaLines(const PriceSheet& prices, const CostProjection& c);

} // namespace mb::lab
