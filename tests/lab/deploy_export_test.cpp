// Deployment export: the built-in profiles' options on each server, the model's context as a bound,
// notes for knobs without an option, the autoscaler's figures (and "not measured"), the files
// written.
#include "lab/deploy_export.h"
#include "selection_fixtures.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace mb::lab;
using mb::engine::Profile;

namespace {

namespace fs = std::filesystem;

DeployTarget targetOf(const Profile& p, int64_t modelContext = 0,
                      std::string model = "/models/m.gguf") {
    DeployTarget t;
    t.mode = p.base == "fast" ? Mode::Fast : Mode::Regular;
    t.profile = p;
    t.label = "a";
    t.modelPath = std::move(model);
    t.modelContext = modelContext;
    t.recommended = true;
    t.verdict = "recommended";
    t.headline = "a headline";
    t.runIds = {7};
    return t;
}

const ServerLaunch& server(const std::vector<ServerLaunch>& all, const std::string& id) {
    for (const auto& s : all)
        if (s.id == id) return s;
    throw std::out_of_range(id);
}

std::string command(const DeployTarget& t, const std::string& id) {
    return commandLine(server(launchSettings(t), id));
}

// Whether `option` ("--max-num-seqs 8") stands in `cmd` as whole words.
bool has(const std::string& cmd, const std::string& option) {
    return (" " + cmd + " ").find(" " + option + " ") != std::string::npos;
}

const KnobMapping& knob(const ServerLaunch& s, const std::string& name) {
    for (const auto& k : s.knobs)
        if (k.knob == name) return k;
    throw std::out_of_range(s.id + ": " + name);
}

const DeployFile& file(const std::vector<DeployFile>& files, const std::string& name) {
    for (const auto& f : files)
        if (f.name == name) return f;
    throw std::out_of_range(name);
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

TEST(DeployExport, FastBuiltinMapsToItsOptions) {
    const DeployTarget t = targetOf(Profile::fast());
    const std::string vllm = command(t, "vllm");
    for (const char* o : {"--enable-prefix-caching", "--max-num-seqs 1", "--max-model-len 32768",
                          "--max-num-batched-tokens 32768", "--block-size 16", "--dtype float16"})
        EXPECT_TRUE(has(vllm, o)) << o << " in " << vllm;
    EXPECT_FALSE(has(vllm, "--enable-chunked-prefill")) << "fast prefills whole prompts: " << vllm;
    EXPECT_EQ(
        vllm.rfind("vllm serve \"$MODEL\" --served-model-name m --host \"$HOST\" --port \"$PORT\"",
                   0),
        0u)
        << vllm;

    const std::string sglang = command(t, "sglang");
    for (const char* o :
         {"--max-running-requests 1", "--context-length 32768", "--chunked-prefill-size -1",
          "--page-size 16", "--max-queued-requests 1024"})
        EXPECT_TRUE(has(sglang, o)) << o << " in " << sglang;
    EXPECT_FALSE(has(sglang, "--disable-radix-cache")) << sglang;

    const std::string llama = command(t, "llama-server");
    for (const char* o : {"-np 1", "--ctx-size 32768", "--cache-reuse 16", "--metrics"})
        EXPECT_TRUE(has(llama, o)) << o << " in " << llama;

    const std::string serve = command(t, "modebench-serve");
    EXPECT_TRUE(has(serve, "--profile \"$HERE/profile.json\"")) << serve;
}

TEST(DeployExport, RegularBuiltinMapsToItsOptions) {
    const DeployTarget t = targetOf(Profile::regular());
    const std::string vllm = command(t, "vllm");
    for (const char* o : {"--no-enable-prefix-caching", "--max-num-seqs 8",
                          "--max-num-batched-tokens 2048", "--enable-chunked-prefill",
                          "--long-prefill-token-threshold 512", "--max-model-len 131072"})
        EXPECT_TRUE(has(vllm, o)) << o << " in " << vllm;
    EXPECT_FALSE(has(vllm, "--block-size 16"))
        << "per_request KV has no paged-pool option: " << vllm;
    EXPECT_FALSE(has(vllm, "--dtype float16")) << "native precision keeps the checkpoint's dtype";

    const std::string sglang = command(t, "sglang");
    for (const char* o : {"--disable-radix-cache", "--max-running-requests 8",
                          "--context-length 131072", "--chunked-prefill-size 512"})
        EXPECT_TRUE(has(sglang, o)) << o << " in " << sglang;

    const std::string llama = command(t, "llama-server");
    // llama-server divides --ctx-size among the slots: 8 slots x 131,072 tokens each.
    for (const char* o : {"-np 8", "--ctx-size 1048576", "-b 2048"})
        EXPECT_TRUE(has(llama, o)) << o << " in " << llama;
    EXPECT_EQ(llama.find("--cache-reuse"), std::string::npos) << llama;
}

TEST(DeployExport, TheModelsContextBoundsTheServersContext) {
    const DeployTarget regular = targetOf(Profile::regular(), 4096);
    EXPECT_EQ(deployContext(regular), 4096);
    EXPECT_TRUE(has(command(regular, "vllm"), "--max-model-len 4096"));
    EXPECT_TRUE(has(command(regular, "sglang"), "--context-length 4096"));
    EXPECT_TRUE(has(command(regular, "llama-server"), "--ctx-size 32768")) << "8 slots x 4096";
    EXPECT_NE(knob(server(launchSettings(regular), "vllm"), "max_context")
                  .note.find("model context 4096"),
              std::string::npos);
    // The profile's own cap wins when it is the smaller one.
    const DeployTarget fast = targetOf(Profile::fast(), 131072);
    EXPECT_TRUE(has(command(fast, "vllm"), "--max-model-len 32768"));
    // Unknown model context: the profile's cap, with a note saying to check it.
    const auto unknown = server(launchSettings(targetOf(Profile::fast())), "vllm");
    EXPECT_NE(knob(unknown, "max_context").note.find("not recorded"), std::string::npos);
}

TEST(DeployExport, EveryKnobMapsOrCarriesANote) {
    for (const Profile& p : {Profile::fast(), Profile::regular()}) {
        const auto servers = launchSettings(targetOf(p));
        ASSERT_EQ(servers.size(), 4u);
        for (const auto& s : servers) {
            if (s.id == "modebench-serve") continue;
            for (const char* name :
                 {"prefix_cache", "max_batch", "max_batch_tokens", "prefill_chunk", "max_context",
                  "truncation", "precision", "max_wait_ms", "weights", "graphs", "fused", "reload",
                  "queue_capacity"})
                EXPECT_NO_THROW(knob(s, name))
                    << s.id << " " << p.name << " has no row for " << name;
            for (const auto& k : s.knobs)
                EXPECT_TRUE(!k.args.empty() || !k.note.empty())
                    << s.id << " " << p.name << ": " << k.knob;
        }
        for (const char* id : {"vllm", "sglang", "llama-server"}) {
            const auto& s = server(servers, id);
            for (const char* name : {"max_wait_ms", "reload", "fused"})
                EXPECT_TRUE(knob(s, name).args.empty()) << id;
        }
    }
    const auto fast = launchSettings(targetOf(Profile::fast()));
    // keep_tail truncation has no server option; the note says what to do.
    EXPECT_NE(knob(server(fast, "vllm"), "truncation").note.find("truncate_prompt_tokens"),
              std::string::npos);
    EXPECT_NE(knob(server(fast, "vllm"), "queue_capacity").note.find("1024"), std::string::npos);
    EXPECT_NE(knob(server(fast, "vllm"), "reload").note.find("readiness"), std::string::npos)
        << "after_warmup";
    EXPECT_NE(knob(server(fast, "llama-server"), "precision").note.find("Q8_0"), std::string::npos)
        << "mixed";
    EXPECT_NE(knob(server(fast, "vllm"), "precision").note.find("INT8"), std::string::npos);
    const auto regular = launchSettings(targetOf(Profile::regular()));
    EXPECT_NE(knob(server(regular, "sglang"), "reload").note.find("roll the Deployment"),
              std::string::npos)
        << "hot";
    EXPECT_NE(knob(server(regular, "vllm"), "max_wait_ms").note.find("no equivalent"),
              std::string::npos);
    EXPECT_NE(knob(server(regular, "vllm"), "truncation").note.find("matches"), std::string::npos)
        << "reject";

    // The README carries every row: knob, option and note.
    const std::string readme =
        file(deploymentFiles(targetOf(Profile::fast()), std::nullopt), "README.md").text;
    for (const auto& s : fast) {
        EXPECT_NE(readme.find(commandLine(s)), std::string::npos) << s.id;
        for (const auto& k : s.knobs)
            EXPECT_NE(readme.find(k.note), std::string::npos) << s.id << " " << k.knob;
    }
}

TEST(DeployExport, TheAutoscalerCarriesTheGivenCapacity) {
    DeployCapacity c;
    c.replicas = 3;
    c.maxReplicas = 10;
    c.scaleOutQueueDepth = 4;
    c.scaleInQueueDepth = 1;
    c.ttftP95Ms = 1500;
    c.source = "sweep of run 12";
    const std::string yaml = hpaManifest(targetOf(Profile::fast()), c);
    for (const char* s :
         {"apiVersion: autoscaling/v2\n", "kind: HorizontalPodAutoscaler\n", "minReplicas: 3  #",
          "maxReplicas: 10  #", "name: modebench_requests_waiting\n", "averageValue: \"4\"\n",
          "name: modebench_time_to_first_token_seconds_p95\n", "averageValue: \"1500m\"\n",
          "type: Pods\n", "measured (sweep of run 12)", "Scale-in depth"})
        EXPECT_NE(yaml.find(s), std::string::npos) << s << " in\n" << yaml;
    EXPECT_EQ(yaml.find("NOT MEASURED"), std::string::npos);
    EXPECT_EQ(yaml.find("not measured"), std::string::npos) << yaml;
    // Every line is a comment, blank, or YAML at an even indent (no tabs).
    std::istringstream lines(yaml);
    for (std::string line; std::getline(lines, line);) {
        EXPECT_EQ(line.find('\t'), std::string::npos) << line;
        const size_t indent = line.find_first_not_of(' ');
        if (indent == std::string::npos || line[indent] == '#') continue;
        EXPECT_EQ(indent % 2, 0u) << line;
    }
    DeployCapacity bad;
    bad.replicas = 4;
    bad.maxReplicas = 2;
    try {
        hpaManifest(targetOf(Profile::fast()), bad);
        ADD_FAILURE() << "maxReplicas below replicas accepted";
    } catch (const DeployExportError& e) {
        EXPECT_NE(std::string(e.what()).find("maxReplicas"), std::string::npos) << e.what();
    }
}

TEST(DeployExport, WithoutCapacityTheAutoscalerSaysNotMeasured) {
    DeployTarget t = targetOf(Profile::regular());
    t.ttftSloP95Ms = 2500; // the requirements' bound: stated, not measured
    const std::string yaml = hpaManifest(t, std::nullopt);
    for (const char* s : {"NOT MEASURED", "compare --sweep", "minReplicas: 1  # not measured",
                          "maxReplicas: 1  # not measured", "averageValue: \"8\"\n", "max_batch 8",
                          "averageValue: \"2500m\"\n", "stated, not measured"})
        EXPECT_NE(yaml.find(s), std::string::npos) << s << " in\n" << yaml;
    EXPECT_EQ(yaml.find("measured ("), std::string::npos) << "no figure claims a measurement";
    // No TTFT bound stated and none measured: no TTFT metric.
    const std::string plain = hpaManifest(targetOf(Profile::fast()), std::nullopt);
    EXPECT_EQ(plain.find("averageValue: \"1\"\n"), plain.rfind("averageValue:")) << plain;
    EXPECT_NE(plain.find("No TTFT target"), std::string::npos);
    const std::string readme = file(deploymentFiles(t, std::nullopt), "README.md").text;
    EXPECT_NE(readme.find("Replicas: 1 to 1 (not measured)"), std::string::npos) << readme;
}

// Every figure comes from the inputs: an unusual profile and model show up as themselves.
TEST(DeployExport, NothingIsHardCodedToARun) {
    Profile p = Profile::regular();
    p.name = "odd";
    p.kv = mb::engine::KvPolicy::Pool;
    p.prefixCache = true;
    p.blockSize = 32;
    p.maxBatch = 13;
    p.maxBatchTokens = 3001;
    p.prefillChunk = 301;
    p.maxContext = 5003;
    p.queueCapacity = 77;
    p.kvPoolTokens = 9000;
    p.precision = mb::engine::Precision::Q4_K_M;
    ASSERT_EQ(p.validate(), "");
    const DeployTarget t = targetOf(p, 0, "/data/odd name's.gguf");
    const auto files = deploymentFiles(t, std::nullopt);
    const std::string vllm = file(files, "vllm.sh").text, sglang = file(files, "sglang.sh").text,
                      llama = file(files, "llama-server.sh").text;
    for (const char* o : {"--max-num-seqs 13", "--max-num-batched-tokens 3001",
                          "--long-prefill-token-threshold 301", "--max-model-len 5003",
                          "--block-size 32", "--enable-prefix-caching"})
        EXPECT_NE(vllm.find(o), std::string::npos) << o << " in\n" << vllm;
    for (const char* o :
         {"--max-running-requests 13", "--chunked-prefill-size 301", "--context-length 5003",
          "--page-size 32", "--max-total-tokens 9000", "--max-queued-requests 77"})
        EXPECT_NE(sglang.find(o), std::string::npos) << o << " in\n" << sglang;
    for (const char* o : {"-np 13", "--ctx-size 65039", "--cache-reuse 32", "-b 3001"}) // 13 x 5003
        EXPECT_NE(llama.find(o), std::string::npos) << o << " in\n" << llama;
    EXPECT_NE(vllm.find("MODEL=${MODEL:-'/data/odd name'\\''s.gguf'}\n"), std::string::npos)
        << vllm;
    EXPECT_NE(llama.find("--alias 'odd name'\\''s'"), std::string::npos) << llama;
    EXPECT_NE(knob(server(launchSettings(t), "llama-server"), "precision").note.find("Q4_K_M GGUF"),
              std::string::npos);
    for (const auto& f : files) {
        if (!f.executable) continue;
        for (const char* builtin : {"131072", "32768", "2048", " 512", " 1024", "--max-num-seqs 8"})
            EXPECT_EQ(f.text.find(builtin), std::string::npos)
                << builtin << " in " << f.name << ":\n"
                << f.text;
        EXPECT_NE(f.text.find("run #7."), std::string::npos) << f.name;
    }
    // profile.json is the profile itself.
    EXPECT_EQ(Profile::fromJson(file(files, "profile.json").text).toJson(), p.toJson());
}

TEST(DeployExport, TheSelectionPicksTheCandidate) {
    const StoredRun run = mb::test::syntheticRun(5, mb::test::Behaviour{.ttftMs = 300},
                                                 mb::test::Behaviour{.ttftMs = 900});
    const auto req =
        parseRequirements(nlohmann::json::parse(R"({"slo": {"ttft_ms": {"p95": 2000}}})"));
    const SelectionResult r = select(req, std::nullopt, {run});
    ASSERT_EQ(r.verdict, Verdict::Recommended);
    ASSERT_EQ(r.recommendation, Mode::Fast);
    const DeployTarget t = deployTargetOf(run, r, std::nullopt);
    EXPECT_EQ(t.mode, Mode::Fast);
    EXPECT_TRUE(t.recommended);
    EXPECT_TRUE(t.profile.prefixCache) << "the stored fast profile, on the fast built-in";
    EXPECT_EQ(t.modelPath, "/models/synthetic.gguf");
    EXPECT_EQ(t.modelContext, 0) << "the fixture's shape records no context";
    ASSERT_TRUE(t.ttftSloP95Ms.has_value());
    EXPECT_EQ(*t.ttftSloP95Ms, 2000);
    EXPECT_EQ(t.runIds, (std::vector<int64_t>{5}));
    // Named: the other one, not recommended.
    const DeployTarget other = deployTargetOf(run, r, Mode::Regular);
    EXPECT_EQ(other.label, "b");
    EXPECT_FALSE(other.recommended);
    // No recommendation: nothing unless a candidate is named.
    SelectionResult tie = r;
    tie.verdict = Verdict::NoClearWinner;
    try {
        deployTargetOf(run, tie, std::nullopt);
        ADD_FAILURE() << "a tie exported a candidate";
    } catch (const DeployExportError& e) {
        EXPECT_NE(std::string(e.what()).find("no_clear_winner"), std::string::npos) << e.what();
    }
    EXPECT_EQ(deployTargetOf(run, tie, Mode::Fast).mode, Mode::Fast);
}

TEST(DeployExport, WritesTheFilesIntoADirectory) {
    const fs::path root = fs::temp_directory_path() / ("mb_deploy_" + std::to_string(::getpid()));
    fs::remove_all(root);
    const fs::path dir = root / "nested" / "out";
    const auto files = deploymentFiles(targetOf(Profile::fast()), std::nullopt);
    const auto written = writeDeploymentFiles(dir.string(), files);
    ASSERT_EQ(written.size(), 7u);
    for (const char* name : {"vllm.sh", "sglang.sh", "llama-server.sh", "modebench-serve.sh",
                             "profile.json", "hpa.yaml", "README.md"}) {
        const fs::path p = dir / name;
        ASSERT_TRUE(fs::is_regular_file(p)) << p;
        EXPECT_EQ(slurp(p), file(files, name).text);
        const bool script = p.extension() == ".sh";
        EXPECT_EQ((fs::status(p).permissions() & fs::perms::owner_exec) != fs::perms::none, script)
            << p;
        if (script) {
            EXPECT_EQ(std::system(("sh -n '" + p.string() + "'").c_str()), 0)
                << "shell syntax of " << p;
        }
    }
    // Again over the same directory: replaced in place.
    EXPECT_EQ(writeDeploymentFiles(dir.string(), files).size(), 7u);
    // A file where the directory should be is refused.
    std::ofstream(root / "plain") << "x";
    try {
        writeDeploymentFiles((root / "plain").string(), files);
        ADD_FAILURE() << "wrote into a file";
    } catch (const DeployExportError& e) {
        EXPECT_NE(std::string(e.what()).find("is not a directory"), std::string::npos) << e.what();
    }
    fs::remove_all(root);
}
