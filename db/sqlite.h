// A thin RAII layer over the sqlite3 C API: connections, prepared statements, transactions.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace mb::db {

// Every failure of the store: sqlite's message, the SQL involved (when there is one) and
// sqlite's extended result code (0 when the error did not come from sqlite). One line.
class DbError : public std::runtime_error {
public:
    explicit DbError(const std::string& what, int code = 0)
        : std::runtime_error(what), m_code(code) {}
    int code() const { return m_code; }

private:
    int m_code;
};

enum class OpenMode {
    ReadOnly,        // never writes the file (a WAL database may still get its -wal and -shm)
    ReadWrite,       // the file must exist
    ReadWriteCreate, // created when missing
    // Read-only, no locks, no -wal/-shm files: sqlite's immutable=1. Only correct when
    // nothing else writes the file and it has no WAL content (see schema.cpp).
    Immutable,
};

class Statement;

// One sqlite3 connection. Move-only; closes on destruction (finalize every Statement
// first — Statements must not outlive their Connection). Opened without sqlite's own
// mutex (SQLITE_OPEN_NOMUTEX): one thread at a time may use a Connection and its
// Statements, and a Connection may be handed from one thread to another.
class Connection {
public:
    // Opens `path` as is: no pragmas, no schema. Throws DbError "cannot open PATH: ...".
    static Connection open(const std::string& path, OpenMode mode);

    Connection() = default;
    Connection(Connection&& other) noexcept;
    Connection& operator=(Connection&& other) noexcept;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    ~Connection();

    bool isOpen() const { return m_db != nullptr; }
    const std::string& path() const { return m_path; }
    // The absolute file name sqlite resolved `path` to (what lock files are named after).
    std::string filename() const;
    sqlite3* handle() const { return m_db; }

    // Runs one or more statements that return no rows of interest.
    void exec(std::string_view sql);
    Statement prepare(std::string_view sql) const;
    // The first column of the first row as an integer (e.g. "PRAGMA user_version").
    int64_t queryInt(std::string_view sql) const;
    std::string queryText(std::string_view sql) const;

    int64_t lastInsertId() const;
    int64_t changes() const; // rows changed by the last INSERT/UPDATE/DELETE
    bool inTransaction() const;
    void close(); // idempotent; throws if statements are still open

    // Throws DbError built from the connection's last error when rc is not OK/ROW/DONE.
    void check(int rc, std::string_view sql) const;

private:
    Connection(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    sqlite3* m_db = nullptr;
    std::string m_path;
};

// A prepared statement. Parameters are 1-based, columns 0-based (sqlite's convention).
// Reusable: reset() rewinds it and clears the bindings, so hot inserts prepare once.
class Statement {
public:
    Statement() = default;
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    Statement& bind(int index, double v);
    Statement& bind(int index, std::string_view v); // copied by sqlite (SQLITE_TRANSIENT)
    Statement& bind(int index, const char* v) { return bind(index, std::string_view(v)); }
    Statement& bind(int index, const std::string& v) { return bind(index, std::string_view(v)); }
    Statement& bind(int index, std::nullptr_t);
    Statement& bindInt(int index, int64_t v);
    template <class T>
    requires std::is_integral_v<T> Statement& bind(int index, T v) {
        return bindInt(index, static_cast<int64_t>(v));
    }
    Statement& bindBlob(int index, const void* data, size_t bytes);
    // NULL when `text` is empty, else the text.
    Statement& bindTextOrNull(int index, std::string_view text);
    // NULL when `v` is negative (the records' "never happened"), else the value.
    Statement& bindNonNegativeOrNull(int index, double v);

    // Binds each argument to parameters 1, 2, ... in order.
    template <class... Args> Statement& bindAll(Args&&... args) {
        int i = 0;
        (bind(++i, std::forward<Args>(args)), ...);
        return *this;
    }

    // true: a row is ready to read; false: the statement is done.
    bool step();
    // Steps to completion (for statements that return no rows), then reset().
    void run();
    void reset(); // rewinds and clears the bindings

    bool isNull(int column) const;
    int64_t columnInt(int column) const;
    double columnDouble(int column) const;
    // -1 when NULL (the records' "never happened"), else the value.
    double columnDoubleOrNegative(int column) const;
    std::string columnText(int column) const; // "" when NULL
    // Valid until the next step/reset.
    std::string_view columnTextView(int column) const;
    std::vector<uint8_t> columnBlob(int column) const;
    const void* columnBlobData(int column, size_t* bytes) const;

    const char* sql() const;
    // Index of a named parameter (":name"), 0 when the statement has none of that name.
    int parameterIndex(const char* name) const;

private:
    friend class Connection;
    Statement(sqlite3_stmt* stmt, sqlite3* db) : m_stmt(stmt), m_db(db) {}
    void checkBind(int rc, int index);
    sqlite3_stmt* m_stmt = nullptr;
    sqlite3* m_db = nullptr;
};

// BEGIN on construction; ROLLBACK on destruction unless commit() was called. Deferred
// transactions start reading (or writing) at their first statement and take one snapshot
// for all reads; Immediate ones take the write lock at once, so they never fail with
// SQLITE_BUSY halfway through (the busy timeout applies to BEGIN instead).
class Transaction {
public:
    enum class Kind { Deferred, Immediate };
    explicit Transaction(Connection& connection, Kind kind = Kind::Immediate);
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();
    void commit();

private:
    Connection& m_connection;
    bool m_done = false;
};

} // namespace mb::db
