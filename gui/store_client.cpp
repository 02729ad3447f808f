// StoreClient: queued calls into the store thread and the relayed answers.
#include "gui/store_client.h"

namespace mb::gui {

StoreClient::StoreClient(QObject* parent) : QObject(parent) {
    m_thread.setObjectName(QStringLiteral("mb-store-reader"));
    m_worker = new StoreWorker;
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &StoreWorker::opened, this, [this](qint64 id, const QString& path) {
        m_path = path;
        emit opened(id, path);
    });
    connect(m_worker, &StoreWorker::runsListed, this, &StoreClient::runsListed);
    connect(m_worker, &StoreWorker::runLoaded, this, &StoreClient::runLoaded);
    connect(m_worker, &StoreWorker::runOpened, this, &StoreClient::runOpened);
    connect(m_worker, &StoreWorker::runChanged, this, &StoreClient::runChanged);
    connect(m_worker, &StoreWorker::runDeleted, this, &StoreClient::runDeleted);
    connect(m_worker, &StoreWorker::runHasSelections, this, &StoreClient::runHasSelections);
    connect(m_worker, &StoreWorker::runExported, this, &StoreClient::runExported);
    connect(m_worker, &StoreWorker::runsCompared, this, &StoreClient::runsCompared);
    connect(m_worker, &StoreWorker::selected, this, &StoreClient::selected);
    connect(m_worker, &StoreWorker::selectionsListed, this, &StoreClient::selectionsListed);
    connect(m_worker, &StoreWorker::migrationSaved, this, &StoreClient::migrationSaved);
    connect(m_worker, &StoreWorker::reportBuilt, this, &StoreClient::reportBuilt);
    connect(m_worker, &StoreWorker::reportExported, this, &StoreClient::reportExported);
    connect(m_worker, &StoreWorker::pluginApprovalsListed, this, &StoreClient::pluginApprovalsListed);
    connect(m_worker, &StoreWorker::pluginApproved, this, &StoreClient::pluginApproved);
    connect(m_worker, &StoreWorker::pluginRevoked, this, &StoreClient::pluginRevoked);
    connect(m_worker, &StoreWorker::scriptAudited, this, &StoreClient::scriptAudited);
    connect(m_worker, &StoreWorker::sandboxProbed, this, &StoreClient::sandboxProbed);
    connect(m_worker, &StoreWorker::failed, this, &StoreClient::failed);
    m_thread.start();
}

StoreClient::~StoreClient() {
    m_thread.quit();
    m_thread.wait();
}

template <typename F> qint64 StoreClient::post(F work) {
    const qint64 id = m_next++;
    QMetaObject::invokeMethod(m_worker, [w = m_worker, id, work] { work(*w, id); }, Qt::QueuedConnection);
    return id;
}

qint64 StoreClient::open(const QString& path) {
    return post([path](StoreWorker& w, qint64 id) { w.open(id, path); });
}
qint64 StoreClient::listRuns(const db::RunFilter& filter) {
    return post([filter](StoreWorker& w, qint64 id) { w.listRuns(id, filter); });
}
qint64 StoreClient::loadRun(qint64 runId) {
    return post([runId](StoreWorker& w, qint64 id) { w.loadRun(id, runId); });
}
qint64 StoreClient::openRun(qint64 runId) {
    return post([runId](StoreWorker& w, qint64 id) { w.openRun(id, runId); });
}
qint64 StoreClient::renameRun(qint64 runId, const QString& name) {
    return post([runId, name](StoreWorker& w, qint64 id) { w.renameRun(id, runId, name); });
}
qint64 StoreClient::setTags(qint64 runId, const QStringList& tags) {
    return post([runId, tags](StoreWorker& w, qint64 id) { w.setTags(id, runId, tags); });
}
qint64 StoreClient::deleteRun(qint64 runId, bool withSelections) {
    return post([runId, withSelections](StoreWorker& w, qint64 id) { w.deleteRun(id, runId, withSelections); });
}
qint64 StoreClient::exportRun(qint64 runId, const QString& format, const QString& outPath) {
    return post([runId, format, outPath](StoreWorker& w, qint64 id) { w.exportRun(id, runId, format, outPath); });
}
qint64 StoreClient::compareRuns(const std::vector<int64_t>& runIds) {
    return post([runIds](StoreWorker& w, qint64 id) { w.compareRuns(id, runIds); });
}

qint64 StoreClient::select(const SelectionRequest& request) {
    return post([request](StoreWorker& w, qint64 id) { w.select(id, request); });
}
qint64 StoreClient::listSelections() {
    return post([](StoreWorker& w, qint64 id) { w.listSelections(id); });
}
qint64 StoreClient::saveMigration(qint64 selectionId, const QString& migrationJson) {
    return post([selectionId, migrationJson](StoreWorker& w, qint64 id) { w.saveMigration(id, selectionId, migrationJson); });
}
qint64 StoreClient::buildReport(qint64 runId, qint64 selectionId) {
    return post([runId, selectionId](StoreWorker& w, qint64 id) { w.buildReport(id, runId, selectionId); });
}
qint64 StoreClient::exportReport(const lab::Report& report, const QString& format, const QString& outPath) {
    return post([report, format, outPath](StoreWorker& w, qint64 id) { w.exportReport(id, report, format, outPath); });
}

qint64 StoreClient::listPluginApprovals() {
    return post([](StoreWorker& w, qint64 id) { w.listPluginApprovals(id); });
}
qint64 StoreClient::approvePlugin(const db::PluginApproval& approval) {
    return post([approval](StoreWorker& w, qint64 id) { w.approvePlugin(id, approval); });
}
qint64 StoreClient::revokePlugin(const QString& sha256) {
    return post([sha256](StoreWorker& w, qint64 id) { w.revokePlugin(id, sha256); });
}
qint64 StoreClient::auditScript(const QString& path, bool allowUnsandboxed) {
    return post([path, allowUnsandboxed](StoreWorker& w, qint64 id) { w.auditScript(id, path, allowUnsandboxed); });
}
qint64 StoreClient::probeSandbox() {
    return post([](StoreWorker& w, qint64 id) { w.probeSandbox(id); });
}

} // namespace mb::gui
