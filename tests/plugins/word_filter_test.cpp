// word_filter: masking, dropping and refusing across chunk boundaries, case, whole words, CJK, Unicode edges.
#include "plugin_test_util.h"

#include "plugins/builtins.h"

#include <gtest/gtest.h>

namespace mb::plugins {
namespace {

using Json = nlohmann::json;
using test::expectChunkingInvariant;
using test::runChunks;
using test::runWhole;

std::shared_ptr<const PluginFactory> filter(Json words, Json extra = Json::object()) {
    Json c = {{"type", "word_filter"}, {"words", std::move(words)}};
    c.update(extra);
    return makeWordFilter(c);
}

TEST(WordFilter, MasksAWordSplitAcrossTwoAndThreeChunks) {
    const auto f = filter({"secret"});
    const test::Result two = runChunks(*f, {"the sec", "ret plan"});
    EXPECT_EQ(two.text, "the ****** plan");
    EXPECT_EQ(two.emits[0], "the "); // "sec" could become the word: held
    const test::Result three = runChunks(*f, {"a se", "cr", "et."});
    EXPECT_EQ(three.text, "a ******.");
    for (const std::string& e : three.emits) EXPECT_EQ(e.find("se"), std::string::npos) << e;
}

TEST(WordFilter, NeverEmitsPartOfAWordWhateverTheChunking) {
    const auto f = filter({"secret", "top secret"});
    const std::string text = "Top Secret: the secret is secretive, not SECRET. secret";
    EXPECT_EQ(runWhole(*f, text).text, "**********: the ****** is secretive, not ******. ******");
    expectChunkingInvariant(*f, text);
}

TEST(WordFilter, CaseRules) {
    EXPECT_EQ(runWhole(*filter({"Bad"}), "bad BAD bAd").text, "*** *** ***");
    EXPECT_EQ(runWhole(*filter({"Bad"}, {{"case_sensitive", true}}), "bad Bad BAD").text, "bad *** BAD");
    // Folding covers Latin-1, Greek and Cyrillic too.
    EXPECT_EQ(runWhole(*filter({"ÉCOLE"}), "une école").text, "une *****");
    EXPECT_EQ(runWhole(*filter({"σοφία"}), "ΣΟΦΊΑ").text, "*****");
    EXPECT_EQ(runWhole(*filter({"привет"}), "ПРИВЕТ мир").text, "****** мир");
}

TEST(WordFilter, WholeWordsOnly) {
    const auto f = filter({"ass"});
    EXPECT_EQ(runWhole(*f, "the assistant in class said ass").text, "the assistant in class said ***");
    EXPECT_EQ(runWhole(*f, "ass, (ass) ass2").text, "***, (***) ass2");
    expectChunkingInvariant(*f, "the assistant in class said ass");
    EXPECT_EQ(runWhole(*filter({"ass"}, {{"whole_word", false}}), "class").text, "cl***");
}

TEST(WordFilter, AMatchAtTheEndWaitsForTheNextCharacter) {
    const auto f = filter({"ass"});
    const test::Result r = runChunks(*f, {"an ass", "istant"});
    EXPECT_EQ(r.emits[0], "an ");
    EXPECT_EQ(r.text, "an assistant");
    EXPECT_EQ(runChunks(*f, {"an ass", ""}).text, "an ***"); // end() decides
}

TEST(WordFilter, ChinesePhraseIsASubstringMatch) {
    const auto f = filter({"敏感词"});
    EXPECT_EQ(runWhole(*f, "这是敏感词测试").text, "这是***测试");
    const test::Result r = runChunks(*f, {"这是敏", "感", "词测试"});
    EXPECT_EQ(r.text, "这是***测试");
    EXPECT_EQ(r.emits[0], "这是");
    expectChunkingInvariant(*f, "这是敏感词测试，敏感词。敏感");
}

TEST(WordFilter, MixedChineseAndLatin) {
    const auto f = filter({"badword", "坏词"});
    EXPECT_EQ(runWhole(*f, "这是badword和坏词, not badwords").text, "这是*******和**, not badwords");
    expectChunkingInvariant(*f, "这是badword和坏词, not badwords 坏");
}

TEST(WordFilter, UnicodeEdges) {
    const auto f = filter({"cafe", "bad"});
    // A combining acute accent continues the word: "café" spelt e + U+0301 is not "cafe".
    EXPECT_EQ(runWhole(*f, "cafe\xCC\x81 cafe").text, "cafe\xCC\x81 ****");
    EXPECT_EQ(runWhole(*f, "bad😀bad").text, "***😀***");
    EXPECT_EQ(runWhole(*f, "bad").text, "***"); // the whole text, start and end
    expectChunkingInvariant(*f, "bad😀bad cafe\xCC\x81 cafe 😀");
    // A chunk that ends inside a character: nothing half emitted.
    const test::Result r = runChunks(*f, {"ok \xF0\x9F", "\x98\x80 bad", "", " x"});
    EXPECT_EQ(r.emits[0], "ok ");
    EXPECT_EQ(r.text, "ok 😀 *** x");
    // A text cut off inside a character keeps its bytes.
    EXPECT_EQ(runChunks(*f, {"bad \xE4\xB8"}).text, "*** \xE4\xB8");
}

TEST(WordFilter, LongestMatchAtTheLeftmostPosition) {
    const auto f = filter({"new", "new york", "york city"}, {{"mask", "[X]"}});
    EXPECT_EQ(runWhole(*f, "new york city").text, "[X] city");
    EXPECT_EQ(runWhole(*f, "new yorker").text, "[X] yorker");
    expectChunkingInvariant(*f, "new york city, new yorker, new");
}

TEST(WordFilter, Drop) {
    const auto f = filter({"um"}, {{"action", "drop"}});
    EXPECT_EQ(runWhole(*f, "so um I think um").text, "so  I think ");
    expectChunkingInvariant(*f, "so um I think um");
}

TEST(WordFilter, RefuseEndsTheResponseAfterTheTextBefore) {
    const auto f = filter({"forbidden"}, {{"action", "refuse"}});
    auto p = f->make();
    EXPECT_EQ(p->text("this is for").text, "this is ");
    const Emit e = p->text("bidden and more");
    EXPECT_TRUE(e.end);
    EXPECT_EQ(e.text, "");
    EXPECT_EQ(e.reason, "refused: matched a filtered word");
    EXPECT_EQ(p->text(" later").text, "");
    EXPECT_EQ(p->end().text, "");
    expectChunkingInvariant(*f, "this is forbidden and more");
}

TEST(WordFilter, CustomMaskReplacesTheWholeMatch) {
    EXPECT_EQ(runWhole(*filter({"darn"}, {{"mask", "[removed]"}}), "oh darn it").text, "oh [removed] it");
}

TEST(WordFilter, DescribesAndRecords) {
    const auto f = filter({"a", "b", "c"});
    EXPECT_EQ(f->type(), "word_filter");
    EXPECT_EQ(f->describe(), "word_filter(3 words, mask)");
    const Json r = f->record();
    EXPECT_EQ(r["type"], "word_filter");
    EXPECT_EQ(r["words"].size(), 3u);
    EXPECT_EQ(r["action"], "mask");
    EXPECT_EQ(r["case_sensitive"], false);
    EXPECT_EQ(r["whole_word"], true);
}

TEST(WordFilter, RejectsBadConfigs) {
    auto fails = [](Json c, const std::string& part) {
        try {
            makeWordFilter(c);
            ADD_FAILURE() << "accepted " << c.dump();
        } catch (const PluginError& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    fails({{"type", "word_filter"}}, "needs \"words\"");
    fails({{"type", "word_filter"}, {"words", Json::array()}}, "non-empty list");
    fails({{"type", "word_filter"}, {"words", {""}}}, "non-empty strings");
    fails({{"type", "word_filter"}, {"words", {1}}}, "non-empty strings");
    fails({{"type", "word_filter"}, {"words", {"a"}}, {"colour", 1}, {"size", 2}}, "unknown key 'colour', 'size'");
    fails({{"type", "word_filter"}, {"words", {"a"}}, {"action", "burn"}}, "\"action\" must be");
    fails({{"type", "word_filter"}, {"words", {"a"}}, {"action", "drop"}, {"mask", "x"}}, "only to the action");
    fails({{"type", "word_filter"}, {"words", {"a"}}, {"whole_word", "yes"}}, "true or false");
    fails({{"type", "word_filter"}, {"words", {"\xFF"}}}, "not valid UTF-8");
}

} // namespace
} // namespace mb::plugins
