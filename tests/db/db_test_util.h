// Helpers of the store tests: temporary directories, synthetic request records and whole runs.
#pragma once

#include "db/sqlite_run_sink.h"
#include "lab/request_record.h"
#include "lab/run_sink.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace mb::test {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = fs::temp_directory_path() / ("mb_db_" + std::to_string(::getpid()) + "_" +
                                              (info ? std::string(info->name()) : "x"));
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string operator/(const std::string& name) const { return (m_path / name).string(); }
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

inline std::string fileBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Bytes and modification time: what "left untouched" means.
struct FileState {
    std::string bytes;
    int64_t mtimeNs = 0;
    bool operator==(const FileState&) const = default;
};
inline FileState fileState(const std::string& path) {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return {fileBytes(path), int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

// A deterministic finished request: `tokens` output tokens 2 ms apart.
inline lab::RequestRecord makeRecord(uint64_t index, int tokens,
                                     lab::RequestStatus status = lab::RequestStatus::Ok) {
    lab::RequestRecord r;
    r.id = index;
    r.status = status;
    r.promptTokens = 40 + static_cast<int64_t>(index % 7);
    r.cachedTokens = static_cast<int64_t>(index % 3) * 16;
    r.outputTokens = tokens;
    r.submittedMs = 10.0 * static_cast<double>(index) + 0.25;
    r.scheduledMs = r.submittedMs + 1.5;
    r.kvBytesPeak = 4096 * (index + 1);
    for (int k = 0; k < tokens; ++k) {
        r.tokenTimesMs.push_back(r.scheduledMs + 3.0 + 2.0 * k +
                                 0.001 * static_cast<double>(index));
        r.tokens.push_back(
            static_cast<int32_t>(100 + (index * 31 + static_cast<uint64_t>(k)) % 400));
        r.text.append("w").append(std::to_string(k)).append(" ");
    }
    r.firstTokenMs = tokens > 0 ? r.tokenTimesMs.front() : -1;
    r.finishedMs = (tokens > 0 ? r.tokenTimesMs.back() : r.scheduledMs) + 0.5;
    if (status == lab::RequestStatus::Rejected) {
        r.scheduledMs = r.firstTokenMs = -1;
        r.tokenTimesMs.clear();
        r.tokens.clear();
        r.text.clear();
        r.outputTokens = 0;
        r.error = "prompt of 9000 tokens exceeds the context limit, \"quoted\", with a comma";
    }
    return r;
}

inline lab::RunInfo makeRunInfo(const std::string& name) {
    lab::RunInfo info;
    info.name = name;
    info.tags = {"nightly", "cpu"};
    info.workloadJson = R"({"name":"shared-prefix","requests":8,"seed":42})";
    info.configJson = R"({"sampling":{"temperature":0},"interleave":false,"threads":2})";
    info.environmentJson = R"({"cpu":"test cpu","threads":2})";
    return info;
}

inline lab::CandidateInfo makeCandidateInfo(const std::string& label, const std::string& profile) {
    lab::CandidateInfo c;
    c.label = label;
    c.targetKind = "embedded";
    c.modelPath = "/models/stories260K.gguf";
    c.modelBytes = 1185376;
    c.modelSha256 = std::string(64, 'a');
    c.shapeJson = R"({"dim":64,"layers":5})";
    c.profileJson = std::string(R"({"name":")").append(profile).append(R"(","kv":"pool"})");
    return c;
}

// A complete two-candidate run (a: fast, b: regular) with `requests` requests each, written
// through the sink. Returns the run id.
inline int64_t writeSampleRun(db::SqliteRunSink& sink, const std::string& name, int requests = 8,
                              int tokensPerRequest = 5) {
    const int64_t run = sink.beginRun(makeRunInfo(name));
    const int64_t a = sink.addCandidate(run, makeCandidateInfo("a", "fast"));
    const int64_t b = sink.addCandidate(run, makeCandidateInfo("b", "regular"));
    for (int i = 0; i < requests; ++i) {
        sink.requestFinished(a, makeRecord(static_cast<uint64_t>(i), tokensPerRequest));
        const auto status =
            i == requests - 1 ? lab::RequestStatus::Rejected : lab::RequestStatus::Ok;
        sink.requestFinished(b, makeRecord(static_cast<uint64_t>(i), tokensPerRequest + 1, status));
    }
    const std::string summaryA =
        R"({"requests":8,"ok":8,"errors":0,"ttft_ms":{"p50":4.5,"p99":9.25},"output_tokens_per_s":120.5,"prefix_cache":{"hit_rate":0.75}})";
    const std::string summaryB =
        R"({"requests":8,"ok":7,"errors":0,"ttft_ms":{"p50":6.5,"p99":12.0},"output_tokens_per_s":99.0,"prefix_cache":{"hit_rate":0.0}})";
    sink.finishCandidate(a, summaryA,
                         {{"throughput", {{0, 10}, {1, 12.5}}}, {"ttft_ms", {{0, 4.5}}}});
    sink.finishCandidate(b, summaryB, {{"throughput", {{0, 8}, {1, 9}}}});
    sink.finishRun(run, lab::RunStatus::Complete, R"({"a":{"ok":8},"b":{"ok":7}})");
    return run;
}

} // namespace mb::test
