// StoreWorker: RunStore calls on the store thread, answered by signals.
#include "gui/store_worker.h"

#include "db/run_document.h"
#include "lab/atomic_file.h"
#include "lab/precision_check.h"

#include <nlohmann/json.hpp>

#include <sstream>
#include <stdexcept>

namespace mb::gui {

lab::RunSummary summaryOf(const db::StoredCandidate& c) {
    lab::RunSummary s = lab::summarize(c.requests, {});
    try {
        const auto j = nlohmann::json::parse(c.summaryJson);
        if (j.contains("prefix_cache")) {
            s.prefixQueries = j["prefix_cache"].value("queries", uint64_t{0});
            s.prefixHits = j["prefix_cache"].value("hits", uint64_t{0});
            s.hitRate = j["prefix_cache"].value("hit_rate", 0.0);
        }
        s.kvBytesPeak = std::max(s.kvBytesPeak, j.value("kv_bytes_peak", uint64_t{0}));
        s.sloAttainment = j.value("slo_attainment", s.sloAttainment);
        s.precision = lab::precisionCheckFromJson(j);
    } catch (const std::exception&) {
        // No stored summary (an interrupted run): the recomputed one stands.
    }
    return s;
}

db::RunStore& StoreWorker::store() {
    if (!m_store) throw std::runtime_error("no database is open (choose one in Settings)");
    return *m_store;
}

void StoreWorker::open(qint64 requestId, const QString& path) {
    try {
        m_store.reset();
        m_path.clear();
        m_store.emplace(db::RunStore::open(path.toStdString()));
        m_path = path;
        emit opened(requestId, path);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::listRuns(qint64 requestId, const db::RunFilter& filter) {
    try {
        emit runsListed(requestId, store().listRuns(filter));
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::loadRun(qint64 requestId, qint64 runId) {
    try {
        emit runLoaded(requestId, store().getRun(runId, db::RunDetail::Full));
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::openRun(qint64 requestId, qint64 runId) {
    try {
        const db::StoredRun run = store().getRun(runId, db::RunDetail::Full);
        SummaryList summaries; // summarize sorts every latency: here, not on the UI thread
        for (const auto& c : run.candidates) summaries.push_back(summaryOf(c));
        emit runOpened(requestId, run, summaries);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::renameRun(qint64 requestId, qint64 runId, const QString& name) {
    try {
        store().renameRun(runId, name.toStdString());
        emit runChanged(requestId, runId);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::setTags(qint64 requestId, qint64 runId, const QStringList& tags) {
    try {
        std::vector<std::string> t;
        for (const QString& s : tags)
            if (!s.trimmed().isEmpty()) t.push_back(s.trimmed().toStdString());
        store().setTags(runId, t);
        emit runChanged(requestId, runId);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::deleteRun(qint64 requestId, qint64 runId, bool withSelections) {
    try {
        const auto deleted =
            store().deleteRun(runId, withSelections ? db::SelectionsOfRun::Delete : db::SelectionsOfRun::Refuse);
        emit runDeleted(requestId, runId, deleted);
        emit runChanged(requestId, runId);
    } catch (const db::RunHasSelectionsError& e) {
        emit runHasSelections(requestId, runId, e.selections);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::exportRun(qint64 requestId, qint64 runId, const QString& format, const QString& outPath) {
    try {
        // Serialized whole, then written whole or not at all (a temporary file beside the
        // target, flushed and renamed; removed on failure, the old file left as it was).
        std::ostringstream out;
        if (format == QLatin1String("csv")) {
            db::writeRunCsv(store().getRun(runId, db::RunDetail::Full), out);
        } else if (format == QLatin1String("json")) {
            out << store().exportRun(runId).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
        } else {
            throw std::runtime_error("unknown export format '" + format.toStdString() + "' (json or csv)");
        }
        lab::writeFileAtomically(outPath.toStdString(), out.view());
        emit runExported(requestId, outPath);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::compareRuns(qint64 requestId, const std::vector<int64_t>& runIds) {
    try {
        emit runsCompared(requestId, store().metricsTable(runIds));
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

} // namespace mb::gui
