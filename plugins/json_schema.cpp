// The small JSON-schema subset json_output checks: type, properties, required, items, enum.
#include "plugins/json_schema.h"

#include "plugins/plugin.h"

#include <cctype>
#include <cmath>

namespace mb::plugins {

namespace {

using Json = nlohmann::json;

constexpr const char* kTypes[] = {"object", "array", "string", "number", "integer", "boolean", "null"};

[[noreturn]] void schemaError(const std::string& where, const std::string& what) {
    throw PluginError("json_output: schema " + where + ": " + what);
}

bool knownType(const Json& t) {
    if (!t.is_string()) return false;
    for (const char* k : kTypes)
        if (t == k) return true;
    return false;
}

bool hasType(const Json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "number") return value.is_number();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    // integer: 3 and 3.0 both count, as in JSON Schema
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    const double d = value.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
}

std::string member(const std::string& path, const std::string& key) {
    bool plain = !key.empty();
    for (char c : key) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    return plain ? path + "." + key : path + "[" + Json(key).dump() + "]";
}

} // namespace

void checkSchema(const Json& schema, const std::string& where) {
    if (!schema.is_object()) schemaError(where, "must be an object");
    for (auto it = schema.begin(); it != schema.end(); ++it) {
        const std::string& k = it.key();
        const Json& v = it.value();
        if (k == "type") {
            if (v.is_array() ? v.empty() : !knownType(v)) schemaError(where, "\"type\" must be one of object, array, string, number, integer, boolean, null (or a list of them)");
            if (v.is_array())
                for (const Json& t : v)
                    if (!knownType(t)) schemaError(where, "unknown type " + t.dump());
        } else if (k == "properties") {
            if (!v.is_object()) schemaError(where, "\"properties\" must be an object");
            for (auto p = v.begin(); p != v.end(); ++p) checkSchema(p.value(), member(where, p.key()));
        } else if (k == "required") {
            if (!v.is_array()) schemaError(where, "\"required\" must be a list of names");
            for (const Json& n : v)
                if (!n.is_string()) schemaError(where, "\"required\" must be a list of names");
        } else if (k == "items") {
            checkSchema(v, where + "[]");
        } else if (k == "enum") {
            if (!v.is_array() || v.empty()) schemaError(where, "\"enum\" must be a non-empty list");
        } else {
            schemaError(where, "unsupported keyword \"" + k + "\" (supported: type, properties, required, items, enum)");
        }
    }
}

std::string validateJson(const Json& schema, const Json& value, const std::string& path) {
    if (const auto t = schema.find("type"); t != schema.end()) {
        bool ok = false;
        std::string names;
        const Json types = t->is_array() ? *t : Json::array({*t});
        for (const Json& name : types) {
            ok = ok || hasType(value, name.get<std::string>());
            names += (names.empty() ? "" : " or ") + name.get<std::string>();
        }
        if (!ok) return path + ": expected " + names;
    }
    if (const auto e = schema.find("enum"); e != schema.end()) {
        bool ok = false;
        for (const Json& allowed : *e) ok = ok || allowed == value;
        if (!ok) return path + ": not one of the allowed values";
    }
    if (value.is_object()) {
        if (const auto req = schema.find("required"); req != schema.end())
            for (const Json& name : *req)
                if (!value.contains(name.get<std::string>()))
                    return path + ": missing required property " + name.dump();
        if (const auto props = schema.find("properties"); props != schema.end())
            for (auto p = props->begin(); p != props->end(); ++p)
                if (const auto v = value.find(p.key()); v != value.end()) {
                    std::string why = validateJson(p.value(), *v, member(path, p.key()));
                    if (!why.empty()) return why;
                }
    }
    if (value.is_array())
        if (const auto items = schema.find("items"); items != schema.end())
            for (size_t i = 0; i < value.size(); ++i) {
                std::string why = validateJson(*items, value[i], path + "[" + std::to_string(i) + "]");
                if (!why.empty()) return why;
            }
    return {};
}

} // namespace mb::plugins
