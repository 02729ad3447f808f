// ServerMetrics: recording under a mutex and rendering the Prometheus text format.
#include "server/server_metrics.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace mb::server {

namespace {

const std::vector<double> kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,  1.0,
                                            2.5,   5.0,  10.0,  30.0, 60.0, 120.0, 300.0};

// Whole numbers as integers, others in the shortest text that reads back as the same double.
std::string number(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v)); // counters
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    for (int precision = 1; precision <= 17; ++precision) {
        char shorter[32];
        std::snprintf(shorter, sizeof shorter, "%.*g", precision, v);
        if (std::stod(shorter) == v) return shorter;
    }
    return buf;
}

// Label values escape backslash, double quote and newline.
std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\' || c == '"') out.push_back('\\');
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out.push_back(c);
    }
    return out;
}

} // namespace

void Histogram::observe(double v) {
    for (size_t i = 0; i < bounds.size(); ++i)
        if (v <= bounds[i]) ++counts[i];
    ++count;
    sum += v;
}

ServerMetrics::ServerMetrics() : m_ttft(kLatencyBounds), m_e2e(kLatencyBounds) {}

void ServerMetrics::requestFinished(double ttftSeconds, double e2eSeconds, int64_t promptTokens, int64_t outputTokens) {
    std::lock_guard g(m_mutex);
    if (ttftSeconds >= 0) m_ttft.observe(ttftSeconds);
    m_e2e.observe(e2eSeconds);
    m_promptTokens += static_cast<uint64_t>(std::max<int64_t>(0, promptTokens));
    m_generationTokens += static_cast<uint64_t>(std::max<int64_t>(0, outputTokens));
    ++m_requests;
}

void ServerMetrics::requestFailed() {
    std::lock_guard g(m_mutex);
    ++m_errors;
}

void ServerMetrics::imageEncoded(double seconds) {
    std::lock_guard g(m_mutex);
    ++m_images;
    m_imageSeconds += seconds;
}

std::string ServerMetrics::render(const engine::SessionStats& stats, const std::string& modelName) const {
    std::ostringstream o;
    const std::string label = "{model_name=\"" + escape(modelName) + "\"}";
    auto scalar = [&](const char* name, const char* type, const char* help, double value) {
        o << "# HELP " << name << ' ' << help << '\n'
          << "# TYPE " << name << ' ' << type << '\n'
          << name << label << ' ' << number(value) << '\n';
    };
    auto histogram = [&](const char* name, const char* help, const Histogram& h) {
        o << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << " histogram\n";
        const std::string prefix = std::string(name) + "_bucket{model_name=\"" + escape(modelName) + "\",le=\"";
        for (size_t i = 0; i < h.bounds.size(); ++i) o << prefix << number(h.bounds[i]) << "\"} " << h.counts[i] << '\n';
        o << prefix << "+Inf\"} " << h.count << '\n';
        o << name << "_sum" << label << ' ' << number(h.sum) << '\n';
        o << name << "_count" << label << ' ' << h.count << '\n';
    };
    std::lock_guard g(m_mutex);
    scalar("modebench_prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.",
           static_cast<double>(stats.prefixQueries));
    scalar("modebench_prefix_cache_hits_total", "counter", "Prompt tokens served from the prefix cache.",
           static_cast<double>(stats.prefixHits));
    histogram("modebench_time_to_first_token_seconds", "Time from request arrival to its first token.", m_ttft);
    histogram("modebench_e2e_request_latency_seconds", "Time from request arrival to its last token.", m_e2e);
    scalar("modebench_requests_running", "gauge", "Requests being computed.", static_cast<double>(stats.running));
    scalar("modebench_requests_waiting", "gauge", "Requests queued.", static_cast<double>(stats.waiting));
    scalar("modebench_kv_cache_usage_ratio", "gauge", "KV bytes in use over KV capacity (0 to 1).",
           stats.kvBytesCapacity > 0
               ? static_cast<double>(stats.kvBytesInUse) / static_cast<double>(stats.kvBytesCapacity)
               : 0.0);
    scalar("modebench_prompt_tokens_total", "counter", "Prompt tokens of finished requests.",
           static_cast<double>(m_promptTokens));
    scalar("modebench_generation_tokens_total", "counter", "Generated tokens of finished requests.",
           static_cast<double>(m_generationTokens));
    scalar("modebench_request_success_total", "counter", "Requests that finished normally.",
           static_cast<double>(m_requests));
    scalar("modebench_request_errors_total", "counter", "Requests that failed, were rejected or were malformed.",
           static_cast<double>(m_errors));
    scalar("modebench_images_encoded_total", "counter", "Images encoded by the vision encoder (--mmproj).",
           static_cast<double>(m_images));
    scalar("modebench_image_encode_seconds_total", "counter",
           "Time spent encoding images (preprocessing, encoder, projector), seconds.", m_imageSeconds);
    return o.str();
}

} // namespace mb::server
