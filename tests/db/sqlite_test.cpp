// The RAII sqlite layer: statements, bindings, errors naming the SQL, transactions that roll back.
#include "db/sqlite.h"
#include "db_test_util.h"

#include <gtest/gtest.h>

using namespace mb::db;
using mb::test::TempDir;

TEST(Sqlite, BindStepAndColumns) {
    TempDir dir;
    Connection c = Connection::open(dir / "t.db", OpenMode::ReadWriteCreate);
    c.exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB)");
    Statement ins = c.prepare("INSERT INTO t VALUES (?, ?, ?, ?)");
    const int32_t blob[3] = {1, -2, 3};
    ins.bindAll(int64_t{1} << 40, 2.5, std::string("héllo")).bindBlob(4, blob, sizeof blob).run();
    ins.bindAll(7, nullptr, "").bindBlob(4, nullptr, 0).run(); // reused after run()
    EXPECT_EQ(c.lastInsertId(), 2);
    Statement sel = c.prepare("SELECT i, d, s, b FROM t ORDER BY rowid");
    ASSERT_TRUE(sel.step());
    EXPECT_EQ(sel.columnInt(0), int64_t{1} << 40);
    EXPECT_EQ(sel.columnDouble(1), 2.5);
    EXPECT_EQ(sel.columnText(2), "héllo");
    EXPECT_EQ(sel.columnBlob(3).size(), sizeof blob);
    ASSERT_TRUE(sel.step());
    EXPECT_TRUE(sel.isNull(1));
    EXPECT_EQ(sel.columnDoubleOrNegative(1), -1.0);
    EXPECT_FALSE(sel.isNull(3)); // an empty blob, not NULL
    EXPECT_FALSE(sel.step());
}

TEST(Sqlite, ErrorsCarryMessageAndSql) {
    TempDir dir;
    Connection c = Connection::open(dir / "t.db", OpenMode::ReadWriteCreate);
    try {
        c.prepare("SELECT nope FROM nowhere");
        FAIL() << "no error";
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("no such table: nowhere"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("SELECT nope FROM nowhere"), std::string::npos)
            << e.what();
        EXPECT_NE(e.code(), 0);
    }
    c.exec("CREATE TABLE u (x INTEGER UNIQUE)");
    Statement ins = c.prepare("INSERT INTO u VALUES (?)");
    ins.bindAll(1).run();
    ins.bindAll(1);
    EXPECT_THROW(ins.step(), DbError);
    EXPECT_THROW(ins.bind(5, 1), DbError); // no such parameter
    EXPECT_THROW(Connection::open(dir / "missing/x.db", OpenMode::ReadWriteCreate), DbError);
}

TEST(Sqlite, TransactionRollsBackUnlessCommitted) {
    TempDir dir;
    Connection c = Connection::open(dir / "t.db", OpenMode::ReadWriteCreate);
    c.exec("CREATE TABLE t (x)");
    {
        Transaction tx(c);
        c.exec("INSERT INTO t VALUES (1)");
        EXPECT_TRUE(c.inTransaction());
    }
    EXPECT_FALSE(c.inTransaction());
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM t"), 0);
    try {
        Transaction tx(c);
        c.exec("INSERT INTO t VALUES (2)");
        throw std::runtime_error("boom");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM t"), 0);
    {
        Transaction tx(c);
        c.exec("INSERT INTO t VALUES (3)");
        tx.commit();
    }
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM t"), 1);
}
