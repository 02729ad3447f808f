// Reading a model file's header for the Models page (engine thread).
#pragma once

#include "gui/gui_types.h"

namespace mb::gui {

// Reads a model file's header: shapes, parameters, tensors and bytes per type. Throws
// what GgufFile::open throws.
ModelDescription describeModel(const QString& path);

} // namespace mb::gui
