// RunStore's selections: save, load, list and update the migration state of saved selections.
#include "db/run_store.h"

namespace mb::db {

namespace {

constexpr const char* kColumns =
    "SELECT id, created_at, run_ids, requirements_json, prices_json, result_json, migration_json "
    "FROM selections";

StoredSelection readSelection(Statement& s) {
    StoredSelection sel;
    sel.id = s.columnInt(0);
    sel.createdAt = s.columnText(1);
    try {
        sel.runIds = nlohmann::json::parse(s.columnText(2)).get<std::vector<int64_t>>();
    } catch (const nlohmann::json::exception&) {
        // A hand-edited run_ids column: show no runs rather than fail the whole list.
    }
    sel.requirementsJson = s.columnText(3);
    sel.pricesJson = s.columnText(4);
    sel.resultJson = s.columnText(5);
    sel.migrationJson = s.columnText(6);
    return sel;
}

[[noreturn]] void noSelection(int64_t id, const std::string& path) {
    throw DbError("no selection " + std::to_string(id) + " in " + path);
}

} // namespace

int64_t RunStore::saveSelection(const StoredSelection& sel) {
    if (sel.runIds.empty()) throw DbError("a selection needs at least one run");
    Transaction tx(m_connection, Transaction::Kind::Immediate);
    for (const int64_t id : sel.runIds)
        if (!hasRun(id)) throw DbError("no run " + std::to_string(id) + " in " + path());
    Statement s = m_connection.prepare(
        "INSERT INTO selections (run_id, created_at, run_ids, requirements_json, prices_json, "
        "result_json, migration_json) VALUES (?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, sel.runIds.front());
    s.bind(2, isoNowUtc());
    s.bind(3, nlohmann::json(sel.runIds).dump());
    s.bindTextOrNull(4, sel.requirementsJson);
    s.bindTextOrNull(5, sel.pricesJson);
    s.bindTextOrNull(6, sel.resultJson);
    s.bindTextOrNull(7, sel.migrationJson);
    s.run();
    const int64_t id = m_connection.lastInsertId();
    tx.commit();
    return id;
}

StoredSelection RunStore::getSelection(int64_t id) const {
    Statement s = m_connection.prepare(std::string(kColumns) + " WHERE id = ?");
    s.bind(1, id);
    if (!s.step()) noSelection(id, path());
    return readSelection(s);
}

std::vector<StoredSelection> RunStore::listSelections(std::optional<int64_t> runId) const {
    std::string sql = kColumns;
    if (runId) sql += " WHERE EXISTS (SELECT 1 FROM json_each(selections.run_ids) WHERE json_each.value = ?)";
    Statement s = m_connection.prepare(sql + " ORDER BY created_at DESC, id DESC");
    if (runId) s.bind(1, *runId);
    std::vector<StoredSelection> out;
    while (s.step()) out.push_back(readSelection(s));
    return out;
}

void RunStore::setSelectionMigration(int64_t id, const std::string& migrationJson) {
    Statement s = m_connection.prepare("UPDATE selections SET migration_json = ? WHERE id = ?");
    s.bindAll(migrationJson, id).run();
    if (m_connection.changes() == 0) noSelection(id, path());
}

void RunStore::deleteSelection(int64_t id) {
    Statement s = m_connection.prepare("DELETE FROM selections WHERE id = ?");
    s.bind(1, id).run();
    if (m_connection.changes() == 0) noSelection(id, path());
}

} // namespace mb::db
