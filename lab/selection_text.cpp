// Number formats of the selection's sentences: grouped thousands, milliseconds, ratios.
#include "lab/selection_internal.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace mb::lab::selection_detail {

nlohmann::json parsedOrEmpty(const std::string& text) {
    try {
        if (!text.empty()) return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
    }
    return nlohmann::json::object();
}

std::string num(double v, int decimals) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

// Two decimals for a share under 1% that is not 0, so that 0.04% does not print as 0.0%.
std::string pct(double share) {
    return num(100.0 * share, share != 0 && std::fabs(share) < 0.01 ? 2 : 1) + "%";
}

std::string grouped(double v, int decimals) { return groupedNumber(v, decimals); }

// One decimal where it carries information (under 100 ms and not whole), whole milliseconds otherwise.
std::string ms(double v) { return grouped(v, std::fabs(v) < 100 && v != std::round(v) ? 1 : 0) + " ms"; }

std::string measuredText(const CandidateScore& c, const SloCheck& k) {
    for (const RunSpread& x : c.spread)
        if (x.key == k.key) {
            std::string value = ms(k.measuredMs);
            value.resize(value.size() - 3); // the unit once, after the interval
            return value + " ± " + ms((x.ci95High - x.ci95Low) / 2);
        }
    return ms(k.measuredMs);
}

std::string ratioText(double r) { return num(r, r < 10 ? 1 : 0) + "×"; }

std::string boundText(const std::string& key) {
    const size_t dot = key.find('.');
    std::string metric = key.substr(0, dot);
    if (metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_ms") == 0) metric.resize(metric.size() - 3);
    for (char& ch : metric) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return dot == std::string::npos ? metric : metric + " " + key.substr(dot + 1);
}

} // namespace mb::lab::selection_detail
