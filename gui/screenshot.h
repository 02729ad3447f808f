// `modebench --screenshot PAGE FILE`: fill one page with real data, render it to a PNG, exit.
#pragma once

#include <QString>

namespace mb::gui {

class MainWindow;

// Shows `page` in `window` after doing what the page needs to show real data: Playground
// runs both candidates, Benchmark runs a small shared-prefix workload, History opens the
// newest stored run, Models reads the model, Selection decides on the newest two-candidate
// run, Migration decides and walks the flowchart (A with `prompts`, D, E, F) until it
// stops, Report builds the newest selection that has a walk-through. Waits (at most
// `timeoutMs` per step) for that work, then saves the window as a PNG. Returns 0, or 1
// with a message on stderr.
int takeScreenshot(MainWindow& window, const QString& page, const QString& file, int timeoutMs = 600000,
                   const QString& prompts = {});

} // namespace mb::gui
