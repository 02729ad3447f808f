// pii_mask and trim_format: each kind and rule, across chunk boundaries, non-matches, CJK text.
#include "plugin_test_util.h"

#include "plugins/builtins.h"

#include <gtest/gtest.h>

namespace mb::plugins {
namespace {

using Json = nlohmann::json;
using test::expectChunkingInvariant;
using test::runChunks;
using test::runWhole;

std::shared_ptr<const PluginFactory> pii(Json extra = Json::object()) {
    Json c = {{"type", "pii_mask"}};
    c.update(extra);
    return makePiiMask(c);
}

std::string masked(const std::string& text) { return runWhole(*pii(), text).text; }

TEST(PiiMask, Emails) {
    EXPECT_EQ(masked("write to john.doe+tag@mail.example.co.uk. thanks"), "write to [EMAIL]. thanks");
    EXPECT_EQ(masked("a_b%c-d@x-y.org"), "[EMAIL]");
    EXPECT_EQ(masked("not@mail, a@b.c, @example.com, x@.com"), "not@mail, a@b.c, @example.com, x@.com");
    EXPECT_EQ(masked("邮箱是john@example.com谢谢"), "邮箱是[EMAIL]谢谢");
    expectChunkingInvariant(*pii(), "邮箱是john@example.com谢谢，或者 ann.lee@corp.cn。");
}

TEST(PiiMask, Phones) {
    EXPECT_EQ(masked("call +1 (555) 123-4567 now"), "call [PHONE] now");
    EXPECT_EQ(masked("call 555-123-4567."), "call [PHONE].");
    EXPECT_EQ(masked("手机 +86 138 0013 8000 谢谢"), "手机 [PHONE] 谢谢");
    EXPECT_EQ(masked("(555) 123-4567 or 555.123.4567"), "[PHONE] or [PHONE]");
    expectChunkingInvariant(*pii(), "call +1 (555) 123-4567 or 555.123.4567, +86 138 0013 8000");
}

TEST(PiiMask, IdNumbers) {
    EXPECT_EQ(masked("SSN 123-45-6789 on file"), "SSN [ID] on file");
    EXPECT_EQ(masked("card 1234 5678 9012 3456."), "card [ID].");
    EXPECT_EQ(masked("身份证号11010519491231002X。"), "身份证号[ID]。");
    EXPECT_EQ(masked("account 5551234567"), "account [ID]"); // one unseparated run: an ID
    EXPECT_EQ(runWhole(*pii({{"min_id_digits", 12}}), "id 123-45-6789").text, "id 123-45-6789");
    expectChunkingInvariant(*pii(), "SSN 123-45-6789, card 1234 5678 9012 3456, 11010519491231002X");
}

TEST(PiiMask, LeavesNumbersThatAreNotPiiAlone) {
    for (const std::string text : {"in 2024 it cost 12.50", "from 2019-2024 we grew 3.14159265358979%",
                                   "1,234,567,890 people", "order #12345 of 10 20 30 40", "v1.2.3 and abc123456789"}) {
        EXPECT_EQ(masked(text), text);
        expectChunkingInvariant(*pii(), text);
    }
}

TEST(PiiMask, HoldsBackOnlyARunThatCouldGrow) {
    const test::Result r = runChunks(*pii(), {"reach me at jo", "hn@exam", "ple.com or 555-", "123-4567 ok"});
    EXPECT_EQ(r.emits[0], "reach me at ");
    EXPECT_EQ(r.emits[1], "");
    EXPECT_EQ(r.emits[2], "[EMAIL] or ");
    EXPECT_EQ(r.text, "reach me at [EMAIL] or [PHONE] ok");
}

TEST(PiiMask, KindsAndMasks) {
    const auto f = pii({{"kinds", {"email"}}, {"mask", {{"email", "<e>"}}}});
    EXPECT_EQ(runWhole(*f, "a@b.io 555-123-4567").text, "<e> 555-123-4567");
    const auto phones = pii({{"kinds", {"id"}}});
    EXPECT_EQ(runWhole(*phones, "555-123-4567 123-45-6789").text, "555-123-4567 [ID]"); // a phone stays a phone
    EXPECT_EQ(f->describe(), "pii_mask(email)");
    EXPECT_EQ(pii()->record(), (Json{{"type", "pii_mask"}, {"kinds", {"email", "phone", "id"}},
                                     {"mask", {{"email", "[EMAIL]"}, {"phone", "[PHONE]"}, {"id", "[ID]"}}}, {"min_id_digits", 9}}));
    auto fails = [](Json c, const std::string& part) {
        c["type"] = "pii_mask";
        try {
            makePiiMask(c);
            ADD_FAILURE() << "accepted " << c.dump();
        } catch (const PluginError& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    fails({{"kinds", {"ssn"}}}, "unknown kind \"ssn\"");
    fails({{"mask", {{"ip", "x"}}}}, "unknown kind \"ip\"");
    fails({{"mask", "x"}}, "\"mask\" must be an object");
    fails({{"min_id_digits", 2}}, "between 4 and 64");
    fails({{"kind", {"email"}}}, "unknown key 'kind'");
}

std::shared_ptr<const PluginFactory> trim(Json extra = Json::object()) {
    Json c = {{"type", "trim_format"}};
    c.update(extra);
    return makeTrimFormat(c);
}

std::string plain(const std::string& text) { return runWhole(*trim(), text).text; }

TEST(TrimFormat, MarkdownRules) {
    EXPECT_EQ(plain("# Title\n## Sub ##\n#hashtag"), "Title\nSub\n#hashtag");
    EXPECT_EQ(plain("some **bold**, __strong__, *em* and _it_ text"), "some bold, strong, em and it text");
    EXPECT_EQ(plain("snake_case_name and 2*3*4 stay"), "snake_case_name and 2*3*4 stay");
    EXPECT_EQ(plain("run `ls -l` or ``a`b``"), "run ls -l or a`b");
    EXPECT_EQ(plain("see [the docs](https://x.io/a_b) and ![a cat](cat.png)"), "see the docs and a cat");
    EXPECT_EQ(plain("- one\n* two\n+ three\n  - nested"), "- one\n- two\n- three\n  - nested");
    EXPECT_EQ(plain("> quoted\n>> twice"), "quoted\ntwice");
    EXPECT_EQ(plain("above\n\n---\n\nbelow\n* * *"), "above\n\nbelow");
    EXPECT_EQ(plain("```python\nx  =  **kw\n```\nafter"), "x  =  **kw\nafter"); // code kept as is
}

TEST(TrimFormat, WhitespaceRules) {
    EXPECT_EQ(plain("\n\n  \nfirst   line \t here  \n\n\n\nsecond\n\n\n"), "first line here\n\nsecond");
    EXPECT_EQ(plain("  indented  text"), "  indented text");
}

TEST(TrimFormat, AcrossChunksAndCjk) {
    const std::string text = "# 标题\n\n这是**重要**的内容，中文  文本。\n- 列表项\n\n\n[链接](http://a.cn)\n```\n代码\n```\n结束  ";
    EXPECT_EQ(plain(text), "标题\n\n这是重要的内容，中文 文本。\n- 列表项\n\n链接\n代码\n结束");
    expectChunkingInvariant(*trim(), text);
    expectChunkingInvariant(*trim(), "a **b** _c_\r\n\n\n> d  e\n---\n`f` ");
    const test::Result r = runChunks(*trim(), {"# He", "llo\nwor", "ld"});
    EXPECT_EQ(r.emits[0], "");
    EXPECT_EQ(r.emits[1], "Hello");
    EXPECT_EQ(r.text, "Hello\nworld");
}

TEST(TrimFormat, OptionsAndConfig) {
    EXPECT_EQ(runWhole(*trim({{"markdown", false}}), "# keep  **this**  \n\n\nx").text, "# keep **this**\n\nx");
    EXPECT_EQ(runWhole(*trim({{"whitespace", false}}), "**a**  b \n\n\nc\n").text, "a  b \n\n\nc\n");
    EXPECT_EQ(trim()->describe(), "trim_format(markdown, whitespace)");
    EXPECT_EQ(trim()->record(), (Json{{"type", "trim_format"}, {"markdown", true}, {"whitespace", true}}));
    EXPECT_THROW(makeTrimFormat({{"type", "trim_format"}, {"markdown", 1}}), PluginError);
    EXPECT_THROW(makeTrimFormat({{"type", "trim_format"}, {"tables", true}}), PluginError);
}

} // namespace
} // namespace mb::plugins
