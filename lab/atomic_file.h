// Whole-file writes that never leave a partial file: a temporary file beside the target, renamed.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace mb::lab {

// A file could not be written; what() reads "cannot write PATH: REASON" (the OS's words).
class AtomicFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Writes `bytes` to `path`: to a new temporary file in the same directory
// ("PATH.tmp-PID-N"), flushed to disk, then renamed over `path`. On any failure (disk
// full, file size limit, no such directory) the temporary file is removed, `path` keeps
// what it held before (or stays absent), and AtomicFileError is thrown. A file replaced
// keeps its permission bits; a new one gets 0666 less the umask, as with ofstream.
// A symlink at `path` is written through (its target is replaced). Where `path` exists
// and is not a regular file (/dev/stdout, a FIFO) the bytes are written to it in place,
// as no rename can replace it. Thread-safe; no Qt.
void writeFileAtomically(const std::string& path, std::string_view bytes);

} // namespace mb::lab
