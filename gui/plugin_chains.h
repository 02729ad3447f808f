// Loading a candidate's plugin chain the way the GUI runs it: scripts approved in the run store.
#pragma once

#include "plugins/chain.h"

#include <QString>

#include <memory>

namespace mb::gui {

// The database whose approvals decide which scripts may run: `dbPath`, else the app's
// default (AppSettings::effectiveDatabasePath); empty when there is none.
QString approvalsDatabase(const QString& dbPath);

// Chain options for a GUI job: relative scripts resolve beside the chain file; a script is
// approved when db::PluginApprovals on approvalsDatabase(dbPath) says so (looked up only
// when a chain holds a script, each time, so approvals made since count).
plugins::ChainOptions chainOptionsFor(const QString& chainFile, const QString& dbPath, bool allowUnsandboxed);

// The chain in `file`, or null when `file` is empty. Throws std::runtime_error naming the
// file (an unapproved script, bad JSON, an unknown type). Any thread: a script entry starts
// its sandboxed process, so the UI thread calls it through describeChainAsync's thread.
std::shared_ptr<const plugins::Chain> loadChain(const QString& file, const QString& dbPath, bool allowUnsandboxed);

} // namespace mb::gui
