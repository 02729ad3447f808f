// SHA-256 of a file (OpenSSL), for identifying model files in stored runs.
#pragma once

#include <string>

namespace mb::lab {

// Lower-case hex digest, streamed in 1 MiB reads. Throws std::runtime_error naming the
// path when the file cannot be read.
std::string sha256File(const std::string& path);

} // namespace mb::lab
