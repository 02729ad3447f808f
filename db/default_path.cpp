// The default run store path (XDG base directory rules).
#include "db/default_path.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace mb::db {

std::string defaultDatabasePath() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    std::filesystem::path base;
    if (xdg && *xdg == '/') {
        base = xdg;
    } else {
        const char* home = std::getenv("HOME");
        if (!home || !*home) throw std::runtime_error("neither XDG_DATA_HOME nor HOME is set; pass --db PATH");
        base = std::filesystem::path(home) / ".local" / "share";
    }
    return (base / "modebench" / "modebench.db").string();
}

} // namespace mb::db
