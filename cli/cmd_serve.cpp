// `modebench-cli serve`: the embedded engine behind an OpenAI-compatible HTTP API with Prometheus metrics.
#include "cli/command_util.h"
#include "cli/plugin_options.h"

#include "engine/chat_template.h"
#include "engine/clip_model.h"
#include "engine/gguf.h"
#include "engine/llama_model.h"
#include "engine/session.h"
#include "server/openai_server.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

namespace mb::cli {

namespace {

struct ServeArgs {
    std::string model, profile = "regular", host = "127.0.0.1", apiKeyEnv, modelName;
    int port = 8080;
    int threads = 1;
    std::string device;
    int httpThreads = 64;
    std::string mmproj; // the vision encoder + projector: chat messages may carry image_url parts
    std::string db;     // where script plugins' approvals are (empty: the default store)
    PluginArgs plugins; // --plugins: the chain applied to every response
};

// The mmproj, checked before the server listens: a bad file or a projector whose width is not
// the model's embedding width is a one-line error (exit code 2).
std::shared_ptr<const engine::ClipModel> loadVision(const std::string& path, int64_t modelWidth) {
    requireReadableFile(path, "mmproj file");
    try {
        auto clip = std::make_shared<const engine::ClipModel>(engine::ClipModel::load(path));
        clip->checkEmbeddingWidth(modelWidth);
        return clip;
    } catch (const engine::ClipError& e) {
        throw UsageError(e.what());
    }
}

void runServe(const ServeArgs& a) {
    requireReadableFile(a.model, "model file");
    engine::Profile profile;
    try {
        profile = engine::Profile::load(a.profile);
    } catch (const engine::ProfileError& e) {
        throw UsageError(e.what());
    }
    const engine::Device device = resolveDeviceOption(a.device);
    server::ServerOptions o;
#ifdef MODEBENCH_HAVE_STORE
    const std::string approvals = a.plugins.both.empty() ? std::string() : databasePath(a.db);
#else
    const std::string approvals;
#endif
    o.plugins = loadPluginChain(a.plugins.both, approvals, a.plugins);
    o.host = a.host;
    o.port = a.port;
    o.httpThreads = a.httpThreads;
    o.modelName = a.modelName.empty() ? std::filesystem::path(a.model).stem().string() : a.modelName;
    if (!a.apiKeyEnv.empty()) {
        const char* key = std::getenv(a.apiKeyEnv.c_str());
        if (!key || !*key) throw UsageError("--api-key-env: the variable " + a.apiKeyEnv + " is not set");
        o.apiKey = key;
    }
    {
        // On-demand profiles map the weights at the first request, and preload ones on the
        // engine thread: either way a file that cannot serve (a tensor missing or misshapen,
        // data past the end) would start a server whose /health says ok while every completion
        // fails. Loading it once here checks every tensor for little more than the mapping: in
        // the file's own types, matrices are views, neither copied nor read. Throws
        // GgufError/ModelError, a one-line error with exit code 2.
        const auto checked = engine::LlamaModel::load(a.model);
        const engine::ChatTemplateChoice chat = engine::chatTemplateOf(checked->file());
        o.chatFamily = chat.family;
        if (!chat.note.empty()) std::cerr << "serve: note: " << chat.note << '\n';
        if (!a.mmproj.empty()) o.vision = loadVision(a.mmproj, checked->config().dim);
        o.visionThreads = a.threads;
        o.visionDevice = device;
    }
    // SIGINT/SIGTERM are taken by a waiting thread (blocked everywhere else) that stops the server.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

    auto session = engine::Session::start(a.model, profile, {.threads = a.threads, .device = device});
    server::OpenAiServer http(*session, o);
    const int port = http.bind();
    std::cerr << "serve: " << o.modelName << " under the " << profile.name << " profile on http://" << o.host << ":"
              << port << " (" << a.threads << " threads on " << device.id() << ", chat template " << engine::chatFamilyName(o.chatFamily)
              << (o.apiKey.empty() ? "" : ", API key required")
              << (o.plugins ? ", plugins " + o.plugins->describe() : std::string())
              << (o.vision ? ", images through " + o.vision->path() + " (" + std::to_string(o.vision->imageTokens()) +
                                 " tokens each)"
                           : std::string())
              << ")\n"
              << "serve: POST /v1/completions /v1/chat/completions, GET /v1/models /health /metrics; Ctrl+C stops\n";
    std::thread stopper([&] {
        int sig = 0;
        sigwait(&stopSignals, &sig);
        std::cerr << "serve: stopping\n";
        http.stop();
    });
    http.run();
    // run() also returns when the listener fails; wake the signal thread either way.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
}

} // namespace

void addServeCommand(CLI::App& root) {
    auto args = std::make_shared<ServeArgs>();
    CLI::App* cmd = root.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API (loopback by default)");
    cmd->add_option("--model,-m", args->model, "GGUF model file")->required();
    cmd->add_option("--profile", args->profile, "fast, regular or a JSON profile file")->capture_default_str();
    cmd->add_option("--host", args->host, "Address to listen on (0.0.0.0 exposes it to the network)")
        ->capture_default_str();
    cmd->add_option("--port", args->port, "TCP port; 0 picks a free one")->check(CLI::Range(0, 65535))->capture_default_str();
    cmd->add_option("--api-key-env", args->apiKeyEnv,
                    "Require 'Authorization: Bearer KEY' on /v1/*, KEY read from this environment variable");
    cmd->add_option("--model-name", args->modelName, "The model id clients use (default: the file name without .gguf)");
    cmd->add_option("--http-threads", args->httpThreads, "Requests served at once (each stream holds one; /health and /metrics have their own)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd->add_option("--mmproj", args->mmproj,
                    "llava vision encoder + projector (mmproj GGUF): chat messages may then carry image_url parts "
                    "with data: URLs");
    addThreadsOption(*cmd, args->threads);
    addDeviceOption(*cmd, args->device);
    addPluginOptions(*cmd, args->plugins, false);
    addDatabaseOption(*cmd, args->db)->description("Run store holding the script plugins' approvals (default: the user's)");
    cmd->callback([args] { runServe(*args); });
}

} // namespace mb::cli
