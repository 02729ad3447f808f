// Quoting names read from files (tensor names, metadata keys) for one-line error messages.
#pragma once

#include <string>
#include <string_view>

namespace mb::engine {

// `s` in single quotes, safe to print on one line: control bytes (NUL, newline, ...) and
// DEL become \xNN, so a hostile or corrupt name cannot cut or split the message; past
// `maxBytes` bytes the rest is replaced by "...". UTF-8 text passes through unchanged.
std::string quoteName(std::string_view s, size_t maxBytes = 120);

} // namespace mb::engine
