// SHA-256 (OpenSSL): of a file, for identifying model files in stored runs, and of bytes, for approving script plugins.
#pragma once

#include <string>
#include <string_view>

namespace mb::plugins {

// Lower-case hex digest, streamed in 1 MiB reads. Throws std::runtime_error naming the
// path when the file cannot be read.
std::string sha256File(const std::string& path);

// Lower-case hex digest of `bytes`. Throws std::runtime_error without OpenSSL.
std::string sha256Hex(std::string_view bytes);

} // namespace mb::plugins
