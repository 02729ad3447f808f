// generate --mmproj --image: llava-cli's greedy tokens on the tiny llama, and clear errors for bad input.
#include "cli_runner.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace {

using mb::test::runCli;
using Json = nlohmann::json;

TEST(ImageCli, GenerateWithAnImageGivesLlavaClisTokens) {
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    MB_REQUIRE_DATA(image, "mm/images/grad64.png");
    MB_REQUIRE_DATA(golden, "mm/golden/lm_kvf32/grad64.lm.json");
    const auto r = runCli({"generate", "-m", lm.string(), "--mmproj", mmproj.string(), "--image", image.string(), "-p",
                           "Describe the image.", "-n", "16", "--temperature", "0", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const Json j = Json::parse(r.out);
    EXPECT_EQ(j["tokens"], Json::parse(std::ifstream(golden))["greedy_tokens"]);
    EXPECT_EQ(j["image_tokens"], 16);
    EXPECT_GT(j["encode_ms"].get<double>(), 0.0);
}

TEST(ImageCli, BadImagesAndMismatchedEncodersAreClearErrors) {
    MB_REQUIRE_DATA(lm, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(small, "models/stories260K.gguf");
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    MB_REQUIRE_DATA(image, "mm/images/grad64.png");
    mb::test::TempDir dir;
    const std::string bad = (dir / "bad.png").string();
    std::ofstream(bad) << "\x89PNG\r\n\x1a\nnot really";
    const std::vector<std::string> base = {"generate", "-m", lm.string(), "-p", "x", "-n", "2"};
    auto with = [&](std::vector<std::string> extra, const std::string& model = "") {
        std::vector<std::string> args = base;
        if (!model.empty()) args[2] = model;
        args.insert(args.end(), extra.begin(), extra.end());
        return runCli(args);
    };
    mb::test::expectCleanError(with({"--image", image.string()}), "--image needs --mmproj");
    mb::test::expectCleanError(with({"--mmproj", mmproj.string(), "--image", bad}), "bad.png");
    mb::test::expectCleanError(with({"--mmproj", mmproj.string(), "--image", image.string()}, small.string()),
                               "projects to 256 features but the model's embedding width is 64");
    mb::test::expectCleanError(with({"--mmproj", lm.string(), "--image", image.string()}), "clip");
    std::vector<std::string> twoMarkers = {"generate", "-m", lm.string(), "-p", "<image><image>", "-n", "2",
                                           "--mmproj", mmproj.string(), "--image", image.string()};
    mb::test::expectCleanError(runCli(twoMarkers), "2 <image> markers but 1 images");
}

} // namespace
