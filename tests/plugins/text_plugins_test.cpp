// regex_replace and json_output: replacements and checks across chunk boundaries, configs refused.
#include "plugin_test_util.h"

#include "plugins/builtins.h"

#include <gtest/gtest.h>

namespace mb::plugins {
namespace {

using Json = nlohmann::json;
using test::expectChunkingInvariant;
using test::runChunks;
using test::runWhole;

void expectRefused(std::shared_ptr<const PluginFactory> (*make)(const Json&), const Json& c, const std::string& part) {
    try {
        make(c);
        ADD_FAILURE() << "accepted " << c.dump();
    } catch (const PluginError& e) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
}


std::shared_ptr<const PluginFactory> regex(Json extra) {
    Json c = {{"type", "regex_replace"}};
    c.update(extra);
    return makeRegexReplace(c);
}

TEST(RegexReplace, ReplacesAcrossChunkBoundaries) {
    const auto f = regex({{"pattern", "colou?r"}, {"replacement", "hue"}, {"max_match", 8}});
    const std::string text = "colour, color, and colr; COLOR stays. colours!";
    EXPECT_EQ(runWhole(*f, text).text, "hue, hue, and colr; COLOR stays. hues!");
    expectChunkingInvariant(*f, text);
    const test::Result r = runChunks(*f, {"a colo", "ur b"});
    EXPECT_EQ(r.text, "a hue b");
}

TEST(RegexReplace, GroupsAndCaseInsensitivity) {
    const auto f = regex({{"pattern", "(\\w+)@(\\w+)\\.com"}, {"replacement", "\\2 at \\1"}, {"max_match", 32}});
    EXPECT_EQ(runWhole(*f, "mail bob@example.com now").text, "mail example at bob now");
    expectChunkingInvariant(*f, "mail bob@example.com now, ann@x.com");
    const auto ci = regex({{"pattern", "hello"}, {"replacement", "bye"}, {"case_sensitive", false}});
    EXPECT_EQ(runWhole(*ci, "Hello HELLO").text, "bye bye");
}

TEST(RegexReplace, HoldsBackAtMostMaxMatchBytes) {
    const auto f = regex({{"pattern", "xyz"}, {"max_match", 4}});
    const test::Result r = runChunks(*f, {"abcdefgh", "ij"});
    EXPECT_EQ(r.emits[0], "abcd");
    EXPECT_EQ(r.emits[1], "ef");
    EXPECT_EQ(r.text, "abcdefghij");
    // The cut never lands inside a UTF-8 character.
    expectChunkingInvariant(*f, "中文xyz文字éé😀xyz");
}

TEST(RegexReplace, EmptyMatchesTerminate) {
    const auto f = regex({{"pattern", "x*"}, {"replacement", "-"}, {"max_match", 16}});
    EXPECT_EQ(runWhole(*f, "abxxc").text, "ab-c");
    expectChunkingInvariant(*f, "abxxc xx 中x");
    EXPECT_EQ(runWhole(*regex({{"pattern", "^"}}), "abc").text, "abc");
}

TEST(RegexReplace, AMegabyteInSmallChunksIsLinear) {
    const auto f = regex({{"pattern", "(a|b)+c"}, {"replacement", "<\\1>"}});
    std::string text;
    while (text.size() < (1u << 20)) text += "abababa zzz abc ";
    auto p = f->make();
    std::string out;
    for (size_t i = 0; i < text.size(); i += 16) out += p->text(std::string_view(text).substr(i, 16)).text;
    out += p->end().text;
    EXPECT_EQ(out.size(), text.size());
    EXPECT_NE(out.find("zzz <b> "), std::string::npos);
}

TEST(RegexReplace, RefusesBadConfigs) {
    expectRefused(makeRegexReplace, {{"type", "regex_replace"}}, "needs \"pattern\"");
    expectRefused(makeRegexReplace, {{"type", "regex_replace"}, {"pattern", "(a"}}, "invalid pattern: missing )");
    expectRefused(makeRegexReplace, {{"type", "regex_replace"}, {"pattern", "a"}, {"replacement", "\\1"}}, "invalid replacement");
    expectRefused(makeRegexReplace, {{"type", "regex_replace"}, {"pattern", "a"}, {"max_match", 0}}, "between 1 and");
    expectRefused(makeRegexReplace, {{"type", "regex_replace"}, {"pattern", "a"}, {"flags", "i"}}, "unknown key 'flags'");
    const auto f = regex({{"pattern", "a+"}});
    EXPECT_EQ(f->describe(), "regex_replace(/a+/)");
    EXPECT_EQ(f->record(), (Json{{"type", "regex_replace"}, {"pattern", "a+"}, {"replacement", ""}, {"max_match", 256}, {"case_sensitive", true}}));
}

std::shared_ptr<const PluginFactory> jsonOut(Json extra = Json::object()) {
    Json c = {{"type", "json_output"}};
    c.update(extra);
    return makeJsonOutput(c);
}

TEST(JsonOutput, PassesAValidObject) {
    const auto f = jsonOut();
    const std::string text = "{\"a\": [1, 2, {\"b\": \"c\"}]}";
    const test::Result r = runWhole(*f, text);
    EXPECT_EQ(r.text, text);
    EXPECT_FALSE(r.end);
    expectChunkingInvariant(*f, text);
}

TEST(JsonOutput, ReportsInvalidJsonAtTheEnd) {
    const auto f = jsonOut();
    const test::Result r = runChunks(*f, {"{\"a\": ", "1,"});
    EXPECT_EQ(r.text, "{\"a\": 1,"); // passed through unchanged
    EXPECT_EQ(r.emits[0], "{\"a\": ");
    EXPECT_TRUE(r.end);
    EXPECT_EQ(r.reason.rfind("json_output: not JSON: parse error", 0), 0u) << r.reason;
    EXPECT_EQ(r.reason.find('\n'), std::string::npos);
    EXPECT_EQ(runWhole(*f, "").reason.rfind("json_output: not JSON: ", 0), 0u);
}

TEST(JsonOutput, SchemaFailuresNameThePath) {
    const Json schema = {{"type", "object"}, {"required", {"items"}},
        {"properties", {{"items", {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"price"}},
            {"properties", {{"price", {{"type", "number"}}}, {"kind", {{"enum", {"a", "b"}}}}}}}}}}}}};
    const auto f = jsonOut({{"schema", schema}});
    EXPECT_FALSE(runWhole(*f, R"({"items": [{"price": 1}, {"price": 2.5, "kind": "a"}]})").end);
    EXPECT_EQ(runWhole(*f, R"({"items": [{"price": 1}, {"price": 2}, {"price": "3"}]})").reason,
              "json_output: schema: $.items[2].price: expected number");
    EXPECT_EQ(runWhole(*f, R"({"items": [{}]})").reason, "json_output: schema: $.items[0]: missing required property \"price\"");
    EXPECT_EQ(runWhole(*f, R"({"items": [{"price": 1, "kind": "c"}]})").reason,
              "json_output: schema: $.items[0].kind: not one of the allowed values");
    EXPECT_EQ(runWhole(*f, "[]").reason, "json_output: schema: $: expected object");
    const auto ints = jsonOut({{"schema", {{"type", "array"}, {"items", {{"type", {"integer", "null"}}}}}}});
    EXPECT_FALSE(runWhole(*ints, "[1, 2.0, null]").end);
    EXPECT_EQ(runWhole(*ints, "[1, 2.5]").reason, "json_output: schema: $[1]: expected integer or null");
}

TEST(JsonOutput, StripsFences) {
    const auto f = jsonOut();
    const std::string text = "```json\n{\"a\": \"`x`\"}\n```\n";
    EXPECT_EQ(runWhole(*f, text).text, "{\"a\": \"`x`\"}");
    EXPECT_FALSE(runWhole(*f, text).end);
    expectChunkingInvariant(*f, text);
    expectChunkingInvariant(*f, "  ```\n[1, 2]\n``` ");
    EXPECT_EQ(runWhole(*f, "  ```\n[1, 2]\n``` ").text, "[1, 2]");
    const test::Result r = runChunks(*f, {"``", "`json\n{", "}\n``", "`"});
    EXPECT_EQ(r.emits[0], "");
    EXPECT_EQ(r.emits[1], "{");
    EXPECT_EQ(r.text, "{}");
    EXPECT_EQ(runWhole(*jsonOut({{"strip_fences", false}}), "```\n{}\n```").text, "```\n{}\n```");
}

TEST(JsonOutput, RefuseModeHoldsEverythingBack) {
    const auto f = jsonOut({{"on_invalid", "refuse"}});
    auto p = f->make();
    EXPECT_EQ(p->text("```json\n{\"a\"").text, "");
    EXPECT_EQ(p->text(": 1}\n```").text, "");
    const Emit e = p->end();
    EXPECT_EQ(e.text, "{\"a\": 1}");
    EXPECT_FALSE(e.end);
    const test::Result bad = runChunks(*f, {"{\"a\":", " 1"});
    EXPECT_EQ(bad.text, "");
    EXPECT_TRUE(bad.end);
    EXPECT_EQ(bad.reason.rfind("json_output: not JSON:", 0), 0u);
}

TEST(JsonOutput, RefusesBadConfigs) {
    expectRefused(makeJsonOutput, {{"type", "json_output"}, {"schema", {{"type", "object"}, {"minProperties", 1}}}},
                  "unsupported keyword \"minProperties\"");
    expectRefused(makeJsonOutput, {{"type", "json_output"}, {"schema", {{"type", "float"}}}}, "\"type\" must be");
    expectRefused(makeJsonOutput, {{"type", "json_output"}, {"schema", {{"properties", {{"a", {{"pattern", "x"}}}}}}}},
                  "schema $.a: unsupported keyword");
    expectRefused(makeJsonOutput, {{"type", "json_output"}, {"on_invalid", "ignore"}}, "\"on_invalid\" must be");
    expectRefused(makeJsonOutput, {{"type", "json_output"}, {"strict", true}}, "unknown key 'strict'");
    EXPECT_EQ(jsonOut({{"schema", {{"type", "object"}}}})->describe(), "json_output(schema, report)");
    EXPECT_EQ(jsonOut()->record(), (Json{{"type", "json_output"}, {"strip_fences", true}, {"on_invalid", "report"}}));
}

} // namespace
} // namespace mb::plugins
