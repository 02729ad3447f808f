// modebench-cli end to end: goldens through `generate --json`, tokenize, info, make-model, and bad input.
#include "cli/cli_runner.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using mb::test::CliResult;
using mb::test::runCli;
using mb::test::slurp;

nlohmann::json parse(const CliResult& r) {
    try {
        return nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not JSON: " << r.out << "\nstderr: " << r.err;
        return {};
    }
}

using mb::test::expectCleanError;
using mb::test::TempDir;

} // namespace

TEST(Cli, GenerateJsonReturnsGoldenIds) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto golden = nlohmann::json::parse(slurp(goldenPath));
    const auto r = runCli({"generate", "--model", model.string(), "--prompt", "Once upon a time", "--max-tokens",
                           "100", "--temperature", "0", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = parse(r);
    EXPECT_EQ(j["prompt_tokens"], golden["generation"][1]["prompt_tokens"]);
    EXPECT_EQ(j["tokens"], golden["generation"][1]["generated_tokens"]);
    EXPECT_EQ("Once upon a time" + j["text"].get<std::string>(), golden["generation"][1]["text"].get<std::string>());
    for (const char* key : {"ttft_ms", "prefill_tok_s", "decode_tok_s"}) {
        ASSERT_TRUE(j.contains(key)) << key;
        EXPECT_GT(j[key].get<double>(), 0.0) << key;
    }
}

TEST(Cli, GenerateStreamsText) {
    MB_REQUIRE_DATA(model, "models/stories260K-f16.gguf");
    const auto r = runCli({"generate", "--model", model.string(), "--prompt", "Once upon a time", "--max-tokens",
                           "20", "--temperature", "0", "--threads", "2"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, ", there was a little girl named Lily. She loved to play outsid\n");
}

TEST(Cli, SampledGenerationIsSeeded) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto run = [&](const char* seed) {
        return parse(runCli({"generate", "--model", model.string(), "--prompt", "Lily", "--max-tokens", "30",
                             "--temperature", "1.0", "--seed", seed, "--json"}))["tokens"];
    };
    EXPECT_EQ(run("7"), run("7"));
    EXPECT_NE(run("7"), run("8"));
}

TEST(Cli, TokenizeVocabOnlyFile) {
    MB_REQUIRE_DATA(vocab, "vocab/ggml-vocab-llama-spm.gguf");
    const auto r = runCli({"tokenize", "--model", vocab.string(), "--text", "Hello world", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(parse(r)["tokens"], nlohmann::json::parse("[1, 15043, 3186]"));
    const auto noBos = runCli({"tokenize", "--model", vocab.string(), "--text", "Hello world", "--no-bos"});
    EXPECT_EQ(noBos.out, "15043 3186\n");
}

TEST(Cli, TokenizeFile) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    std::ofstream(dir / "p.txt") << "Once upon a time";
    const auto r = runCli({"tokenize", "--model", model.string(), "--file", (dir / "p.txt").string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(parse(r)["tokens"], nlohmann::json::parse("[1, 403, 407, 261, 378]"));
}

TEST(Cli, TokenizeParsesSpecialTokensOnlyWhenAsked) {
    MB_REQUIRE_DATA(model, "vocab/ggml-vocab-qwen3.gguf");
    const auto plain = runCli({"tokenize", "--model", model.string(), "--text", "<|im_start|>user", "--json"});
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    EXPECT_EQ(parse(plain)["tokens"], nlohmann::json::parse("[27, 91, 318, 4906, 91, 29, 872]"));
    const auto parsed =
        runCli({"tokenize", "--model", model.string(), "--text", "<|im_start|>user", "--parse-special", "--json"});
    ASSERT_EQ(parsed.exitCode, 0) << parsed.err;
    EXPECT_EQ(parse(parsed)["tokens"], nlohmann::json::parse("[151644, 872]"));
}

TEST(Cli, InfoJson) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto r = runCli({"info", "--model", model.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = parse(r);
    EXPECT_EQ(j["architecture"], "llama");
    EXPECT_EQ(j["context_length"], 512);
    EXPECT_GT(j["parameters"].get<uint64_t>(), 250000u);
    EXPECT_EQ(j["bytes"].get<uint64_t>(), fs::file_size(model));
    ASSERT_TRUE(j["tensors"].is_array());
    EXPECT_EQ(j["tensors"][0]["name"], "token_embd.weight");
    EXPECT_EQ(j["tensors"][0]["type"], "f32");
    EXPECT_EQ(j["tensors"][0]["shape"], nlohmann::json::parse("[64, 512]"));
}

// What differs between architectures, from the file's keys: in the text and in the JSON.
TEST(Cli, InfoPrintsTheArchitecturesKeys) {
    TempDir dir;
    const std::string gemma = (dir / "gemma2.gguf").string(), phi = (dir / "phi3.gguf").string();
    ASSERT_EQ(runCli({"make-model", "--preset", "tiny-gemma2", "--dtype", "f32", "--out", gemma}).exitCode, 0);
    ASSERT_EQ(runCli({"make-model", "--preset", "tiny-phi3", "--dtype", "f32", "--out", phi}).exitCode, 0);
    const auto j = parse(runCli({"info", "--model", gemma, "--json"}));
    EXPECT_EQ(j["architecture"], "gemma2");
    const auto& f = j["architecture_features"];
    EXPECT_NE(f["attention"].get<std::string>().find("soft-cap"), std::string::npos) << f.dump();
    EXPECT_NE(f["attention"].get<std::string>().find("sliding window"), std::string::npos) << f.dump();
    EXPECT_NE(f["output"].get<std::string>().find("final soft-cap"), std::string::npos) << f.dump();
    EXPECT_NE(f["ffn"].get<std::string>().find("GELU-tanh"), std::string::npos) << f.dump();
    EXPECT_EQ(j["config"]["head_dim"], 32) << j["config"].dump();
    const auto text = runCli({"info", "--model", phi});
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("attn_qkv.weight (fused)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("rope:"), std::string::npos) << text.out;
}

TEST(Cli, MakeModelThenGenerate) {
    TempDir dir;
    const std::string path = (dir / "tiny.gguf").string();
    const auto made = runCli({"make-model", "--preset", "tiny", "--dtype", "q4_0", "--out", path, "--json"});
    ASSERT_EQ(made.exitCode, 0) << made.err;
    EXPECT_EQ(parse(made)["path"], path);
    const auto again = runCli({"make-model", "--preset", "tiny", "--out", path});
    expectCleanError(again, "exists");
    const auto gen = runCli({"generate", "--model", path, "--prompt", "hello", "--max-tokens", "5", "--json"});
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    EXPECT_LE(parse(gen)["tokens"].size(), 5u);
}

TEST(Cli, BadInputGivesOneLineAndExitCode2) {
    TempDir dir;
    expectCleanError(runCli({"generate", "--model", (dir / "missing.gguf").string(), "--prompt", "x"}), "not found");
    std::ofstream(dir / "text.gguf") << "this is not a model";
    expectCleanError(runCli({"generate", "--model", (dir / "text.gguf").string(), "--prompt", "x"}), "magic");
    expectCleanError(runCli({"info", "--model", (dir / "text.gguf").string()}), "magic");
    expectCleanError(runCli({"make-model", "--preset", "gpt-5", "--out", (dir / "x.gguf").string()}), "unknown preset");
    expectCleanError(runCli({"generate", "--prompt", "x"}), "--model");
    expectCleanError(runCli({"frobnicate"}), "frobnicate");
}

TEST(Cli, PromptLongerThanContextIsRejected) {
    MB_REQUIRE_DATA(model, "models/stories260K-f16.gguf"); // context 128 in this file
    std::string prompt;
    for (int i = 0; i < 200; ++i) prompt += "Lily ";
    expectCleanError(runCli({"generate", "--model", model.string(), "--prompt", prompt}), "context");
}

TEST(Cli, UnsupportedArchitectureIsRejected) {
    MB_REQUIRE_DATA(vocab, "vocab/ggml-vocab-gpt-2.gguf"); // architecture gpt2, no tensors
    expectCleanError(runCli({"generate", "--model", vocab.string(), "--prompt", "x"}), "architecture");
}

TEST(Cli, HelpAndDevices) {
    const auto help = runCli({"--help"});
    EXPECT_EQ(help.exitCode, 0);
    for (const char* cmd : {"generate", "tokenize", "info", "make-model", "devices"})
        EXPECT_NE(help.out.find(cmd), std::string::npos) << cmd;
    const auto dev = runCli({"devices", "--json"});
    ASSERT_EQ(dev.exitCode, 0) << dev.err;
    const auto j = parse(dev);
    EXPECT_TRUE(j["cuda_compiled"].is_boolean());
    EXPECT_EQ(j["devices"][0]["id"], "cpu");
}

TEST(Cli, CompareWritesBothSides) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string out = (dir / "cmp.json").string();
    const auto r = runCli({"compare", "--model", model.string(), "--workload", "shared-prefix", "--groups", "2",
                           "--per-group", "3", "--prefix-tokens", "48", "--suffix-tokens", "8", "--output-tokens",
                           "5", "--threads", "2", "--json", out, "--no-store"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("TTFT p50"), std::string::npos) << r.out;
    const auto j = nlohmann::json::parse(slurp(out));
    for (const char* side : {"a", "b"}) {
        const auto& s = j[side];
        EXPECT_TRUE(s.contains("profile")) << side;
        for (const char* key : {"requests", "errors", "rejected", "truncated", "ttft_ms", "tpot_ms", "itl_ms",
                                "e2e_ms", "output_tokens_per_s", "requests_per_s", "prefix_cache", "kv_bytes_peak"})
            EXPECT_TRUE(s["summary"].contains(key)) << side << " " << key;
        for (const char* p : {"p50", "p90", "p95", "p99", "mean"}) EXPECT_TRUE(s["summary"]["ttft_ms"].contains(p));
        ASSERT_EQ(s["requests"].size(), 6u);
        for (const char* key : {"id", "prompt_tokens", "cached_tokens", "truncated_tokens", "output_tokens",
                                "ttft_ms", "e2e_ms", "status", "tokens"})
            EXPECT_TRUE(s["requests"][0].contains(key)) << key;
    }
    EXPECT_EQ(j["a"]["profile"]["name"], "fast");
    EXPECT_EQ(j["b"]["profile"]["name"], "regular");
    EXPECT_GT(j["a"]["summary"]["prefix_cache"]["hit_rate"].get<double>(), 0.5);
    EXPECT_EQ(j["b"]["summary"]["prefix_cache"]["hit_rate"].get<double>(), 0.0);
}

TEST(Cli, ComparePrecisionCheckSitsBesideTheLatencyFiguresAndIsStored) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string out = (dir / "cmp.json").string(), db = (dir / "runs.db").string();
    const auto r = runCli({"compare", "--model", model.string(), "--workload", "chat", "--requests", "3",
                           "--input-tokens", "20", "--output-tokens", "4", "--precision-check", "2",
                           "--precision-gen-tokens", "5", "--json", out, "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("agreement vs f32"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("precision A/B against f32: 2/2 prompts"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(slurp(out));
    EXPECT_EQ(j["a"]["summary"]["precision"]["precision"], "mixed"); // the fast profile's
    EXPECT_EQ(j["b"]["summary"]["precision"]["precision"], "native");
    EXPECT_EQ(j["b"]["summary"]["precision"]["positions"], 2 * 5);
    // The stored run carries it into reports.
    const auto md = runCli({"report", "--run", "1", "--format", "md", "--db", db, "--out", (dir / "r.md").string()});
    ASSERT_EQ(md.exitCode, 0) << md.err;
    EXPECT_NE(slurp((dir / "r.md").string()).find("Precision A/B"), std::string::npos);
    expectCleanError(runCli({"compare", "--model", model.string(), "--precision-check", "-1"}), "precision-check");
}

TEST(Cli, CompareRejectsBadProfilesAndWorkloads) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    std::ofstream(dir / "p.json") << R"({"base": "fast", "max_contxt": 9})";
    expectCleanError(runCli({"compare", "--model", model.string(), "--a", (dir / "p.json").string()}), "max_contxt");
    expectCleanError(runCli({"compare", "--model", model.string(), "--workload", "nope"}), "nope");
    expectCleanError(runCli({"compare", "--model", model.string(), "--concurrency", "2", "--rate", "3"}), "excludes");
}

TEST(Cli, QuantizeKeepsGoldenAtF16AndFallsBackForOddRows) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto golden = nlohmann::json::parse(slurp(goldenPath));
    TempDir dir;
    const std::string f16 = (dir / "f16.gguf").string(), mixed = (dir / "mixed.gguf").string();
    ASSERT_EQ(runCli({"quantize", "--in", model.string(), "--out", f16, "--type", "f16"}).exitCode, 0);
    const auto gen = runCli({"generate", "--model", f16, "--prompt", "Once upon a time", "--max-tokens", "100",
                             "--temperature", "0", "--json"});
    ASSERT_EQ(gen.exitCode, 0) << gen.err;
    EXPECT_EQ(parse(gen)["tokens"], golden["generation"][1]["generated_tokens"]);

    ASSERT_EQ(runCli({"quantize", "--in", model.string(), "--out", mixed, "--type", "mixed"}).exitCode, 0);
    const auto info = parse(runCli({"info", "--model", mixed, "--json"}));
    std::map<std::string, std::string> types;
    for (const auto& t : info["tensors"]) types[t["name"]] = t["type"];
    EXPECT_EQ(types["token_embd.weight"], "f16");
    EXPECT_EQ(types["blk.0.attn_q.weight"], "q8_0");
    EXPECT_EQ(types["blk.0.ffn_down.weight"], "f16"); // 172 columns: no whole Q8_0 blocks
    EXPECT_EQ(types["blk.0.attn_norm.weight"], "f32");

    expectCleanError(runCli({"quantize", "--in", model.string(), "--out", mixed, "--type", "mixed"}), "exists");
    expectCleanError(runCli({"quantize", "--in", model.string(), "--out", (dir / "x.gguf").string(), "--type", "q2"}),
                     "q2");
}

TEST(Cli, BenchReportsPrefillAndDecodeSeparately) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto r = runCli({"bench", "--model", model.string(), "--prompt-tokens", "32", "--gen-tokens", "16",
                           "--repetitions", "2", "--threads", "2", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = parse(r);
    for (const char* key : {"prefill_tok_s", "decode_tok_s"}) {
        EXPECT_GT(j[key]["mean"].get<double>(), 0.0) << key;
        EXPECT_GE(j[key]["std"].get<double>(), 0.0) << key;
        EXPECT_EQ(j[key]["runs"].size(), 2u) << key;
    }
    EXPECT_GT(j["model_bytes"].get<uint64_t>(), 0u);
    EXPECT_EQ(j["threads"], 2);
    expectCleanError(runCli({"bench", "--model", model.string(), "--prompt-tokens", "500", "--gen-tokens", "100"}),
                     "context");
}

TEST(Cli, PerplexityReportsWindows) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto golden = nlohmann::json::parse(slurp(goldenPath));
    TempDir dir;
    std::ofstream(dir / "t.txt") << golden["generation"][1]["text"].get<std::string>();
    const auto r = runCli({"perplexity", "--model", model.string(), "--text", (dir / "t.txt").string(), "--context",
                           "32", "--threads", "2", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = parse(r);
    EXPECT_GT(j["perplexity"].get<double>(), 1.0);
    EXPECT_LT(j["perplexity"].get<double>(), 10.0);
    EXPECT_GT(j["tokens"].get<int64_t>(), 100);
    EXPECT_EQ(j["context"], 32);
    EXPECT_GE(j["windows"].get<int64_t>(), 4);
    std::ofstream(dir / "empty.txt") << "\n";
    expectCleanError(runCli({"perplexity", "--model", model.string(), "--text", (dir / "empty.txt").string()}),
                     "empty");
    expectCleanError(runCli({"perplexity", "--model", model.string(), "--text", (dir / "missing.txt").string()}),
                     "missing.txt");
}

TEST(Cli, ComparePrecisionOfF16AgainstF32) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(f16, "models/stories260K-f16.gguf");
    TempDir dir;
    std::ofstream(dir / "p.txt") << "Once upon a time\n\nLily and Tom went\n";
    std::ofstream(dir / "p.jsonl") << R"({"prompt": "Once upon a time"})" << '\n' << R"({"prompt": "The cat"})" << '\n';
    const auto r = runCli({"compare-precision", "--reference", model.string(), "--candidate", f16.string(),
                           "--prompts", (dir / "p.txt").string(), "--gen-tokens", "16", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = parse(r);
    for (const char* key : {"agreement", "mean_kl", "reference_perplexity", "candidate_perplexity"})
        ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GE(j["agreement"].get<double>(), 0.95);
    EXPECT_GE(j["mean_kl"].get<double>(), 0.0);
    EXPECT_EQ(j["positions"], 32);
    EXPECT_EQ(j["prompts"], 2);
    const auto jl = parse(runCli({"compare-precision", "--reference", model.string(), "--candidate", model.string(),
                                  "--prompts", (dir / "p.jsonl").string(), "--gen-tokens", "8", "--json"}));
    EXPECT_EQ(jl["prompts"], 2);
    EXPECT_EQ(jl["agreement"], 1.0);
    expectCleanError(runCli({"compare-precision", "--reference", model.string(), "--candidate",
                             (dir / "missing.gguf").string(), "--prompts", (dir / "p.txt").string()}),
                     "missing.gguf");
    const std::string other = (dir / "s15.gguf").string(); // vocabulary 32000, not 512
    ASSERT_EQ(runCli({"make-model", "--preset", "stories15m", "--dtype", "q4_0", "--out", other}).exitCode, 0);
    expectCleanError(runCli({"compare-precision", "--reference", model.string(), "--candidate", other, "--prompts",
                             (dir / "p.txt").string()}),
                     "vocabulary");
}

// --device: a bad name is a usage error; cuda without a GPU (CI) says so once and runs on the CPU.
TEST(Cli, DeviceOptionFallsBackToCpuOnceOrRefuses) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto bad = runCli({"generate", "--model", model.string(), "--prompt", "Once", "--device", "tpu:0"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("--device"), std::string::npos) << bad.err;

    const auto devices = runCli({"devices", "--json"});
    ASSERT_EQ(devices.exitCode, 0) << devices.err;
    const auto list = parse(devices);
    const bool haveGpu = list["devices"].size() > 1;
    const auto r = runCli({"bench", "--model", model.string(), "--prompt-tokens", "8", "--gen-tokens", "4",
                           "--repetitions", "1", "--threads", "1", "--device", "cuda:0", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = parse(r);
    if (haveGpu) {
        EXPECT_EQ(j["device"], "cuda:0");
    } else {
        EXPECT_EQ(j["device"], "cpu");
        const size_t first = r.err.find("using the CPU");
        ASSERT_NE(first, std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("using the CPU", first + 1), std::string::npos) << "said more than once: " << r.err;
    }
}
