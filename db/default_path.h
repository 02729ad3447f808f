// Where the run store lives when nobody says otherwise (shared by the CLI and the GUI).
#pragma once

#include <string>

namespace mb::db {

// $XDG_DATA_HOME/modebench/modebench.db, or ~/.local/share/modebench/modebench.db when
// XDG_DATA_HOME is unset or not absolute. Throws std::runtime_error when neither
// XDG_DATA_HOME nor HOME is set. Creates nothing.
std::string defaultDatabasePath();

} // namespace mb::db
