// A remote OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, ModeBench's own) as a target.
#pragma once

#include "lab/target.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace mb::lab {

// Where a remote target lives: "remote:http://HOST:PORT[/PREFIX][?prompt=text][#MODEL]"
// (the "remote:" is optional here). PREFIX defaults to "/v1". `?prompt=text` sends prompts
// as text decoded by a local tokenizer instead of token ids (for servers such as TGI that
// take no ids). https works when the server's certificate verifies. The API key is read
// from the environment variable `apiKeyEnv` when set; it is never stored.
struct RemoteSpec {
    std::string scheme = "http";
    std::string host;
    int port = 80;
    std::string prefix = "/v1";
    std::string model;     // sent as "model"; empty: omitted
    bool textPrompts = false; // ?prompt=text
    std::string apiKeyEnv; // e.g. "OPENAI_API_KEY"; empty: no Authorization header
    double connectTimeoutS = 5;
    double readTimeoutS = 300;     // longest silence: no byte, or no event (keep-alive comments aside)
    double requestTimeoutS = 3600; // longest whole request; 0: none

    // Throws std::invalid_argument with the reason for a malformed URL.
    static RemoteSpec parse(const std::string& text);
    std::string url() const; // "http://HOST:PORT/v1" (+ "#MODEL")
    static bool isRemote(const std::string& text) { return text.rfind("remote:", 0) == 0; }
};

// Each request is one streaming POST to PREFIX/completions with the prompt as token ids,
// on its own thread; events are delivered on that thread: Scheduled when the response
// headers arrive, Token per non-empty text chunk (token id -1: the server's ids are not
// streamed), one Finished. Token counts come from `usage` (include_usage is requested);
// cached prompt tokens from usage.prompt_tokens_details.cached_tokens, else llama.cpp's
// timings.cache_n, else its prompt tokens less timings.prompt_n (what it evaluated); the
// server's own prompt_ms and predicted_per_token_ms go to serverPromptMs/serverPerTokenMs. Errors (connection refused, timeouts, HTTP errors with their JSON
// message, an error object inside the stream, a stream that ends without [DONE], an event
// of unexpected shape, a 200 that is not an event stream, an event over kMaxEventBytes)
// finish the request with status Error and a one-line message; usage counts of the wrong
// type fall back instead. A server reporting fewer prompt tokens than the ids sent has cut
// the prompt: the difference is the request's truncated tokens. cancel() aborts the
// connection.
// stats(): the prefix counters summed from usage (queries = prompt tokens, hits = cached
// tokens of finished requests), running = requests in flight; KV bytes are unknown (0).
class RemoteTarget final : public Target {
public:
    // Throws std::invalid_argument when apiKeyEnv names an unset variable.
    RemoteTarget(RemoteSpec spec, std::string description);
    ~RemoteTarget() override; // cancels what is in flight and joins the request threads

    uint64_t submit(engine::InferenceRequest request, engine::EventSink sink) override;
    bool cancel(uint64_t id) override;
    engine::SessionStats stats() const override;
    void waitIdle() override;
    std::string describe() const override { return m_description; }
    const RemoteSpec& spec() const { return m_spec; }
    // With spec().textPrompts: turns prompt ids into the text sent. Set before submitting.
    void setPromptDecoder(std::function<std::string(const std::vector<int32_t>&)> decode) {
        m_decode = std::move(decode);
    }

private:
    struct Call;
    void run(std::shared_ptr<Call> call);
    void reapFinished(); // m_mutex held

    const RemoteSpec m_spec;
    const std::string m_description;
    std::string m_apiKey;
    std::function<std::string(const std::vector<int32_t>&)> m_decode;
    mutable std::mutex m_mutex;
    std::condition_variable m_idle;
    uint64_t m_nextId = 1;
    std::map<uint64_t, std::shared_ptr<Call>> m_calls; // in flight
    std::map<uint64_t, std::thread> m_threads;         // joined when their call ends
    std::vector<uint64_t> m_done;                      // threads ready to join
    std::atomic<uint64_t> m_queries{0}, m_hits{0}, m_finished{0};
};

} // namespace mb::lab
