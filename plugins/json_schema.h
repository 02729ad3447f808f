// The small JSON-schema subset json_output checks: type, properties, required, items, enum.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mb::plugins {

// Throws PluginError ("json_output: schema <where>: ...") when `schema` uses a keyword
// outside the subset or a keyword's value has the wrong shape.
void checkSchema(const nlohmann::json& schema, const std::string& where = "$");

// Empty when `value` satisfies `schema` (already checked), else the first failure as
// "<path>: <what>", e.g. "$.items[2].price: expected number". Unlisted properties are allowed.
std::string validateJson(const nlohmann::json& schema, const nlohmann::json& value, const std::string& path = "$");

} // namespace mb::plugins
