// Printable, bounded quoting of names from model files.
#include "engine/quote.h"

#include <cstdio>

namespace mb::engine {

std::string quoteName(std::string_view s, size_t maxBytes) {
    std::string out = "'";
    const size_t n = s.size() > maxBytes ? maxBytes : s.size();
    for (size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (n < s.size()) out += "...";
    return out + "'";
}

} // namespace mb::engine
