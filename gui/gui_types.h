// Values that cross the GUI's threads in queued signals: jobs in, streamed batches and outcomes out.
#pragma once

#include "engine/sampler.h"
#include "lab/metrics.h"
#include "lab/request_record.h"
#include "lab/stored_run.h"
#include "lab/sweep_tag.h"
#include "lab/workload.h"

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mb::gui {

// One side of a comparison as a person chose it in a candidate editor.
struct CandidateSpec {
    QString label = QStringLiteral("a"); // "a", "b"
    QString modelPath;
    QString profile = QStringLiteral("fast"); // "fast", "regular", a JSON profile file or text, or remote:URL
    QString apiKeyEnv;                        // remote: the environment variable holding the key
    QString device = QStringLiteral("cpu");   // "cpu" or "cuda:N" (engine::parseDevice)
    int threads = 1;
    engine::SamplerParams sampling{.temperature = 0.0f}; // greedy by default
    // Output plugin chain (a JSON file, docs/PLUGINS.md); empty: none. Loaded on the engine
    // thread with the job's database's approvals (gui/plugin_chains.h).
    QString pluginsPath;
    // Vision encoder + projector (llava mmproj GGUF) for prompts with images; empty: none.
    // Ignored for a remote candidate (remote targets take no images yet).
    QString mmprojPath;
};

// Playground: one prompt, two candidates.
struct PlaygroundJob {
    qint64 jobId = 0;
    QString prompt;
    // Chat mode: the conversation (role, content), ending with the user's turn, rendered with
    // the model's chat template (engine/chat_template.h); empty: `prompt` is plain text.
    std::vector<std::pair<QString, QString>> chat;
    int maxTokens = 64;
    CandidateSpec a, b;
    bool concurrent = false; // true: both at once (a visual race); false: A then B (fair timing)
    QString dbPath;          // where the run is saved; empty: not saved
    bool allowUnsandboxed = false; // run script plugins where a sandbox layer is missing
    // PNG or JPEG files the prompt carries, in order, right after its first token (BOS);
    // each candidate encodes them with its mmproj (lab::ImageTarget).
    QStringList images;
};

// Benchmark: one workload, two candidates.
struct BenchmarkJob {
    qint64 jobId = 0;
    lab::WorkloadSpec workload;
    CandidateSpec a, b;
    bool primePrefixes = true; // one unrecorded primer per shared-prefix group
    bool onlyA = false;        // run candidate A alone (the migration's monitoring pass)
    int precisionPrompts = 0;  // precision A/B after the run on this many prompts (0 = off)
    qint64 precisionGenTokens = 16;
    lab::Slo slo;
    QString runName;
    QString dbPath; // empty: not saved
    bool allowUnsandboxed = false; // run script plugins where a sandbox layer is missing
    // Set (the migration's monitoring pass): `workload` is ignored and the stored run's own
    // requests and primers are replayed (lab::replayRun on the engine thread, with A's
    // tokenizer); `replayPromptFile` stands in when the run's prompt file cannot be read.
    // The stored run says so: config {prompts, primers, replays_run}, tagged "migration".
    std::shared_ptr<const lab::StoredRun> replayOf; // immutable, shared across threads
    QString replayPromptFile;
    // Set: a capacity sweep (lab::runSweep) at `sweepLevels` (empty: lab's defaults) instead
    // of one comparison; each level is stored as its own run.
    std::optional<lab::SweepKind> sweep;
    std::vector<double> sweepLevels;
};

// Migration node D: warm a session of `modelPath` under `profile` (JSON text or name) up,
// priming the prompts of `primeFile`, else the prefixes (or the prompts) of `run` replayed,
// else nothing; a model update is tried meanwhile.
struct WarmupJob {
    qint64 jobId = 0;
    QString modelPath, profile, primeFile;
    std::shared_ptr<const lab::StoredRun> run; // may be null
    int threads = 1;
};

// Tokens of one candidate, coalesced (about every 16 ms).
struct StreamedToken {
    int32_t id = -1;
    QString text;      // the text this token completed (may be empty mid-UTF-8)
    double msSinceSubmit = 0;
    QString shown; // with a plugin chain: the processed text it let out with this token
};

// Precision A/B of two models (the Models page): the reference file computed at
// `referencePrecision` against the candidate (`candidatePath`, empty: the reference file)
// computed at `candidatePrecision` (engine precision names).
struct PrecisionJob {
    qint64 jobId = 0;
    QString referencePath, candidatePath;
    QString referencePrecision = QStringLiteral("f32"), candidatePrecision = QStringLiteral("native");
    QString promptFile; // empty: lab::samplePrecisionTexts()
    int maxPrompts = 32;
    qint64 genTokens = 16;
    int threads = 1;
};

// What a finished playground request reports.
struct RequestOutcome {
    QString status;  // "ok", "error", "cancelled", "rejected"
    QString error;
    qint64 promptTokens = 0, cachedTokens = 0, truncatedTokens = 0, outputTokens = 0;
    double ttftMs = -1, e2eMs = -1;
    std::vector<int32_t> tokens;
    QString text; // raw output
    // With a plugin chain: the processed output and what the chain cost.
    bool postprocessed = false;
    QString output;            // what the user is shown (text itself without a chain)
    QString postprocessStatus; // "", "ended: REASON" or "failed: MESSAGE"
    double postprocessMs = 0;  // inside the plugins, set-up included
    double extraTtftMs = -1;   // first shown output minus first token; -1: undefined
    // Images (lab::RequestRecord): how many, the prompt positions they filled, those that
    // truncation dropped whole, and the vision encoder's time (part of TTFT).
    qint64 images = 0, imageTokens = 0, imagesDropped = 0;
    double encodeMs = 0;
};

// Benchmark data that arrived since the last batch, per candidate label.
struct LiveBatch {
    std::vector<std::pair<std::string, lab::RequestRecord>> records;
    std::vector<std::pair<std::string, lab::StatsSample>> samples;
    bool empty() const { return records.empty() && samples.empty(); }
};

// The end of a benchmark or playground job.
struct JobOutcome {
    qint64 storedRunId = 0; // 0 when not saved
    bool cancelled = false;
    std::vector<std::pair<std::string, lab::RunSummary>> summaries; // per label
    std::vector<std::pair<std::string, double>> startupMs;          // per label
    // Per label: how many requests did not end ok, and the first one's message.
    std::vector<std::pair<std::string, std::pair<qint64, QString>>> failures;
    QString saveError; // the store failed; the results are still shown
    QString note;      // for the user: e.g. the chat template used, or why the plain form was
    std::vector<qint64> sweepRunIds; // a sweep: each stored level's run id, in order (the rest: the last level)
};

// A model file as the Models page shows it.
struct ModelDescription {
    QString path;
    qint64 fileBytes = 0;
    QString architecture, name;
    QString shape;       // "dim 288, layers 6, heads 6/6, ffn 768, vocab 32000, context 256"
    std::vector<std::pair<QString, QString>> features; // engine::describeArchitecture: ("rope", "NEOX, ...")
    qint64 parameters = 0;
    struct Tensor {
        QString name, type, shape;
        qint64 bytes = 0;
    };
    std::vector<Tensor> tensors;
    std::vector<std::pair<QString, qint64>> bytesByType; // "f16" -> bytes
};

// Registers the types above for queued connections; call once before any thread starts.
void registerGuiTypes();

} // namespace mb::gui

Q_DECLARE_METATYPE(mb::gui::PlaygroundJob)
Q_DECLARE_METATYPE(mb::gui::BenchmarkJob)
Q_DECLARE_METATYPE(mb::gui::WarmupJob)
Q_DECLARE_METATYPE(mb::gui::RequestOutcome)
Q_DECLARE_METATYPE(mb::gui::LiveBatch)
Q_DECLARE_METATYPE(mb::gui::JobOutcome)
Q_DECLARE_METATYPE(mb::gui::ModelDescription)
Q_DECLARE_METATYPE(mb::gui::StreamedToken)
