// StoreWorker's selection and report verbs: runs loaded with their requests, decided, saved, reported.
#include "gui/store_worker.h"

#include "lab/atomic_file.h"
#include "lab/migration.h"
#include "lab/prompt_tokenizer.h"
#include "lab/report_render.h"

#include <QDateTime>

namespace mb::gui {

namespace {

std::vector<lab::StoredRun> loadRuns(const db::RunStore& store, const std::vector<int64_t>& ids) {
    std::vector<lab::StoredRun> runs;
    for (const int64_t id : ids) runs.push_back(store.getRun(id, db::RunDetail::Full));
    return runs;
}

} // namespace

void StoreWorker::select(qint64 requestId, const SelectionRequest& request) {
    try {
        if (request.runIds.empty()) throw std::runtime_error("choose a run first");
        db::RunStore& s = store();
        const auto runs = loadRuns(s, request.runIds);
        lab::SelectionOptions options;
        options.baseDirectory = request.baseDirectory.toStdString();
        std::shared_ptr<const engine::Tokenizer> tokenizer;
        if (!request.requirements.inputs.promptFile.empty()) {
            tokenizer = lab::promptTokenizer(runs, {}, options);
            if (!tokenizer)
                throw std::runtime_error("the requirements name a prompt file, but the run's model file (its tokenizer) "
                                         "is not readable here");
        }
        const lab::SelectionResult result = lab::select(request.requirements, request.prices, runs, options);
        db::StoredSelection sel;
        sel.runIds = request.runIds;
        sel.requirementsJson = lab::toJson(request.requirements).dump();
        if (request.prices) sel.pricesJson = lab::toJson(*request.prices).dump();
        sel.resultJson = lab::toJson(result).dump();
        const int64_t id = s.saveSelection(sel);
        emit selected(requestId, result, id);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::listSelections(qint64 requestId) {
    try {
        emit selectionsListed(requestId, store().listSelections());
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::saveMigration(qint64 requestId, qint64 selectionId, const QString& migrationJson) {
    try {
        store().setSelectionMigration(selectionId, migrationJson.toStdString());
        emit migrationSaved(requestId, selectionId);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::buildReport(qint64 requestId, qint64 runId, qint64 selectionId) {
    try {
        db::RunStore& s = store();
        std::vector<int64_t> ids{runId};
        std::optional<lab::ReportSelection> selection;
        if (selectionId > 0) {
            const db::StoredSelection sel = s.getSelection(selectionId);
            ids = sel.runIds;
            lab::ReportSelection r;
            r.id = sel.id;
            r.result = lab::selectionResultFromJson(nlohmann::json::parse(sel.resultJson));
            r.requirements = nlohmann::ordered_json::parse(sel.requirementsJson);
            r.prices = sel.pricesJson.empty() ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json::parse(sel.pricesJson);
            if (!sel.migrationJson.empty()) r.migration = lab::migrationFromJson(nlohmann::json::parse(sel.migrationJson));
            selection = std::move(r);
        }
        const std::string now = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
        emit reportBuilt(requestId, lab::buildReport(loadRuns(s, ids), selection, now));
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::exportReport(qint64 requestId, const lab::Report& report, const QString& format,
                               const QString& outPath) {
    try {
        std::string text;
        if (format == QLatin1String("html")) text = lab::renderHtml(report);
        else if (format == QLatin1String("md")) text = lab::renderMarkdown(report);
        else if (format == QLatin1String("json")) text = lab::renderJson(report).dump(2) + "\n";
        else if (format == QLatin1String("csv")) text = lab::renderCsv(report);
        else throw std::runtime_error("unknown report format '" + format.toStdString() + "' (html, md, json or csv)");
        lab::writeFileAtomically(outPath.toStdString(), text); // whole or not at all
        emit reportExported(requestId, outPath);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

} // namespace mb::gui
