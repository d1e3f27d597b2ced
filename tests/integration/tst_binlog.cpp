// The binlog decoder and the dump connection against the real MariaDB test server: every column
// type decoded to the type-mapping text (and equal to what a SELECT formatted the same way gives),
// rotation, resuming from a stored position or GTID, purged binlogs, server_id clashes, a missing
// privilege, and stopping a blocked reader from another thread.
#include "core/db/mysqlreplication.h"
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>
#include <mysql.h>

#include <chrono>
#include <functional>
#include <thread>
#include <unistd.h>

using namespace driftless;
using namespace driftless::core;
using namespace driftless::core::binlog;
using driftless::test::servers;
using driftless::test::uniqueName;

namespace {

/// A plain SQL connection to the test MariaDB (libmariadb), for setting up and checking.
class Sql {
public:
    explicit Sql(const std::string &user = servers().myUser, const std::string &password = servers().myPassword)
    {
        m_mysql = mysql_init(nullptr);
        mysql_optionsv(m_mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
        if (!mysql_real_connect(m_mysql, servers().myHost.c_str(), user.c_str(), password.c_str(), nullptr,
                                static_cast<unsigned>(servers().myPort), nullptr, 0))
            throw std::runtime_error(std::string("connect: ") + mysql_error(m_mysql));
        exec("SET time_zone = '+00:00'");
    }
    ~Sql() { mysql_close(m_mysql); }
    void exec(const std::string &sql)
    {
        if (mysql_real_query(m_mysql, sql.data(), sql.size()))
            throw std::runtime_error(sql + ": " + mysql_error(m_mysql));
        if (MYSQL_RES *r = mysql_store_result(m_mysql))
            mysql_free_result(r);
    }
    /// The first row, each column as its bytes or nullopt for NULL.
    std::vector<std::optional<std::string>> row(const std::string &sql)
    {
        if (mysql_real_query(m_mysql, sql.data(), sql.size()))
            throw std::runtime_error(sql + ": " + mysql_error(m_mysql));
        MYSQL_RES *r = mysql_store_result(m_mysql);
        std::vector<std::optional<std::string>> out;
        if (MYSQL_ROW row = r ? mysql_fetch_row(r) : nullptr) {
            unsigned long *len = mysql_fetch_lengths(r);
            for (unsigned i = 0; i < mysql_num_fields(r); ++i)
                out.push_back(row[i] ? std::optional<std::string>(std::string(row[i], len[i])) : std::nullopt);
        }
        if (r)
            mysql_free_result(r);
        return out;
    }
    std::string scalar(const std::string &sql) { return row(sql).at(0).value_or("NULL"); }

private:
    MYSQL *m_mysql;
};

MysqlReplicationOptions options(std::uint32_t serverId,
                                std::chrono::milliseconds heartbeat = std::chrono::milliseconds(500))
{
    MysqlReplicationOptions o;
    o.host = servers().myHost;
    o.port = static_cast<unsigned>(servers().myPort);
    o.user = servers().myUser;
    o.password = servers().myPassword;
    o.serverId = serverId;
    o.heartbeat = heartbeat;
    return o;
}

/// A server_id for this test process: distinct from the server's (1) and other test processes.
std::uint32_t serverId(int k)
{
    return 100000u + static_cast<std::uint32_t>(getpid() % 100000) * 10u + k;
}

/// A started dump connection with its decoder, decoding only the rows of one schema.
struct Reader {
    MysqlReplicationConnection conn;
    Decoder decoder;
    std::vector<Event> events;

    Reader(const MysqlReplicationOptions &o, const MysqlBinlogStart &start, const std::string &schema) : conn(o)
    {
        for (const auto &[id, charset] : conn.collationCharsets())
            decoder.setCollationCharset(id, charset);
        decoder.setTableFilter([schema](const TableMap &t) { return t.schema == schema; });
        conn.start(start);
    }
    /// Reads until `done` holds for an event (returns true) or the timeout passes (false).
    bool readUntil(const std::function<bool(const Event &)> &done,
                   std::chrono::seconds timeout = std::chrono::seconds(20))
    {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            auto raw = conn.next();
            if (!raw)
                return false;
            events.push_back(decoder.decode(*raw));
            if (done(events.back()))
                return true;
        }
        return false;
    }
    /// The rows events of the schema's tables read so far.
    std::vector<Rows> rows() const
    {
        std::vector<Rows> out;
        for (const Event &e : events)
            if (auto *r = std::get_if<Rows>(&e.body); r && !r->skipped)
                out.push_back(*r);
        return out;
    }
};

bool isXid(const Event &e)
{
    return std::holds_alternative<Xid>(e.body);
}

/// Finds the first row image (after for inserts, before for deletes) whose column 0 is `id`.
const Image *findImage(const std::vector<Rows> &rows, RowOp op, const std::string &id, bool after = true)
{
    for (const Rows &r : rows)
        if (r.op == op)
            for (const RowChange &c : r.rows) {
                const Image &img = after ? c.after : c.before;
                if (!img.empty() && img[0].kind == Value::Kind::Text && img[0].text == id)
                    return &img;
            }
    return nullptr;
}

class Db {
public:
    Db() : m_name(uniqueName("binlog")) { m_sql.exec("CREATE DATABASE `" + m_name + "` CHARACTER SET utf8mb4"); }
    ~Db()
    {
        try {
            m_sql.exec("DROP DATABASE IF EXISTS `" + m_name + "`");
        } catch (...) {
        }
    }
    const std::string &name() const { return m_name; }
    Sql &sql() { return m_sql; }

private:
    Sql m_sql;
    std::string m_name;
};

MysqlBinlogStart here(Sql &sql)
{
    auto r = sql.row("SHOW MASTER STATUS");
    return MysqlBinlogStart{Position{r.at(0).value(), std::stoull(r.at(1).value())}, {}};
}

} // namespace

TEST(Binlog, everyColumnTypeDecodesToTheContractTextAndMatchesTheServersOwn)
{
    Db db;
    Sql &sql = db.sql();
    sql.exec("USE `" + db.name() + "`");
    sql.exec(R"(CREATE TABLE every (
        id INT PRIMARY KEY,
        ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
        i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
        d DECIMAL(65,30), d2 DECIMAL(10,2), f FLOAT, db DOUBLE, b1 BIT(1), b10 BIT(10), b64 BIT(64),
        dt DATE, dt0 DATETIME, dt1 DATETIME(1), dt2 DATETIME(2), dt3 DATETIME(3), dt4 DATETIME(4),
        dt5 DATETIME(5), dt6 DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, tm TIME(6), tm0 TIME, y YEAR,
        c CHAR(10), vc VARCHAR(100), tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
        bn BINARY(8), vb VARBINARY(20), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
        e ENUM('small','medium','large'), st SET('a','b','c','d'), j JSON, g GEOMETRY,
        l1 VARCHAR(20) CHARACTER SET latin1, l1c CHAR(5) CHARACTER SET latin1
    ) ENGINE=InnoDB)");
    const MysqlBinlogStart start = here(sql);
    const std::string big = "12345678901234567890123456789012345.123456789012345678901234567890";
    sql.exec("INSERT INTO every VALUES (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, "
             "-9223372036854775808, 18446744073709551615, -" +
             big +
             ", -0.5, 0.1, 1e308, b'1', b'0101010101', "
             "0xFFFFFFFFFFFFFFFF, '2024-02-29', '2024-02-29 23:59:58', '2024-02-29 23:59:58.1', "
             "'2024-02-29 23:59:58.12', '2024-02-29 23:59:58.123', '2024-02-29 23:59:58.1234', "
             "'2024-02-29 23:59:58.12345', '2024-02-29 23:59:58.123456', '2024-01-02 03:04:05.123456', "
             "'-838:59:59', '-00:00:01', 2155, 'ab  ', 'hello, wörld', 'tiny', 'text\ttab\nnewline', 'medium', "
             "'long', 'ab', X'00FF00', X'', X'0001FF', 'mb', X'DEADBEEF', 'medium', 'd,a', "
             "'{\"k\": [1, 2, {\"x\": null}]}', ST_GeomFromText('POINT(1 2)'), 'café €', 'é')");
    sql.exec("INSERT INTO every (id, f, db, tm, y, c, bn) VALUES (2, -3.40282e38, -2.2250738585072014e-308, "
             "'123:04:05.5', 0, '\xF0\x9F\x98\x80 x', X'6120')");
    sql.exec("INSERT INTO every (id) VALUES (3)");
    // The server's own text of each value, formatted as the contract says (what the SQL
    // readers produce): TIMESTAMP in UTC with +00, BIT as zero-padded binary, YEAR as a number.
    // GEOMETRY sits before the latin1 columns: MariaDB counts it among the character columns
    // of the charset metadata, so a wrong count would shift l1's character set.
    auto selected = [&](int id) {
        return sql.row(
            "SELECT id, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, d, d2, NULL, NULL, LPAD(BIN(b1), 1, '0'), "
            "LPAD(BIN(b10), 10, '0'), LPAD(BIN(b64), 64, '0'), dt, dt0, dt1, dt2, dt3, dt4, dt5, dt6, "
            "CONCAT(ts, '+00'), tm, tm0, y + 0, c, vc, tt, tx, mt, lt, bn, vb, tb, bl, mb, lb, e, st, j, "
            "g, l1, l1c FROM every WHERE id = " +
            std::to_string(id));
    };
    const auto sel1 = selected(1), sel2 = selected(2), sel3 = selected(3);
    sql.exec("UPDATE every SET vc = 'changed', d2 = 12.3 WHERE id = 1");
    sql.exec("DELETE FROM every WHERE id = 3");
    sql.exec("INSERT INTO every (id) VALUES (99)"); // the end marker

    Reader reader(options(serverId(1)), start, db.name());
    ASSERT_TRUE(reader.readUntil([](const Event &e) {
        auto *r = std::get_if<Rows>(&e.body);
        return r && !r->skipped && r->op == RowOp::Insert && r->rows.at(0).after.at(0).text == "99";
    })) << "the end marker never arrived";
    const auto rows = reader.rows();
    const Image *r1 = findImage(rows, RowOp::Insert, "1");
    const Image *r2 = findImage(rows, RowOp::Insert, "2");
    const Image *r3 = findImage(rows, RowOp::Insert, "3");
    ASSERT_TRUE(r1 && r2 && r3);
    const TableMap &table = *rows.front().table;
    ASSERT_EQ(table.columns.size(), 48u);
    ASSERT_EQ(sel1.size(), 48u);
    EXPECT_EQ(table.primaryKey, std::vector<unsigned>{0});
    EXPECT_EQ(table.columns[3].name, "si");

    // Against the contract's literal text.
    auto text = [&](const Image *img, const std::string &col) {
        for (std::size_t i = 0; i < table.columns.size(); ++i)
            if (table.columns[i].name == col) {
                EXPECT_EQ((*img)[i].kind, Value::Kind::Text) << col;
                return (*img)[i].text;
            }
        ADD_FAILURE() << "no column " << col;
        return std::string();
    };
    EXPECT_EQ(text(r1, "ti"), "-128");
    EXPECT_EQ(text(r1, "tiu"), "255");
    EXPECT_EQ(text(r1, "miu"), "16777215");
    EXPECT_EQ(text(r1, "iu"), "4294967295");
    EXPECT_EQ(text(r1, "bi"), "-9223372036854775808");
    EXPECT_EQ(text(r1, "biu"), "18446744073709551615");
    EXPECT_EQ(text(r1, "d"), "-" + big);
    EXPECT_EQ(text(r1, "d2"), "-0.50");
    EXPECT_EQ(text(r1, "f"), "0.1");
    EXPECT_EQ(text(r1, "db"), "1e+308");
    EXPECT_EQ(text(r2, "f"), "-3.40282e+38");
    EXPECT_EQ(text(r2, "db"), "-2.2250738585072014e-308");
    EXPECT_EQ(text(r1, "b1"), "1");
    EXPECT_EQ(text(r1, "b10"), "0101010101");
    EXPECT_EQ(text(r1, "b64"), std::string(64, '1'));
    EXPECT_EQ(text(r1, "dt"), "2024-02-29");
    EXPECT_EQ(text(r1, "dt0"), "2024-02-29 23:59:58");
    EXPECT_EQ(text(r1, "dt1"), "2024-02-29 23:59:58.1");
    EXPECT_EQ(text(r1, "dt4"), "2024-02-29 23:59:58.1234");
    EXPECT_EQ(text(r1, "dt6"), "2024-02-29 23:59:58.123456");
    EXPECT_EQ(text(r1, "ts"), "2024-01-02 03:04:05.123456+00");
    EXPECT_EQ(text(r1, "tm"), "-838:59:59.000000");
    EXPECT_EQ(text(r1, "tm0"), "-00:00:01");
    EXPECT_EQ(text(r2, "tm"), "123:04:05.500000");
    EXPECT_EQ(text(r1, "y"), "2155");
    EXPECT_EQ(text(r2, "y"), "0");
    EXPECT_EQ(text(r1, "c"), "ab");
    EXPECT_EQ(text(r2, "c"), "\xF0\x9F\x98\x80 x");
    EXPECT_EQ(text(r1, "vc"), "hello, w\xC3\xB6rld");
    EXPECT_EQ(text(r1, "tx"), "text\ttab\nnewline");
    EXPECT_EQ(text(r1, "bn"), std::string("ab\0\0\0\0\0\0", 8));
    EXPECT_EQ(text(r2, "bn"), std::string("a \0\0\0\0\0\0", 8));
    EXPECT_EQ(text(r1, "vb"), std::string("\0\xFF\0", 3));
    EXPECT_EQ(text(r1, "tb"), "");
    EXPECT_EQ(text(r1, "lb"), "\xDE\xAD\xBE\xEF");
    EXPECT_EQ(text(r1, "e"), "medium");
    EXPECT_EQ(text(r1, "st"), "a,d");
    EXPECT_EQ(text(r1, "j"), "{\"k\": [1, 2, {\"x\": null}]}");
    EXPECT_EQ(text(r1, "l1"), "caf\xC3\xA9 \xE2\x82\xAC");
    EXPECT_EQ(text(r1, "l1c"), "\xC3\xA9");

    // Against the server's own text, column by column (FLOAT and DOUBLE print differently in
    // MariaDB; their contract text is checked above).
    const std::vector<std::optional<std::string>> *selectedRows[] = {&sel1, &sel2, &sel3};
    const Image *images[] = {r1, r2, r3};
    for (int k = 0; k < 3; ++k)
        for (std::size_t i = 0; i < table.columns.size(); ++i) {
            if (table.columns[i].name == "f" || table.columns[i].name == "db")
                continue;
            const std::optional<std::string> &want = (*selectedRows[k])[i];
            const Value &got = (*images[k])[i];
            if (!want) {
                EXPECT_EQ(got.kind, Value::Kind::Null) << "row " << k + 1 << " column " << table.columns[i].name;
            } else {
                EXPECT_EQ(got.kind, Value::Kind::Text) << "row " << k + 1 << " column " << table.columns[i].name;
                EXPECT_EQ(got.text, *want) << "row " << k + 1 << " column " << table.columns[i].name;
            }
        }

    // UPDATE: the before image is the inserted row, the after image has the new values.
    bool sawUpdate = false;
    for (const Rows &r : rows)
        if (r.op == RowOp::Update) {
            sawUpdate = true;
            ASSERT_EQ(r.rows.size(), 1u);
            EXPECT_EQ(r.rows[0].before, *r1);
            Image expected = *r1;
            expected[31] = Value{Value::Kind::Text, "changed"};
            expected[12] = Value{Value::Kind::Text, "12.30"};
            EXPECT_EQ(table.columns[31].name, "vc");
            EXPECT_EQ(r.rows[0].after, expected);
        }
    EXPECT_TRUE(sawUpdate);
    const Image *deleted = findImage(rows, RowOp::Delete, "3", false);
    ASSERT_TRUE(deleted);
    EXPECT_EQ(*deleted, *r3);
    EXPECT_EQ((*deleted)[1].kind, Value::Kind::Null);
}

TEST(Binlog, zeroDatesAreReportedNamingTheColumn)
{
    Db db;
    Sql &sql = db.sql();
    sql.exec("USE `" + db.name() + "`");
    sql.exec("SET SESSION sql_mode = ''");
    sql.exec("CREATE TABLE z (id INT PRIMARY KEY, born DATE, seen DATETIME)");
    const MysqlBinlogStart start = here(sql);
    sql.exec("INSERT INTO z VALUES (7, '0000-00-00', '2024-00-10 10:00:00')");
    Reader reader(options(serverId(2)), start, db.name());
    ASSERT_TRUE(reader.readUntil(isXid));
    const auto rows = reader.rows();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].rows[0].after[1], (Value{Value::Kind::Invalid, "0000-00-00"}));
    EXPECT_EQ(rows[0].rows[0].after[2], (Value{Value::Kind::Invalid, "2024-00-10 10:00:00"}));
    try {
        rows[0].throwIfInvalid();
        FAIL() << "no error";
    } catch (const SchemaError &e) {
        EXPECT_NE(std::string(e.what()).find("`born`"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("id=7"), std::string::npos) << e.what();
    }
}

TEST(Binlog, flushBinaryLogsMidStreamFollowsTheRotate)
{
    Db db;
    Sql &sql = db.sql();
    sql.exec("USE `" + db.name() + "`");
    sql.exec("CREATE TABLE t (id INT PRIMARY KEY)");
    const MysqlBinlogStart start = here(sql);
    Reader reader(options(serverId(3)), start, db.name());
    sql.exec("INSERT INTO t VALUES (1)");
    ASSERT_TRUE(reader.readUntil(isXid));
    const std::string firstFile = reader.decoder.position().file;
    EXPECT_EQ(firstFile, start.position.file);
    sql.exec("FLUSH BINARY LOGS");
    const std::string nextFile = here(sql).position.file;
    ASSERT_NE(nextFile, firstFile);
    sql.exec("INSERT INTO t VALUES (2)");
    ASSERT_TRUE(reader.readUntil(isXid));
    EXPECT_EQ(reader.decoder.position().file, nextFile);
    bool rotated = false;
    for (const Event &e : reader.events)
        if (auto *r = std::get_if<Rotate>(&e.body); r && r->next.file == nextFile)
            rotated = true;
    EXPECT_TRUE(rotated);
    ASSERT_TRUE(findImage(reader.rows(), RowOp::Insert, "1"));
    ASSERT_TRUE(findImage(reader.rows(), RowOp::Insert, "2"));
    // The position after the second transaction is the server's end of the new file.
    EXPECT_EQ(reader.decoder.position(), here(sql).position);
}

TEST(Binlog, restartFromAStoredPositionOrGtidResumesAtTheNextTransaction)
{
    Db db;
    Sql &sql = db.sql();
    sql.exec("USE `" + db.name() + "`");
    sql.exec("CREATE TABLE t (id INT PRIMARY KEY)");
    const MysqlBinlogStart start = here(sql);
    for (int i = 1; i <= 3; ++i)
        sql.exec("INSERT INTO t VALUES (" + std::to_string(i) + ")");
    Position checkpoint;
    std::string gtid;
    {
        Reader first(options(serverId(4)), start, db.name());
        ASSERT_TRUE(
            first.readUntil([](const Event &e) { return e.endsTransaction && std::holds_alternative<Xid>(e.body); }));
        ASSERT_EQ(first.rows().size(), 1u);
        EXPECT_TRUE(findImage(first.rows(), RowOp::Insert, "1"));
        checkpoint = first.decoder.position();
        ASSERT_TRUE(first.decoder.committedGtid());
        gtid = first.decoder.committedGtid()->text();
        EXPECT_EQ(
            sql.scalar("SELECT BINLOG_GTID_POS('" + checkpoint.file + "', " + std::to_string(checkpoint.offset) + ")"),
            gtid);
    }
    for (bool byGtid : {false, true}) {
        MysqlBinlogStart resume{checkpoint, byGtid ? gtid : std::string()};
        Reader again(options(serverId(5)), resume, db.name());
        ASSERT_TRUE(again.readUntil([](const Event &e) {
            auto *r = std::get_if<Rows>(&e.body);
            return r && !r->skipped && r->rows.at(0).after.at(0).text == "3";
        })) << (byGtid ? "by GTID" : "by position");
        const auto rows = again.rows();
        ASSERT_EQ(rows.size(), 2u) << (byGtid ? "by GTID" : "by position");
        EXPECT_EQ(rows[0].rows[0].after[0].text, "2");
        EXPECT_EQ(rows[1].rows[0].after[0].text, "3");
    }
}

TEST(Binlog, purgedBinlogIsReportedAsNeedingAResnapshot)
{
    Sql sql;
    const MysqlBinlogStart old = here(sql);
    const std::string oldGtid = sql.scalar("SELECT @@gtid_binlog_pos");
    sql.exec("FLUSH BINARY LOGS");
    sql.exec("CREATE DATABASE IF NOT EXISTS `" + uniqueName("purge") + "`"); // something to get a new GTID
    sql.exec("FLUSH BINARY LOGS");
    const std::string newest = here(sql).position.file;
    // The server keeps a file a dump thread still reads (another test's reader, under ctest
    // -j2): purge again until every file before `newest` is gone. Gone must be the file with
    // the transaction after the start too, not only the start's own: a file that begins right
    // after the start's GTID (its Gtid_list) still serves a start by GTID, rightly.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
        sql.exec("PURGE BINARY LOGS TO '" + newest + "'");
        const auto oldest = sql.row("SHOW BINARY LOGS").at(0);
        if (oldest && *oldest >= newest)
            break;
        ASSERT_LT(std::chrono::steady_clock::now(), deadline)
            << (oldest ? *oldest : std::string("?")) << " is still kept after 60 s of PURGE BINARY LOGS TO " << newest;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    for (bool byGtid : {false, true}) {
        if (byGtid && oldGtid.empty())
            continue;
        MysqlBinlogStart from{old.position, byGtid ? oldGtid : std::string()};
        try {
            Reader reader(options(serverId(6)), from, "none");
            reader.readUntil([](const Event &) { return false; }, std::chrono::seconds(5));
            FAIL() << "no error for a purged start " << (byGtid ? oldGtid : old.position.file);
        } catch (const Error &e) {
            EXPECT_FALSE(e.isTransient());
            EXPECT_NE(std::string(e.what()).find("purged"), std::string::npos) << e.describe();
            EXPECT_NE(e.hint().find("re-snapshot"), std::string::npos) << e.describe();
        }
    }
}

TEST(Binlog, aSecondReaderWithTheSameServerIdIsRefusedAndAKickedReaderSaysWhy)
{
    Db db;
    Sql &sql = db.sql();
    sql.exec("USE `" + db.name() + "`");
    sql.exec("CREATE TABLE t (id INT PRIMARY KEY)");
    const MysqlBinlogStart start = here(sql);
    const std::uint32_t id = serverId(7);
    Reader first(options(id), start, db.name());
    ASSERT_TRUE(first.readUntil([](const Event &e) { return std::holds_alternative<FormatDescription>(e.body); }));
    try {
        Reader second(options(id), start, db.name());
        FAIL() << "the second reader started";
    } catch (const Error &e) {
        EXPECT_FALSE(e.isTransient());
        EXPECT_NE(std::string(e.what()).find("server_id " + std::to_string(id) + " is already in use"),
                  std::string::npos)
            << e.describe();
    }
    // The first one was not disturbed.
    sql.exec("INSERT INTO t VALUES (1)");
    ASSERT_TRUE(first.readUntil(isXid));
    EXPECT_TRUE(findImage(first.rows(), RowOp::Insert, "1"));

    // A reader that did not register (a tool that skips COM_REGISTER_SLAVE) gets past the check;
    // the server then drops the older dump with that id, which must say so.
    MysqlReplicationOptions unregistered = options(serverId(8));
    unregistered.reportHost.clear();
    Reader older(unregistered, here(sql), db.name());
    ASSERT_TRUE(older.readUntil([](const Event &e) { return std::holds_alternative<FormatDescription>(e.body); }));
    Reader newer(options(serverId(8)), here(sql), db.name());
    try {
        older.readUntil([](const Event &) { return false; }, std::chrono::seconds(10));
        FAIL() << "the older reader kept streaming";
    } catch (const Error &e) {
        EXPECT_FALSE(e.isTransient());
        EXPECT_NE(std::string(e.what()).find("another reader connected"), std::string::npos) << e.describe();
    }
}

TEST(Binlog, missingReplicationPrivilegeIsExplained)
{
    Sql admin;
    const std::string user = uniqueName("norepl");
    admin.exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw-norepl'");
    admin.exec("GRANT SELECT ON *.* TO '" + user + "'@'%'");
    MysqlReplicationOptions o = options(serverId(9));
    o.user = user;
    o.password = "pw-norepl";
    try {
        Reader reader(o, here(admin), "none");
        reader.readUntil([](const Event &) { return false; }, std::chrono::seconds(5));
        ADD_FAILURE() << "a user without REPLICATION SLAVE read the binlog";
    } catch (const Error &e) {
        EXPECT_FALSE(e.isTransient());
        EXPECT_NE(e.describe().find("REPLICATION SLAVE"), std::string::npos) << e.describe();
    }
    admin.exec("DROP USER '" + user + "'@'%'");
}

TEST(Binlog, heartbeatsKeepNextReturningAndStopUnblocksItFromAnotherThread)
{
    Sql sql;
    Reader reader(options(serverId(10), std::chrono::milliseconds(300)), here(sql), "none");
    ASSERT_TRUE(reader.readUntil([](const Event &e) { return std::holds_alternative<Heartbeat>(e.body); },
                                 std::chrono::seconds(10)))
        << "no heartbeat while idle";
    // A long heartbeat, so that next() blocks, then stop() from another thread.
    Reader blocked(options(serverId(11), std::chrono::milliseconds(60000)), here(sql), "none");
    ASSERT_TRUE(blocked.readUntil([](const Event &e) { return std::holds_alternative<FormatDescription>(e.body); }));
    const auto t0 = std::chrono::steady_clock::now();
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        blocked.conn.stop();
    });
    std::optional<std::string_view> raw;
    do {
        raw = blocked.conn.next();
    } while (raw);
    stopper.join();
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, std::chrono::milliseconds(400));
    EXPECT_LT(waited, std::chrono::seconds(10));
}

TEST(Binlog, builtInCollationTableAgreesWithTheServer)
{
    // The decoder names the character set of common collation ids without asking the server;
    // every id it names must be the server's.
    MysqlReplicationConnection conn(options(serverId(12)));
    const Decoder builtIn;
    int named = 0;
    for (const auto &[id, charset] : conn.collationCharsets()) {
        const std::string mine = builtIn.charsetOf(id);
        if (mine.empty())
            continue;
        ++named;
        EXPECT_EQ(mine == "utf8" ? "utf8mb3" : mine, charset) << "collation id " << id;
    }
    EXPECT_GT(named, 50);
}
