// Playground and benchmark jobs on the engine thread: lab::runComparison with live callbacks.
#include "gui/engine_worker.h"

#include "engine/chat_template.h"

#include "db/sqlite_run_sink.h"
#include "engine/gguf.h"
#include "engine/quantize_model.h"
#include "engine/synthetic_model.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "gui/event_coalescer.h"
#include "gui/job_candidates.h"
#include "gui/model_description.h"
#include "lab/comparison.h"
#include "lab/migration.h"
#include "lab/migration_warmup.h"
#include "lab/run_config.h"
#include "lab/selection.h"
#include "lab/sweep.h"

#include <QFileInfo>

#include <chrono>
#include <map>
#include <memory>
#include <optional>

namespace mb::gui {

namespace {

std::unique_ptr<engine::Tokenizer> tokenizerOf(const std::string& path) {
    return engine::Tokenizer::create(engine::Vocab::fromGguf(engine::GgufFile::open(path)));
}

// Both candidates see the same token ids, so their models must share a vocabulary.
void requireSameVocab(const lab::Candidate& a, const lab::Candidate& b) {
    if (a.modelPath == b.modelPath) return;
    const auto va = engine::Vocab::fromGguf(engine::GgufFile::open(a.modelPath));
    const auto vb = engine::Vocab::fromGguf(engine::GgufFile::open(b.modelPath));
    if (va.tokens != vb.tokens)
        throw std::runtime_error("the two models have different vocabularies; a side-by-side run needs the same "
                                 "tokenizer (for example two precisions of one model)");
}

JobOutcome outcomeOf(const std::vector<lab::CandidateResult>& results, int64_t runId) {
    JobOutcome out;
    out.storedRunId = runId;
    for (const auto& r : results) {
        out.cancelled = out.cancelled || r.run.cancelled;
        out.summaries.emplace_back(r.candidate.label, r.summary);
        out.startupMs.emplace_back(r.candidate.label, r.startupMs);
        qint64 failed = 0;
        QString first;
        for (const auto& rec : r.run.records) {
            if (rec.status == lab::RequestStatus::Ok) continue;
            if (failed++ == 0)
                first = QStringLiteral("%1: %2").arg(QString::fromUtf8(lab::requestStatusName(rec.status)),
                                                     QString::fromStdString(rec.error));
        }
        if (failed > 0) out.failures.push_back({r.candidate.label, {failed, first}});
    }
    return out;
}

RequestOutcome requestOutcome(const lab::RequestRecord& r) {
    RequestOutcome o;
    o.status = QString::fromUtf8(lab::requestStatusName(r.status));
    o.error = QString::fromStdString(r.error);
    o.promptTokens = r.promptTokens;
    o.cachedTokens = r.cachedTokens;
    o.truncatedTokens = r.truncatedTokens;
    o.outputTokens = r.outputTokens;
    o.ttftMs = r.ttftMs();
    o.e2eMs = r.e2eMs();
    o.tokens = r.tokens;
    o.text = QString::fromUtf8(r.text.data(), static_cast<qsizetype>(r.text.size()));
    o.postprocessed = r.postprocessed;
    o.output = QString::fromUtf8(r.output.data(), static_cast<qsizetype>(r.output.size()));
    o.postprocessStatus = QString::fromStdString(r.postprocessStatus);
    o.postprocessMs = r.postprocessMs;
    o.extraTtftMs = r.extraTtftMs();
    o.images = r.images;
    o.imageTokens = r.imageTokens;
    o.imagesDropped = r.imagesDropped;
    o.encodeMs = r.encodeMs;
    return o;
}

// Opens the job's run store (none without a path); a store that cannot be opened leaves
// the job running unsaved, with the reason in `saveError`.
std::unique_ptr<db::SqliteRunSink> openSink(const QString& dbPath, QString& saveError) {
    if (dbPath.isEmpty()) return nullptr;
    try {
        return std::make_unique<db::SqliteRunSink>(dbPath.toStdString());
    } catch (const std::exception& e) {
        saveError = QString::fromUtf8(e.what());
        return nullptr;
    }
}

// Runs the comparison, commits the store and gathers the outcome.
JobOutcome runAndStore(const std::vector<lab::Candidate>& candidates, const std::vector<lab::WorkloadRequest>& requests,
                       const lab::ComparisonOptions& opts, EventCoalescer& coalescer,
                       std::unique_ptr<db::SqliteRunSink>& sink, const QString& saveError) {
    int64_t runId = 0;
    const auto results = lab::runComparison(candidates, requests, opts, &runId);
    coalescer.flush();
    sink.reset(); // joins the store thread: the run is committed
    JobOutcome out = outcomeOf(results, runId);
    out.saveError = saveError;
    return out;
}

// Runs the sweep (each level a run through the sink), commits the store and gathers the
// last level's outcome with every level's run id.
JobOutcome sweepAndStore(const std::vector<lab::Candidate>& candidates, const std::vector<lab::WorkloadRequest>& requests,
                         const lab::ComparisonOptions& opts, const lab::SweepOptions& sweep, uint64_t seed,
                         EventCoalescer& coalescer, std::unique_ptr<db::SqliteRunSink>& sink, const QString& saveError) {
    std::vector<lab::SweepLevel> levels;
    try {
        levels = lab::runSweep(candidates, requests, opts, sweep, seed);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("sweep: ") + e.what());
    }
    coalescer.flush();
    sink.reset(); // joins the store thread: every level is committed
    JobOutcome out = levels.empty() ? JobOutcome{} : outcomeOf(levels.back().results, levels.back().runId);
    for (const auto& l : levels)
        if (l.runId > 0) out.sweepRunIds.push_back(l.runId);
    out.cancelled = out.cancelled || (sweep.cancel && sweep.cancel->load());
    out.saveError = saveError;
    return out;
}

} // namespace

void EngineWorker::runPlayground(const PlaygroundJob& job, const CancelFlag& cancel) {
    emit jobStarted(job.jobId);
    try {
        if (job.prompt.trimmed().isEmpty() && job.chat.empty()) throw std::runtime_error("the prompt is empty");
        if (job.maxTokens < 1) throw std::runtime_error("max tokens must be at least 1");
        const std::vector<lab::Candidate> candidates{toCandidate(job.a, job.dbPath, job.allowUnsandboxed),
                                                     toCandidate(job.b, job.dbPath, job.allowUnsandboxed)};
        requireSameVocab(candidates[0], candidates[1]);
        const auto tokenizer = tokenizerOf(candidates[0].modelPath);
        lab::WorkloadRequest request;
        QString note;
        if (job.chat.empty()) {
            request.prompt = tokenizer->encode(job.prompt.toStdString(), tokenizer->vocab().addBos);
        } else { // both candidates get the same ids, in A's model's template
            std::vector<engine::ChatMessage> messages;
            for (const auto& [role, content] : job.chat) messages.push_back({role.toStdString(), content.toStdString()});
            const engine::ChatTemplateChoice chat = engine::chatTemplateOf(engine::GgufFile::open(candidates[0].modelPath));
            request.prompt = engine::chatPrompt(*tokenizer, chat.family, messages);
            note = QStringLiteral("chat template: %1").arg(QString::fromUtf8(engine::chatFamilyName(chat.family)));
            if (!chat.note.empty()) note += QStringLiteral(" (%1)").arg(QString::fromStdString(chat.note));
        }
        request.maxTokens = job.maxTokens;
        for (const QString& path : job.images) request.images.push_back({.path = path.toStdString()});

        const qint64 id = job.jobId;
        EventCoalescer coalescer([this, id](CoalescedBatch&& b) {
            for (auto& [label, tokens] : b.tokens) emit tokensReceived(id, QString::fromStdString(label), tokens);
            for (auto& [label, outcome] : b.outcomes) emit requestFinished(id, QString::fromStdString(label), outcome);
        });
        lab::ComparisonOptions opts;
        opts.concurrent = job.concurrent;
        opts.run.cancel = cancel.get();
        opts.run.sampleIntervalMs = 50;
        // How much of each side's processed output went out already: one request per side,
        // whose events come in order, so each entry has one writer (made before the run).
        std::map<std::string, size_t> shownSent{{"a", 0}, {"b", 0}};
        opts.onEvent = [&coalescer, &shownSent](const std::string& label, const lab::RequestRecord& r,
                                                const engine::RequestEvent& e) {
            if (e.kind != engine::EventKind::Token) return;
            StreamedToken t{e.token, QString::fromUtf8(e.text.data(), static_cast<qsizetype>(e.text.size())),
                            r.tokenTimesMs.back() - r.submittedMs, {}};
            if (const auto it = shownSent.find(label); it != shownSent.end() && r.output.size() > it->second) {
                t.shown = QString::fromUtf8(r.output.data() + it->second, static_cast<qsizetype>(r.output.size() - it->second));
                it->second = r.output.size();
            }
            coalescer.addToken(label, std::move(t));
        };
        opts.onRecord = [&coalescer](const std::string& label, const lab::RequestRecord& r) {
            coalescer.addOutcome(label, requestOutcome(r));
        };
        opts.onSample = [&coalescer](const std::string&, const lab::StatsSample&) { coalescer.flush(); };
        QString saveError;
        std::unique_ptr<db::SqliteRunSink> sink = openSink(job.dbPath, saveError);
        lab::WorkloadSpec spec;
        spec.name = "playground";
        spec.requests = 1;
        if (sink) {
            opts.sink = sink.get();
            const QString firstLine = job.prompt.section(QLatin1Char('\n'), 0, 0).left(40);
            lab::RunConfig config;
            config.playground = lab::RunConfig::Playground{job.prompt.toStdString(),
                                                           static_cast<int64_t>(job.chat.size()), job.concurrent};
            config.maxTokens = job.maxTokens;
            opts.runInfo = runInfoFor(QStringLiteral("playground: %1").arg(firstLine), {"playground"}, spec, candidates,
                                      std::move(config));
        }
        JobOutcome outcome = runAndStore(candidates, {request}, opts, coalescer, sink, saveError);
        outcome.note = note;
        emit jobFinished(id, outcome);
    } catch (const std::exception& e) {
        emit jobFailed(job.jobId, QString::fromUtf8(e.what()));
    }
}

void EngineWorker::runBenchmark(const BenchmarkJob& job, const CancelFlag& cancel) {
    emit jobStarted(job.jobId);
    try {
        if (!job.replayOf)
            if (const std::string why = job.workload.validate(); !why.empty()) throw std::runtime_error("workload: " + why);
        std::vector<lab::Candidate> candidates{toCandidate(job.a, job.dbPath, job.allowUnsandboxed)};
        if (!job.onlyA) {
            candidates.push_back(toCandidate(job.b, job.dbPath, job.allowUnsandboxed));
            requireSameVocab(candidates[0], candidates[1]);
        }
        const auto tokenizer = tokenizerOf(candidates[0].modelPath);
        // A replay: the stored run's own prompts (its prompt file, or its synthetic spec
        // rebuilt), arrivals and primers, as `modebench-cli migrate` replays them.
        std::optional<lab::RunReplay> replay;
        if (job.replayOf)
            replay = lab::replayRun(
                *job.replayOf, job.replayPromptFile.toStdString(),
                [&](const std::string& t) { return tokenizer->encode(t, tokenizer->vocab().addBos); },
                lab::tokenSpaceFor(*tokenizer));
        const lab::WorkloadSpec& spec = replay ? replay->spec : job.workload;
        const auto requests = replay ? replay->requests : lab::buildWorkload(spec, lab::tokenSpaceFor(*tokenizer));

        const qint64 id = job.jobId;
        EventCoalescer coalescer([this, id](CoalescedBatch&& b) {
            if (!b.data.empty()) emit dataReceived(id, b.data);
        });
        lab::ComparisonOptions opts;
        opts.run.arrival = spec.arrival;
        opts.run.sampling = job.a.sampling;
        opts.run.cancel = cancel.get();
        opts.run.sampleIntervalMs = 50;
        opts.slo = job.slo;
        if (replay) opts.primers = replay->primers;
        else if (spec.sharedPrefix.groups > 0 && job.primePrefixes)
            opts.primers = lab::prefixPrimers(requests, spec.sharedPrefix.prefixTokens);
        // Progress comes after every submit: at most 20 updates a second reach the UI.
        auto lastProgress = std::chrono::steady_clock::time_point{};
        opts.onProgress = [this, id, &lastProgress](const std::string& label, const lab::RunProgress& p) {
            const auto now = std::chrono::steady_clock::now();
            if (p.done != p.total && now - lastProgress < std::chrono::milliseconds(50)) return;
            lastProgress = now;
            emit jobProgress(id, QString::fromStdString(label), p.done, p.total, p.elapsedMs);
        };
        opts.onRecord = [&coalescer](const std::string& label, const lab::RequestRecord& r) {
            coalescer.addRecord(label, r);
        };
        opts.precision.prompts = job.precisionPrompts;
        opts.precision.genTokens = job.precisionGenTokens;
        opts.precision.onProgress = [this, id](const std::string& label, int64_t done, int64_t total) {
            emit precisionProgress(id, QString::fromStdString(label), done, total);
        };
        opts.onSample = [&coalescer](const std::string& label, const lab::StatsSample& s) { coalescer.addSample(label, s); };
        QString saveError;
        std::unique_ptr<db::SqliteRunSink> sink = openSink(job.dbPath, saveError);
        if (sink) {
            opts.sink = sink.get();
            const QString vs = candidates.size() > 1
                                   ? QStringLiteral("%1 vs %2").arg(QString::fromStdString(candidates[0].profile.name),
                                                                    QString::fromStdString(candidates[1].profile.name))
                                   : QString::fromStdString(candidates[0].profile.name);
            const QString name =
                job.runName.isEmpty() ? QStringLiteral("%1, %2").arg(vs, QString::fromStdString(spec.name)) : job.runName;
            lab::RunConfig config;
            config.sampling = opts.run.sampling;
            config.arrival = spec.arrival;
            config.primers = static_cast<int64_t>(opts.primers.size());
            config.precisionPrompts = job.precisionPrompts;
            config.precisionGenTokens = job.precisionGenTokens;
            config.setSlo(job.slo);
            std::vector<std::string> tags;
            if (replay) {
                config.promptFile = replay->promptFile;
                config.maxTokens = replay->maxTokens;
                config.replaysRun = job.replayOf->id;
                tags.push_back("migration");
            }
            opts.runInfo = runInfoFor(name, tags, spec, candidates, std::move(config));
        }
        if (!job.sweep) {
            emit jobFinished(id, runAndStore(candidates, requests, opts, coalescer, sink, saveError));
            return;
        }
        lab::SweepOptions sweep;
        sweep.kind = *job.sweep;
        sweep.levels = job.sweepLevels;
        sweep.cancel = cancel.get();
        sweep.onLevel = [this, id, &coalescer](const std::string& line) {
            coalescer.flush(); // the previous level's data belongs to it
            emit sweepLevelStarted(id, QString::fromStdString(line));
        };
        emit jobFinished(id, sweepAndStore(candidates, requests, opts, sweep, spec.seed, coalescer, sink, saveError));
    } catch (const std::exception& e) {
        emit jobFailed(job.jobId, QString::fromUtf8(e.what()));
    }
}

void EngineWorker::scanPrompts(qint64 jobId, const QString& promptFile, const QString& modelPath) {
    try {
        const auto tok = tokenizerOf(modelPath.toStdString());
        const auto family = engine::chatTemplateOf(engine::GgufFile::open(modelPath.toStdString())).family;
        const auto requests = lab::loadPromptFile(
            promptFile.toStdString(), [&](const std::string& text) { return tok->encode(text, tok->vocab().addBos); }, 1,
            lab::chatTokenizeFor(*tok, family));
        std::vector<int64_t> lengths;
        for (const auto& r : requests) lengths.push_back(static_cast<int64_t>(r.prompt.size()));
        if (lengths.empty()) throw std::runtime_error(promptFile.toStdString() + " holds no prompts");
        emit promptsScanned(jobId, lengths);
    } catch (const std::exception& e) {
        emit jobFailed(jobId, QString::fromUtf8(e.what()));
    }
}

void EngineWorker::runWarmup(const WarmupJob& job) {
    emit jobStarted(job.jobId);
    try {
        const engine::Profile p = job.profile.trimmed().startsWith(QLatin1Char('{'))
                                      ? engine::Profile::fromJson(job.profile.toStdString())
                                      : engine::Profile::load(job.profile.toStdString());
        // The prompt corpus, else the run's own prompts: its prefix primers (one per
        // shared-prefix group) when it had them, else every measured prompt (as the CLI).
        // Requests with images are primed with them, through the fast candidate's own mmproj.
        std::vector<lab::WorkloadRequest> prompts;
        std::string mmproj;
        if (!job.primeFile.isEmpty() || job.run) {
            const auto tok = tokenizerOf(job.modelPath.toStdString());
            auto tokenize = [&](const std::string& t) { return tok->encode(t, tok->vocab().addBos); };
            if (!job.primeFile.isEmpty()) {
                prompts = lab::loadPromptFile(job.primeFile.toStdString(), tokenize, 1);
            } else {
                prompts = lab::warmupPrompts(lab::replayRun(*job.run, {}, tokenize, lab::tokenSpaceFor(*tok)));
            }
            if (job.run)
                for (const auto& c : job.run->candidates)
                    if (c.info.modelPath == job.modelPath.toStdString() &&
                        lab::modeOfProfile(c.info.profileJson) == lab::Mode::Fast)
                        mmproj = lab::candidateMmproj(*job.run, c.info.label);
        }
        emit warmupFinished(job.jobId, lab::runWarmup(job.modelPath.toStdString(), p, prompts, mmproj,
                                                      {.threads = job.threads}));
    } catch (const std::exception& e) {
        emit jobFailed(job.jobId, QString::fromUtf8(e.what()));
    }
}

void EngineWorker::inspectModel(qint64 jobId, const QString& path) {
    try {
        emit modelInspected(jobId, describeModel(path));
    } catch (const std::exception& e) {
        emit jobFailed(jobId, QString::fromUtf8(e.what()));
    }
}

void EngineWorker::createModel(qint64 jobId, const QString& preset, const QString& dtype, quint64 seed,
                               const QString& outPath, const CancelFlag& cancel) {
    emit jobStarted(jobId);
    try {
        const auto p = engine::findSyntheticPreset(preset.toStdString());
        if (!p) throw std::runtime_error("unknown preset '" + preset.toStdString() + "'");
        const auto type = engine::syntheticWeightsFromName(dtype.toStdString());
        if (!type)
            throw std::runtime_error("unknown weight type '" + dtype.toStdString() + "' (" +
                                     engine::syntheticWeightTypeNames() + ")");
        if (outPath.isEmpty()) throw std::runtime_error("no output file chosen");
        engine::writeSyntheticModel(*p, *type, seed, outPath.toStdString(), [&](double f) {
            emit jobProgress(jobId, QStringLiteral("create"), static_cast<qint64>(f * 1000), 1000, 0);
            return !cancel->load();
        });
        emit modelWritten(jobId, outPath);
    } catch (const std::exception& e) {
        emit jobFailed(jobId, cancel->load() ? QStringLiteral("cancelled") : QString::fromUtf8(e.what()));
    }
}

void EngineWorker::comparePrecision(const PrecisionJob& job, const CancelFlag& cancel) {
    emit jobStarted(job.jobId);
    try {
        if (job.referencePath.isEmpty()) throw std::runtime_error("no reference model");
        lab::PrecisionSubjects subjects;
        subjects.referencePath = job.referencePath.toStdString();
        subjects.candidatePath = job.candidatePath.toStdString();
        try {
            subjects.referencePrecision = engine::precisionFromName(job.referencePrecision.toStdString());
            subjects.candidatePrecision = engine::precisionFromName(job.candidatePrecision.toStdString());
        } catch (const engine::ProfileError& e) {
            throw std::runtime_error(e.what());
        }
        const engine::GgufFile header = engine::GgufFile::open(subjects.referencePath);
        const auto tokenizer = engine::Tokenizer::create(engine::Vocab::fromGguf(header));
        const auto encode = [&](const std::string& text) { return tokenizer->encode(text, tokenizer->vocab().addBos); };
        std::vector<lab::WorkloadRequest> requests;
        if (job.promptFile.isEmpty()) {
            for (const auto& text : lab::samplePrecisionTexts()) requests.push_back({.prompt = encode(text)});
        } else {
            requests = lab::loadPromptFile(job.promptFile.toStdString(), encode, 1);
            if (requests.empty()) throw std::runtime_error(job.promptFile.toStdString() + " holds no prompts");
        }
        const int64_t context = engine::ModelConfig::fromGguf(header).contextLength;
        const auto prompts = lab::precisionPrompts(requests, job.maxPrompts, 256, job.genTokens, context);
        lab::PrecisionCheckOptions o;
        o.genTokens = job.genTokens;
        o.cancel = cancel.get();
        o.onProgress = [this, &job](const std::string&, int64_t done, int64_t total) {
            emit jobProgress(job.jobId, QStringLiteral("precision"), done, total, 0);
        };
        const auto result = lab::checkPrecision(subjects, prompts, job.threads, o, "precision");
        if (!result || cancel->load()) throw std::runtime_error("cancelled");
        emit precisionCompared(job.jobId, *result);
    } catch (const std::exception& e) {
        emit jobFailed(job.jobId, cancel->load() ? QStringLiteral("cancelled") : QString::fromUtf8(e.what()));
    }
}

void EngineWorker::quantizeModel(qint64 jobId, const QString& inPath, const QString& target, const QString& outPath,
                                 const CancelFlag& cancel) {
    emit jobStarted(jobId);
    try {
        const auto t = engine::quantizeTargetFromName(target.toStdString());
        if (!t) throw std::runtime_error("unknown target '" + target.toStdString() + "' (" + engine::quantizeTargetNames() +
                                     ")");
        if (outPath.isEmpty()) throw std::runtime_error("no output file chosen");
        if (QFileInfo(inPath).absoluteFilePath() == QFileInfo(outPath).absoluteFilePath())
            throw std::runtime_error("the output file must differ from the input");
        engine::quantizeModel(inPath.toStdString(), outPath.toStdString(), *t, [&](double f) {
            emit jobProgress(jobId, QStringLiteral("quantize"), static_cast<qint64>(f * 1000), 1000, 0);
            return !cancel->load();
        });
        emit modelWritten(jobId, outPath);
    } catch (const std::exception& e) {
        emit jobFailed(jobId, cancel->load() ? QStringLiteral("cancelled") : QString::fromUtf8(e.what()));
    }
}

} // namespace mb::gui
