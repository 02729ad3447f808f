// The RAII sqlite3 wrappers: every failing call becomes a DbError naming sqlite's message and the
// SQL.
#include "db/sqlite.h"

#include <sqlite3.h>

#include <cstdio>
#include <utility>

namespace mb::db {

namespace {

std::string oneLine(std::string_view sql) {
    std::string s;
    s.reserve(sql.size());
    bool space = false;
    for (char c : sql) {
        const bool ws = c == ' ' || c == '\n' || c == '\t' || c == '\r';
        if (ws) {
            space = !s.empty();
            continue;
        }
        if (space) s += ' ';
        space = false;
        s += c;
    }
    if (s.size() > 200) s = s.substr(0, 197) + "...";
    return s;
}

[[noreturn]] void fail(sqlite3* db, int rc, std::string_view sql) {
    std::string what = "sqlite: ";
    what += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    const int code = db ? sqlite3_extended_errcode(db) : rc;
    if (!sql.empty()) what += " (in: " + oneLine(sql) + ")";
    throw DbError(what, code);
}

} // namespace

// ---- Connection ----

Connection Connection::open(const std::string& path, OpenMode mode) {
    int flags = SQLITE_OPEN_NOMUTEX;
    switch (mode) {
    case OpenMode::ReadOnly:
        flags |= SQLITE_OPEN_READONLY;
        break;
    case OpenMode::ReadWrite:
        flags |= SQLITE_OPEN_READWRITE;
        break;
    case OpenMode::ReadWriteCreate:
        flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        break;
    case OpenMode::Immutable:
        flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
        break;
    }
    std::string name = path;
    if (mode == OpenMode::Immutable) {
        name = "file:";
        for (char ch : path) {
            if (ch == '%' || ch == '?' || ch == '#') {
                char buf[4];
                std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(ch));
                name += buf;
            } else {
                name += ch;
            }
        }
        name += "?immutable=1";
    }
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close_v2(db);
        throw DbError("cannot open " + path + ": " + why, rc);
    }
    sqlite3_extended_result_codes(db, 1);
    return Connection(db, path);
}

Connection::Connection(Connection&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
    if (this != &other) {
        if (m_db) sqlite3_close_v2(m_db);
        m_db = std::exchange(other.m_db, nullptr);
        m_path = std::move(other.m_path);
    }
    return *this;
}

Connection::~Connection() {
    // close_v2 defers the close until the last statement is finalized instead of failing.
    if (m_db) sqlite3_close_v2(m_db);
}

void Connection::close() {
    if (!m_db) return;
    const int rc = sqlite3_close(m_db);
    if (rc != SQLITE_OK) fail(m_db, rc, "");
    m_db = nullptr;
}

void Connection::check(int rc, std::string_view sql) const {
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) fail(m_db, rc, sql);
}

void Connection::exec(std::string_view sql) {
    const std::string text(sql);
    char* err = nullptr;
    const int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string what = "sqlite: ";
        what += err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        throw DbError(what + " (in: " + oneLine(sql) + ")", sqlite3_extended_errcode(m_db));
    }
}

Statement Connection::prepare(std::string_view sql) const {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) fail(m_db, rc, sql);
    if (!stmt) throw DbError("sqlite: empty statement (in: " + oneLine(sql) + ")");
    return Statement(stmt, m_db);
}

int64_t Connection::queryInt(std::string_view sql) const {
    Statement s = prepare(sql);
    if (!s.step()) throw DbError("sqlite: no row (in: " + oneLine(sql) + ")");
    return s.columnInt(0);
}

std::string Connection::queryText(std::string_view sql) const {
    Statement s = prepare(sql);
    if (!s.step()) throw DbError("sqlite: no row (in: " + oneLine(sql) + ")");
    return s.columnText(0);
}

std::string Connection::filename() const {
    const char* f = m_db ? sqlite3_db_filename(m_db, "main") : nullptr;
    return f && *f ? std::string(f) : m_path;
}

int64_t Connection::lastInsertId() const {
    return sqlite3_last_insert_rowid(m_db);
}
int64_t Connection::changes() const {
    return sqlite3_changes64(m_db);
}
bool Connection::inTransaction() const {
    return m_db && sqlite3_get_autocommit(m_db) == 0;
}

// ---- Statement ----

Statement::Statement(Statement&& other) noexcept
    : m_stmt(std::exchange(other.m_stmt, nullptr)), m_db(std::exchange(other.m_db, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(m_stmt);
        m_stmt = std::exchange(other.m_stmt, nullptr);
        m_db = std::exchange(other.m_db, nullptr);
    }
    return *this;
}

Statement::~Statement() {
    sqlite3_finalize(m_stmt);
}

const char* Statement::sql() const {
    return m_stmt ? sqlite3_sql(m_stmt) : "";
}

int Statement::parameterIndex(const char* name) const {
    return sqlite3_bind_parameter_index(m_stmt, name);
}

void Statement::checkBind(int rc, int index) {
    if (rc == SQLITE_OK) return;
    if (rc == SQLITE_RANGE)
        throw DbError(
            "sqlite: no parameter " + std::to_string(index) + " (in: " + oneLine(sql()) + ")", rc);
    fail(m_db, rc, sql());
}

Statement& Statement::bind(int index, double v) {
    checkBind(sqlite3_bind_double(m_stmt, index, v), index);
    return *this;
}

Statement& Statement::bind(int index, std::string_view v) {
    checkBind(sqlite3_bind_text64(m_stmt, index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
              index);
    return *this;
}

Statement& Statement::bind(int index, std::nullptr_t) {
    checkBind(sqlite3_bind_null(m_stmt, index), index);
    return *this;
}

Statement& Statement::bindInt(int index, int64_t v) {
    checkBind(sqlite3_bind_int64(m_stmt, index, v), index);
    return *this;
}

Statement& Statement::bindBlob(int index, const void* data, size_t bytes) {
    // A zero-length blob is stored as an empty blob, not NULL.
    checkBind(sqlite3_bind_blob64(m_stmt, index, bytes ? data : "", bytes, SQLITE_TRANSIENT),
              index);
    return *this;
}

Statement& Statement::bindTextOrNull(int index, std::string_view text) {
    return text.empty() ? bind(index, nullptr) : bind(index, text);
}

Statement& Statement::bindNonNegativeOrNull(int index, double v) {
    return v < 0 ? bind(index, nullptr) : bind(index, v);
}

bool Statement::step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    // Keep the message before reset() replaces it.
    std::string what =
        std::string("sqlite: ") + sqlite3_errmsg(m_db) + " (in: " + oneLine(sql()) + ")";
    const int code = sqlite3_extended_errcode(m_db);
    sqlite3_reset(m_stmt);
    throw DbError(what, code);
}

void Statement::run() {
    while (step()) {
    }
    reset();
}

void Statement::reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

bool Statement::isNull(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}
int64_t Statement::columnInt(int column) const {
    return sqlite3_column_int64(m_stmt, column);
}
double Statement::columnDouble(int column) const {
    return sqlite3_column_double(m_stmt, column);
}

double Statement::columnDoubleOrNegative(int column) const {
    return isNull(column) ? -1.0 : sqlite3_column_double(m_stmt, column);
}

std::string Statement::columnText(int column) const {
    return std::string(columnTextView(column));
}

std::string_view Statement::columnTextView(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
}

const void* Statement::columnBlobData(int column, size_t* bytes) const {
    const void* p = sqlite3_column_blob(m_stmt, column);
    *bytes = p ? static_cast<size_t>(sqlite3_column_bytes(m_stmt, column)) : 0;
    return p;
}

std::vector<uint8_t> Statement::columnBlob(int column) const {
    size_t n = 0;
    const auto* p = static_cast<const uint8_t*>(columnBlobData(column, &n));
    return p ? std::vector<uint8_t>(p, p + n) : std::vector<uint8_t>{};
}

// ---- Transaction ----

Transaction::Transaction(Connection& connection, Kind kind) : m_connection(connection) {
    m_connection.exec(kind == Kind::Immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}

Transaction::~Transaction() {
    if (m_done) return;
    // A failed COMMIT or an error that sqlite answered with an automatic rollback leaves
    // no transaction to roll back.
    if (m_connection.inTransaction())
        sqlite3_exec(m_connection.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    m_connection.exec("COMMIT");
    m_done = true;
}

} // namespace mb::db
