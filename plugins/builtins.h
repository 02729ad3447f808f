// The built-in plugins (docs/PLUGINS.md gives each one's keys); each throws PluginError on a bad config.
#pragma once

#include "plugins/plugin.h"

#include <memory>

namespace mb::plugins {

std::shared_ptr<const PluginFactory> makeWordFilter(const nlohmann::json& config);
std::shared_ptr<const PluginFactory> makeRegexReplace(const nlohmann::json& config);
std::shared_ptr<const PluginFactory> makeJsonOutput(const nlohmann::json& config);
std::shared_ptr<const PluginFactory> makePiiMask(const nlohmann::json& config);
std::shared_ptr<const PluginFactory> makeTrimFormat(const nlohmann::json& config);

} // namespace mb::plugins
