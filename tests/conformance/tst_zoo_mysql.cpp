// The schema zoo, MariaDB source: real-world MariaDB table features, each its own table in one
// MariaDB 10.11 database (the harness's server: binlog ROW, FULL row image and metadata), synced
// by full_refresh, cursor and cdc into a Postgres and a SQLite target, one pipeline per
// (strategy, target), with a bounded fixed-seed writer whose session runs at time_zone '+05:30',
// one `run --once` killed after its second batch, then `run --once` until caught up, then an
// oracle of our own: one canonical text per row built in MariaDB SQL (DATE_FORMAT/CONVERT_TZ,
// HEX, LPAD(BIN()), CAST) and the same text of the mapped types on the target (zoooracle.h's
// Postgres/SQLite expressions), md5 over the rows in byte order; plus `reconcile --json`.
// Known failures stay in the table, disabled unless DRIFTLESS_ZOO_ALL=1. docs/schema-zoo-mysql.md
// describes the table.

#include "tests/conformance/zoooracle.h"
#include "tests/conformance/zoowriter.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>

using namespace driftless::test;
using namespace driftless::zoo;
using driftless::core::MysqlConnection;
using driftless::core::PgConnection;

namespace {

enum class Strat { FullRefresh, Cursor, Cdc };
enum class Target { Postgres, Sqlite };

const char *strategyName(Strat s)
{
    return s == Strat::FullRefresh ? "full_refresh" : s == Strat::Cursor ? "cursor" : "cdc";
}
const char *targetName(Target t)
{
    return t == Target::Postgres ? "postgres" : "sqlite";
}

const bool kAllCombinations = [] {
    const char *v = std::getenv("DRIFTLESS_ZOO_ALL");
    return v && std::string(v) == "1";
}();

unsigned zooSeed()
{
    const char *v = std::getenv("DRIFTLESS_ZOO_SEED");
    return v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : 20251201u;
}

/// Every table's cursor column: MariaDB stamps it on insert and on every update that changes
/// the row, so the writer never sets it (the `on_update_current_timestamp` feature relies on it
/// alone).
constexpr const char *kStamp =
    "updated_at timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), KEY (updated_at)";

struct Op {
    std::string sql; ///< placeholders: {k} existing key, {n} fresh key, {r} 0..999999, {w} word, {w3} BMP word
};

struct Feature {
    std::string name;
    std::string what;
    std::vector<std::string> ddl;
    std::vector<std::string> seed;
    long long seedRows = 0;
    std::vector<std::string> tables; ///< MariaDB table names (the key column is `id`)
    std::vector<Op> ops;
    int writes = 20;
    /// Targets into which `apply` must refuse the tables (reason substring), kept out of the pipeline.
    std::map<Target, std::string> refusedInto;
    /// Known failures, disabled unless DRIFTLESS_ZOO_ALL=1: what fails (reported).
    std::map<std::pair<Strat, Target>, std::string> fails;
    /// Synced by CDC alone: the big transactions that make the killed CDC pass commit two batches.
    bool cdcOnly = false;
};

std::string stamped(const std::string &cols, const std::string &close = ")")
{
    return cols + ", " + kStamp + close;
}

const std::vector<Feature> &features()
{
    static const std::vector<Feature> f = [] {
        std::vector<Feature> v;
        v.push_back({"on_update_current_timestamp",
                     "TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6) as the cursor, "
                     "stamped by the server alone; a second DATETIME(6) ON UPDATE column",
                     {"CREATE TABLE onupd (id int PRIMARY KEY, v int, note varchar(40), "
                      "touched datetime(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), " +
                      std::string(kStamp) + ")"},
                     {"INSERT INTO onupd (id, v, note) SELECT seq, seq, CONCAT('n', seq) FROM seq_1_to_30"},
                     30,
                     {"onupd"},
                     {{"INSERT INTO onupd (id, v) VALUES ({n}, {r})"},
                      {"UPDATE onupd SET v = {r} WHERE id = {k}"},
                      {"UPDATE onupd SET note = '{w}' WHERE id = {k}"},
                      {"DELETE FROM onupd WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"timestamp_session_tz",
                     "TIMESTAMP columns written and read by sessions at time_zone '+05:30' (stored UTC), next to "
                     "DATETIME and DATE",
                     {stamped("CREATE TABLE tzev (id int PRIMARY KEY, happened timestamp(6) NULL, at3 timestamp(3) "
                              "NULL, local_dt datetime(6), d date")},
                     {"INSERT INTO tzev (id, happened, at3, local_dt, d) SELECT seq, '2024-03-10 07:30:00.5' + "
                      "INTERVAL seq HOUR, '2000-01-01 00:00:00.123' + INTERVAL seq DAY, '2024-03-10 07:30:00.5' + "
                      "INTERVAL seq HOUR, '2024-01-01' + INTERVAL seq DAY FROM seq_1_to_30"},
                     30,
                     {"tzev"},
                     {{"INSERT INTO tzev (id, happened, at3, local_dt, d) VALUES ({n}, NOW(6), "
                       "'2030-06-01 23:59:59.999' - INTERVAL {r} SECOND, NOW(6), CURDATE())"},
                      {"UPDATE tzev SET happened = '1999-12-31 23:30:00' + INTERVAL {r} MINUTE WHERE id = {k}"},
                      {"UPDATE tzev SET happened = NULL, local_dt = '2038-01-19 03:14:07.999999' WHERE id = {k}"},
                      {"DELETE FROM tzev WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back(
            {"geometry",
             "GEOMETRY (points, linestrings, polygons, with and without an SRID); compared as the stored "
             "form (4-byte SRID then WKB, HEX on both sides)",
             {stamped("CREATE TABLE geo (id int PRIMARY KEY, g geometry, p point")},
             {"INSERT INTO geo (id, g, p) SELECT seq, ST_GeomFromText(CONCAT('LINESTRING(0 0, ', seq, ' ', "
              "seq * 2, ')'), 4326), ST_GeomFromText(CONCAT('POINT(', seq, ' -', seq, '.5)')) FROM seq_1_to_30"},
             30,
             {"geo"},
             {{"INSERT INTO geo (id, g, p) VALUES ({n}, ST_GeomFromText('POLYGON((0 0, {r} 0, {r} 1, 0 0))'), "
               "ST_GeomFromText('POINT({r} 1)', 3857))"},
              {"UPDATE geo SET g = ST_GeomFromText('POINT({r} {r})', 4326) WHERE id = {k}"},
              {"UPDATE geo SET p = NULL WHERE id = {k}"},
              {"DELETE FROM geo WHERE id = {k}"}},
             20,
             {},
             {}});
        v.push_back(
            {"set_enum_year",
             "SET (labels in definition order, the empty set), ENUM, YEAR",
             {stamped("CREATE TABLE seteny (id int PRIMARY KEY, s set('red','green','blue'), "
                      "e enum('small','medium','large'), y year")},
             {"INSERT INTO seteny (id, s, e, y) SELECT seq, ELT(1 + seq % 4, 'red', 'blue,red', '', "
              "'green,blue,red'), ELT(1 + seq % 3, 'small', 'medium', 'large'), 1901 + seq * 8 FROM seq_1_to_30"},
             30,
             {"seteny"},
             {{"INSERT INTO seteny (id, s, e, y) VALUES ({n}, 'green', 'large', 2155)"},
              {"UPDATE seteny SET s = ELT(1 + {r} % 5, 'red', 'green,blue', '', 'blue,red', 'red,green,blue'), "
               "e = ELT(1 + {r} % 4, 'small', 'medium', 'large', NULL) WHERE id = {k}"},
              {"UPDATE seteny SET y = 1901 + {r} % 255 WHERE id = {k}"},
              {"DELETE FROM seteny WHERE id = {k}"}},
             20,
             {},
             {}});
        v.push_back({"bit_n",
                     "BIT(1), BIT(5), BIT(64) (all ones included)",
                     {stamped("CREATE TABLE bits (id int PRIMARY KEY, b1 bit(1), b5 bit(5), b64 bit(64)")},
                     {"INSERT INTO bits (id, b1, b5, b64) SELECT seq, seq % 2, seq % 32, IF(seq = 1, "
                      "b'1111111111111111111111111111111111111111111111111111111111111111', seq * 1234567) FROM "
                      "seq_1_to_30"},
                     30,
                     {"bits"},
                     {{"INSERT INTO bits (id, b1, b5, b64) VALUES ({n}, 1, {r} % 32, {r} * 77777)"},
                      {"UPDATE bits SET b5 = {r} % 32, b64 = {r} WHERE id = {k}"},
                      {"UPDATE bits SET b1 = NULL, b64 = 18446744073709551615 WHERE id = {k}"},
                      {"DELETE FROM bits WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"bigint_unsigned_max",
                     "BIGINT UNSIGNED up to 18446744073709551615, INT UNSIGNED, DECIMAL(65,30)",
                     {stamped("CREATE TABLE ubig (id bigint unsigned PRIMARY KEY, u bigint unsigned, iu int unsigned, "
                              "d decimal(65,30)")},
                     {"INSERT INTO ubig (id, u, iu, d) SELECT seq, IF(seq = 1, 18446744073709551615, "
                      "18446744073709551615 - seq), 4294967295 - seq, seq / 7 FROM seq_1_to_30",
                      "INSERT INTO ubig (id, u, iu, d) VALUES (18446744073709551615, 18446744073709551615, 0, "
                      "-12345678901234567890123456789012345.123456789012345678901234567890)"},
                     30,
                     {"ubig"},
                     {{"INSERT INTO ubig (id, u, iu, d) VALUES ({n}, 18446744073709551615 - {r}, {r}, {r} / 3)"},
                      {"UPDATE ubig SET u = 18446744073709551615 WHERE id = {k}"},
                      {"UPDATE ubig SET u = {r}, d = -{r} / 11 WHERE id = {k}"},
                      {"DELETE FROM ubig WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"utf8mb3_utf8mb4",
                     "a utf8mb3 and a utf8mb4 column (4-byte characters in the utf8mb4 one), the writer connected "
                     "with utf8mb4",
                     {stamped("CREATE TABLE texts (id int PRIMARY KEY, t3 varchar(60) CHARACTER SET utf8mb3, "
                              "t4 varchar(60) CHARACTER SET utf8mb4, l4 text CHARACTER SET utf8mb4")},
                     {"INSERT INTO texts (id, t3, t4, l4) SELECT seq, CONCAT('straße ', seq), CONCAT('😀 κόσμε ', "
                      "seq), REPEAT('𝄞', seq) FROM seq_1_to_30"},
                     30,
                     {"texts"},
                     {{"INSERT INTO texts (id, t3, t4, l4) VALUES ({n}, '{w3}', '{w}', '{w}')"},
                      {"UPDATE texts SET t3 = '{w3}', t4 = '{w}' WHERE id = {k}"},
                      {"UPDATE texts SET l4 = CONCAT(l4, '🦆') WHERE id = {k}"},
                      {"DELETE FROM texts WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"invisible_columns",
                     "INVISIBLE columns (left out of SELECT *, written by name)",
                     {stamped("CREATE TABLE invis (id int PRIMARY KEY, v int, secret int INVISIBLE DEFAULT 7, "
                              "hidden_note varchar(20) INVISIBLE")},
                     {"INSERT INTO invis (id, v, secret, hidden_note) SELECT seq, seq, seq * 3, CONCAT('h', seq) "
                      "FROM seq_1_to_30"},
                     30,
                     {"invis"},
                     {{"INSERT INTO invis (id, v) VALUES ({n}, {r})"},
                      {"UPDATE invis SET secret = {r} WHERE id = {k}"},
                      {"UPDATE invis SET hidden_note = NULL, v = {r} WHERE id = {k}"},
                      {"DELETE FROM invis WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"generated_columns",
                     "VIRTUAL and STORED generated columns (synced as their values)",
                     {stamped("CREATE TABLE gen (id int PRIMARY KEY, price decimal(10,2) NOT NULL, qty int, "
                              "total decimal(20,2) AS (price * qty) STORED, label varchar(40) AS (CONCAT('#', id, "
                              "'/', COALESCE(qty, -1))) VIRTUAL")},
                     {"INSERT INTO gen (id, price, qty) SELECT seq, seq * 1.25, NULLIF(seq % 7, 3) FROM seq_1_to_30"},
                     30,
                     {"gen"},
                     {{"INSERT INTO gen (id, price, qty) VALUES ({n}, {r} / 100, {r} % 50)"},
                      {"UPDATE gen SET qty = {r} % 90 WHERE id = {k}"},
                      {"UPDATE gen SET price = {r} / 1000, qty = NULL WHERE id = {k}"},
                      {"DELETE FROM gen WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"trigger_second_table",
                     "an AFTER INSERT/UPDATE/DELETE trigger writing an audit table; both tables synced",
                     {stamped("CREATE TABLE trmain (id int PRIMARY KEY, v int"),
                      stamped("CREATE TABLE traudit (id int AUTO_INCREMENT PRIMARY KEY, main_id int NOT NULL, "
                              "op char(1) NOT NULL, v int"),
                      "CREATE TRIGGER trmain_ai AFTER INSERT ON trmain FOR EACH ROW INSERT INTO traudit (main_id, "
                      "op, v) VALUES (NEW.id, 'i', NEW.v)",
                      "CREATE TRIGGER trmain_au AFTER UPDATE ON trmain FOR EACH ROW INSERT INTO traudit (main_id, "
                      "op, v) VALUES (NEW.id, 'u', NEW.v)",
                      "CREATE TRIGGER trmain_ad AFTER DELETE ON trmain FOR EACH ROW INSERT INTO traudit (main_id, "
                      "op, v) VALUES (OLD.id, 'd', OLD.v)"},
                     {"INSERT INTO trmain (id, v) SELECT seq, seq FROM seq_1_to_30"},
                     30,
                     {"trmain", "traudit"},
                     {{"INSERT INTO trmain (id, v) VALUES ({n}, {r})"},
                      {"UPDATE trmain SET v = {r} WHERE id = {k}"},
                      {"DELETE FROM trmain WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"partitioned_range",
                     "RANGE-partitioned table (key includes the partition column); rows move between partitions "
                     "by an UPDATE of it",
                     {stamped("CREATE TABLE part (id int NOT NULL, bucket int NOT NULL, v int, note varchar(30), "
                              "PRIMARY KEY (id, bucket)",
                              "") +
                      ") PARTITION BY RANGE (bucket) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS "
                      "THAN (20), PARTITION p2 VALUES LESS THAN MAXVALUE)"},
                     {"INSERT INTO part (id, bucket, v) SELECT seq, seq % 30, seq FROM seq_1_to_30"},
                     30,
                     {"part"},
                     {{"INSERT INTO part (id, bucket, v) VALUES ({n}, {r} % 30, {r})"},
                      {"UPDATE part SET v = {r}, note = '{w}' WHERE id = {k}"},
                      {"UPDATE part SET bucket = (bucket + 10) % 30 WHERE id = {k}"},
                      {"DELETE FROM part WHERE id = {k}"}},
                     20,
                     {},
                     {}});
        v.push_back({"names_differing_in_case",
                     "two tables `Cased` and `cased` (lower_case_table_names=0)",
                     {stamped("CREATE TABLE Cased (id int PRIMARY KEY, v varchar(20)"),
                      stamped("CREATE TABLE cased (id int PRIMARY KEY, w int")},
                     {"INSERT INTO Cased (id, v) SELECT seq, CONCAT('upper ', seq) FROM seq_1_to_30",
                      "INSERT INTO cased (id, w) SELECT seq, seq * 100 FROM seq_1_to_30"},
                     30,
                     {"Cased", "cased"},
                     {{"INSERT INTO Cased (id, v) VALUES ({n}, '{w}')"},
                      {"INSERT INTO cased (id, w) VALUES ({n}, {r})"},
                      {"UPDATE Cased SET v = '{w}' WHERE id = {k}"},
                      {"UPDATE cased SET w = {r} WHERE id = {k}"},
                      {"DELETE FROM Cased WHERE id = {k}"},
                      {"DELETE FROM cased WHERE id = {k}"}},
                     24,
                     {{Target::Sqlite, "is already written by"}},
                     {}});
        // The binlog reader commits a batch when a transaction ends 100 ms after the batch began
        // (or at 20,000 rows), so the writer's few hundred statements are one batch, or two, by
        // timing. A TRUNCATE of a synced table flushes what is pending (docs/cdc.md): two of them
        // between bulk transactions make the killed CDC pass die after its second commit,
        // mid-stream, whatever the timing.
        v.push_back({"big_transactions",
                     "bulk transactions (INSERT ... SELECT of 3,000-5,000 rows, an UPDATE of every row) "
                     "between two TRUNCATEs before the killed pass, a DELETE of a third after it; CDC only",
                     {stamped("CREATE TABLE bulk (id int PRIMARY KEY, v int, note varchar(20)")},
                     {},
                     0,
                     {"bulk"},
                     {},
                     0,
                     {},
                     {}});
        v.back().cdcOnly = true;
        // InnoDB performs these actions itself and the binlog carries only the parent's change:
        // CDC derives the children's (docs/cdc.md); cursor sync finds them by reconcile + repair.
        v.push_back(
            {"fk_cascade",
             "foreign keys ON DELETE CASCADE ON UPDATE CASCADE (books) and ON DELETE SET NULL ON UPDATE "
             "CASCADE (notes) to authors, all synced; authors deleted and re-keyed",
             {stamped("CREATE TABLE authors (id int PRIMARY KEY, name varchar(40)"),
              stamped("CREATE TABLE books (id int PRIMARY KEY, author_id int NOT NULL, title varchar(40)",
                      ", FOREIGN KEY (author_id) REFERENCES authors (id) ON DELETE CASCADE ON UPDATE "
                      "CASCADE)"),
              stamped("CREATE TABLE notes (id int PRIMARY KEY, author_id int NULL, body varchar(40)",
                      ", FOREIGN KEY (author_id) REFERENCES authors (id) ON DELETE SET NULL ON UPDATE "
                      "CASCADE)")},
             {"INSERT INTO authors (id, name) SELECT seq, CONCAT('author ', seq) FROM seq_1_to_30",
              "INSERT INTO books (id, author_id, title) SELECT seq, 1 + seq % 30, CONCAT('book ', seq) "
              "FROM seq_1_to_90",
              "INSERT INTO notes (id, author_id, body) SELECT seq, 1 + seq % 30, CONCAT('note ', seq) "
              "FROM seq_1_to_90"},
             90,
             {"authors", "books", "notes"},
             {{"INSERT INTO authors (id, name) VALUES ({n}, '{w}')"},
              {"INSERT INTO books (id, author_id, title) SELECT {n}, id, '{w}' FROM authors WHERE id = {k} % 40"},
              {"INSERT INTO notes (id, author_id, body) SELECT {n}, id, '{w}' FROM authors WHERE id = {k} % 40"},
              {"UPDATE books SET title = '{w}' WHERE id = {k}"},
              {"UPDATE authors SET id = {n} WHERE id = {k} % 40"},
              {"DELETE FROM authors WHERE id = {k} % 40"},
              {"DELETE FROM authors WHERE id = {k} % 40"}},
             30,
             {},
             {}});
        return v;
    }();
    return f;
}

bool enabled(const Feature &f, Strat s, Target t)
{
    return !f.refusedInto.count(t) && (!f.cdcOnly || s == Strat::Cdc) && (kAllCombinations || !f.fails.count({s, t}));
}

/// A connection the way the writer and the oracle hold one: utf8mb4, time_zone '+05:30'.
MysqlConnection offsetSession(const MyTestDb &db)
{
    auto c = db.connect();
    c.exec("SET NAMES utf8mb4");
    c.exec("SET time_zone = '+05:30'");
    c.exec("SET SESSION group_concat_max_len = " + std::to_string(1LL << 30));
    return c;
}

/// How the writer speaks to MariaDB (zoowriter.h).
std::map<std::string, std::string> mariadbValues(std::mt19937 &rng, long long next)
{
    static const char *words[] = {"Mixed Word", "O''Brien", "straße", "🦆 duck", "UPPER lower", "a|b", "𝄞 clef", ""};
    static const char *bmp[] = {"Mixed Word", "O''Brien", "straße", "κόσμε", "a|b", ""};
    const std::string r = std::to_string(rng() % 1000000);
    return {
        {"{k}", std::to_string(1 + rng() % static_cast<unsigned long>(next))},
        {"{r}", r},
        {"{w3}", std::string(bmp[rng() % 6]) + " " + std::to_string(rng() % 100)},
        {"{w}", std::string(words[rng() % 8]) + " " + std::to_string(rng() % 100)},
    };
}
const WriterDialect kMariadbWriter{"START TRANSACTION", "Duplicate entry", mariadbValues};
using Writer = ZooWriter<MysqlConnection, Feature>;

// ---- the oracle ----

/// A source column: its canonical MariaDB expression and the kind of its mapped Postgres type
/// (docs/type-mapping.md), which zoooracle.h turns into the same text on the target.
struct MyColumn {
    OracleColumn target;
    std::string sourceExpr;
};

std::vector<MyColumn> myColumns(MysqlConnection &c, const std::string &db, const std::string &table)
{
    auto r = c.query("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, COALESCE(CHARACTER_MAXIMUM_LENGTH, "
                     "NUMERIC_PRECISION, 0) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND "
                     "BINARY TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
                     {db, table});
    std::vector<MyColumn> out;
    for (size_t i = 0; i < r.size(); ++i) {
        const std::string name = r.text(i, 0), type = r.text(i, 1), full = r.text(i, 2);
        const std::string q = driftless::core::mysqlIdent(name);
        const bool isUnsigned = full.find("unsigned") != std::string::npos;
        MyColumn m{{name, Kind::Text}, q};
        if (type == "tinyint" || type == "smallint" || type == "mediumint" || type == "int" || type == "year" ||
            (type == "bigint" && !isUnsigned)) {
            m.target.kind = Kind::Int;
            m.sourceExpr = "CAST(" + q + " AS CHAR)";
        } else if (type == "bigint" || type == "decimal") {
            // numeric(20,0) / numeric(p,s): no trailing zeros on either side.
            m.target.kind = Kind::Numeric;
            const std::string s = "CAST(" + q + " AS CHAR)";
            m.sourceExpr =
                "IF(" + s + " LIKE '%.%', TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM " + s + ")), " + s + ")";
        } else if (type == "timestamp") {
            m.target.kind = Kind::Tstz;
            m.sourceExpr = "DATE_FORMAT(CONVERT_TZ(" + q + ", @@session.time_zone, '+00:00'), '%Y-%m-%dT%H:%i:%s.%f')";
        } else if (type == "datetime") {
            m.target.kind = Kind::Ts;
            m.sourceExpr = "DATE_FORMAT(" + q + ", '%Y-%m-%dT%H:%i:%s.%f')";
        } else if (type == "date") {
            m.target.kind = Kind::Date;
            m.sourceExpr = "DATE_FORMAT(" + q + ", '%Y-%m-%d')";
        } else if (type == "bit") {
            // bit(n): n binary digits, most significant first.
            m.sourceExpr = "LPAD(BIN(" + q + " + 0), " + r.text(i, 3) + ", '0')";
        } else if (type == "geometry" || type == "point" || type == "linestring" || type == "polygon" ||
                   type == "blob" || type == "binary" || type == "varbinary" || type == "longblob" ||
                   type == "mediumblob" || type == "tinyblob" || type.find("multi") == 0 ||
                   type == "geometrycollection") {
            m.target.kind = Kind::Bytea;
            m.sourceExpr = "LOWER(HEX(" + q + "))";
        }
        m.sourceExpr = "CONVERT(" + m.sourceExpr + " USING utf8mb4) COLLATE utf8mb4_bin";
        out.push_back(m);
    }
    return out;
}

std::string myRowSelect(const std::vector<MyColumn> &cols, const std::string &from)
{
    std::string expr = "CONCAT(";
    for (size_t i = 0; i < cols.size(); ++i) {
        const std::string &v = cols[i].sourceExpr;
        expr += (i ? ", '|', " : "") + std::string("COALESCE(CONCAT(CHAR_LENGTH(") + v + "), ':', " + v + "), 'N')";
    }
    return "SELECT CAST(" + expr + ") AS BINARY) AS r FROM " + from;
}

Digest myDigest(MysqlConnection &c, const std::vector<MyColumn> &cols, const std::string &from)
{
    auto r = c.query("SELECT COUNT(*), COALESCE(LOWER(MD5(GROUP_CONCAT(r ORDER BY r SEPARATOR '\\n'))), '') FROM (" +
                     myRowSelect(cols, from) + ") s");
    return {std::stoll(r.text(0, 0)), r.text(0, 1)};
}

std::vector<std::string> myRows(MysqlConnection &c, const std::vector<MyColumn> &cols, const std::string &from)
{
    auto r = c.query(myRowSelect(cols, from) + " ORDER BY r");
    std::vector<std::string> out;
    for (size_t i = 0; i < r.size(); ++i)
        out.push_back(r.text(i, 0));
    return out;
}

struct Zoo {
    Strat strategy;
    Target target;
    MyTestDb src{"zoo_my"};
    std::unique_ptr<PgTestDb> dst;
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string lite = dir.file("zoo.db");
    std::string pipeline = uniqueName("zoom");
    std::vector<const Feature *> active;

    Zoo(Strat s, Target t) : strategy(s), target(t)
    {
        if (t == Target::Postgres)
            dst = std::make_unique<PgTestDb>("zoo_mydst");
    }
    std::string workspace(const std::string &tables) const
    {
        std::string out = "endpoints:\n  app: { kind: mysql, dsn: \"" + src.dsn() + "\" }\n";
        if (target == Target::Postgres)
            out += "  dw: { kind: postgres, dsn: \"" + dst->dsn() + "\" }\n";
        else
            out += "  dw: { kind: sqlite, path: \"" + lite + "\" }\n";
        out += "pipelines:\n  - name: " + pipeline + "\n    source: app\n    target: dw\n";
        if (target == Target::Postgres)
            out += "    target_schema: zoo\n";
        return out + "    tables:\n" + tables;
    }
    std::string entry(const std::string &table) const
    {
        std::string e = "      - { table: " + src.name() + "." + table + ", strategy: " + strategyName(strategy) +
                        ", page_size: 16";
        if (strategy == Strat::Cursor)
            e += ", cursor: updated_at, lookback: 2s";
        return e + " }\n";
    }
    CliResult cli(const std::vector<std::string> &args, const std::map<std::string, std::string> &env = {},
                  const std::string &stateFile = {})
    {
        std::vector<std::string> a{"--state", stateFile.empty() ? state : stateFile};
        a.insert(a.end(), args.begin(), args.end());
        return runCli(a, env, 600);
    }
    std::string status()
    {
        auto r = cli({"status", "--json"});
        std::string out;
        try {
            for (const auto &t : nlohmann::json::parse(r.out)["tables"])
                if (t.value("state", "") != "ok")
                    out += "  " + t.value("table", std::string("?")) + ": " + t.dump().substr(0, 600) + "\n";
        } catch (const std::exception &) {
            out = r.out + r.err;
        }
        return out;
    }
    /// A table as a `reconcile` argument: db."Name". The CLI reads these with Postgres rules, so
    /// an unquoted `db.Cased` folds to `db.cased` and picks the other table (FAILS below).
    std::string cliName(const std::string &t) const { return "\"" + src.name() + "\".\"" + t + "\""; }
    std::vector<std::string> reconcileArgs(const std::vector<std::string> &extra) const
    {
        std::vector<std::string> a{"reconcile", pipeline};
        for (const Feature *f : active)
            for (const auto &t : f->tables)
                a.push_back(cliName(t));
        a.push_back("--json");
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

struct TableResult {
    long long rows = 0;
    bool equal = false;
    std::string detail;
};

std::map<std::string, TableResult> oracle(Zoo &z, bool withDetail)
{
    auto src = offsetSession(z.src);
    std::map<std::string, TableResult> out;
    for (const Feature *f : z.active)
        for (const auto &t : f->tables) {
            TableResult r;
            try {
                auto cols = myColumns(src, z.src.name(), t);
                std::vector<OracleColumn> tcols;
                for (auto &c : cols)
                    tcols.push_back(c.target);
                const std::string from = driftless::core::mysqlIdent(t);
                Digest a = myDigest(src, cols, from), b;
                std::vector<std::string> rows;
                if (z.target == Target::Sqlite) {
                    b = sqliteDigest(z.lite, tcols, t);
                } else {
                    auto c = z.dst->connect();
                    prepareSession(c);
                    b = pgDigest(c, tcols, "zoo." + driftless::core::quoteIdent(t));
                }
                r.equal = a == b;
                r.rows = a.rows;
                if (!r.equal && withDetail) {
                    if (z.target == Target::Sqlite)
                        rows = sqliteRows(z.lite, tcols, t);
                    else {
                        auto c = z.dst->connect();
                        prepareSession(c);
                        rows = pgRows(c, tcols, "zoo." + driftless::core::quoteIdent(t));
                    }
                    r.detail = "source " + std::to_string(a.rows) + " rows " + a.md5 + ", target " +
                               std::to_string(b.rows) + " rows " + b.md5 + "; " +
                               describeDifference(myRows(src, cols, from), rows);
                }
            } catch (const std::exception &e) {
                r.detail = std::string("oracle query failed: ") + e.what();
            }
            out[t] = r;
        }
    return out;
}

bool allEqual(const std::map<std::string, TableResult> &m)
{
    for (auto &[k, v] : m)
        if (!v.equal)
            return false;
    return true;
}

void everyFeature(Strat strategy, Target target)
{
    const unsigned seed = zooSeed() + static_cast<unsigned>(strategy) * 10 + static_cast<unsigned>(target);
    std::printf("zoo mariadb %s -> %s: writer seed %u%s\n", strategyName(strategy), targetName(target), seed,
                kAllCombinations ? " (DRIFTLESS_ZOO_ALL=1: known failures included)" : "");
    const auto started = std::chrono::steady_clock::now();
    Zoo z(strategy, target);
    auto phase = [&](const char *what) {
        std::printf("  %5.1f s  %s\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), what);
        std::fflush(stdout);
    };
    {
        auto c = offsetSession(z.src);
        for (const auto &f : features()) {
            try {
                for (const auto &s : f.ddl)
                    c.exec(s);
                for (const auto &s : f.seed)
                    c.exec(s);
            } catch (const std::exception &e) {
                FAIL() << f.name << ": DDL or seed failed: " << e.what();
            }
            if (enabled(f, strategy, target))
                z.active.push_back(&f);
        }
    }

    // Refusals: the feature's tables alone in a workspace of their own; `apply` exits 2 naming
    // the clash and stores nothing.
    for (const auto &f : features())
        if (auto it = f.refusedInto.find(target); it != f.refusedInto.end()) {
            std::string tables;
            for (const auto &t : f.tables)
                tables += z.entry(t);
            const std::string file = z.dir.file("refused.yaml"), state = z.dir.file("refused.db");
            writeFile(file, z.workspace(tables));
            auto r = z.cli({"apply", file}, {}, state);
            EXPECT_EQ(r.exitCode, 2) << f.name << ": " << r.out << r.err;
            EXPECT_NE(r.err.find(it->second), std::string::npos) << f.name << ": no reason in: " << r.err;
            for (const auto &t : f.tables)
                EXPECT_NE(r.err.find(t), std::string::npos) << f.name << ": " << t << " not named in: " << r.err;
            EXPECT_FALSE(std::filesystem::exists(state)) << f.name << ": a refused apply stored a workspace";
        }
    phase("tables created and seeded, refusals checked");

    std::string tables;
    for (const Feature *f : z.active)
        for (const auto &t : f->tables)
            tables += z.entry(t);
    writeFile(z.dir.file("zoo.yaml"), z.workspace(tables));
    {
        auto r = z.cli({"apply", z.dir.file("zoo.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    {
        auto r = z.cli({"run", "--once"});
        EXPECT_EQ(r.exitCode, 0) << "initial pass: " << r.err << z.status();
    }
    phase("applied, initial pass done");

    auto wconn = offsetSession(z.src);
    Writer writer(wconn, z.active, seed, kMariadbWriter);
    const int total = writer.remaining();
    int written = writer.run(total / 2);
    if (strategy == Strat::Cdc) {
        wconn.exec("INSERT INTO bulk (id, v) SELECT seq, seq FROM seq_1_to_3000");
        wconn.exec("TRUNCATE TABLE bulk");
        wconn.exec("INSERT INTO bulk (id, v) SELECT seq, -seq FROM seq_1_to_3000");
        wconn.exec("UPDATE bulk SET v = v + 1, note = 'x'");
        wconn.exec("TRUNCATE TABLE bulk");
        wconn.exec("INSERT INTO bulk (id, v, note) SELECT seq, seq * 2, 'last' FROM seq_1_to_5000");
    }
    {
        const std::string log = z.dir.file("killed.log");
        int pid =
            spawnCli({"--state", z.state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "batch.after_commit:2"}}, log);
        int rc = waitPid(pid, 600);
        EXPECT_TRUE(rc == -SIGKILL || rc == 0) << "killed pass exited " << rc << ": " << readFile(log);
        std::printf("killed pass: %s\n", rc == -SIGKILL ? "SIGKILL after batch 2" : "finished with fewer batches");
    }
    if (strategy == Strat::Cdc)
        wconn.exec("DELETE FROM bulk WHERE id % 3 = 0");
    written += writer.run(total);
    std::printf("writer: %d statements (%d failed and were rolled back)\n", written, writer.failures());
    phase("writer done");

    std::map<std::string, TableResult> result;
    const int passes = strategy == Strat::Cursor ? 2 : 5;
    for (int pass = 0; pass < passes; ++pass) {
        if (pass && strategy == Strat::Cursor)
            std::this_thread::sleep_for(std::chrono::seconds(3));
        auto r = z.cli({"run", "--once"});
        EXPECT_EQ(r.exitCode, 0) << "pass " << pass << ": " << r.err << z.status();
        result = oracle(z, false);
        if (allEqual(result))
            break;
    }
    // Cursor sync does not see deletes or key changes (the partition moves): reconcile finds
    // them and repair removes them.
    if (strategy == Strat::Cursor && !allEqual(result)) {
        auto rec = z.cli(z.reconcileArgs({"--max-keys", "1000"}));
        EXPECT_TRUE(rec.exitCode == 0 || rec.exitCode == 3) << rec.out << rec.err;
        if (rec.exitCode == 3) {
            auto id = nlohmann::json::parse(rec.out)["report_id"].get<long long>();
            auto rep = z.cli({"repair", std::to_string(id), "--json"});
            EXPECT_EQ(rep.exitCode, 0) << rep.out << rep.err;
        }
    }
    result = oracle(z, true);
    phase("caught up, oracle computed");

    std::vector<std::string> drift;
    {
        auto rec = z.cli(z.reconcileArgs({}));
        EXPECT_EQ(rec.exitCode, 0) << rec.err << "\n" << rec.out.substr(0, 4000);
        try {
            for (const auto &t : nlohmann::json::parse(rec.out)["tables"]) {
                long long m = t.value("missing", 0LL), x = t.value("extra", 0LL), d = t.value("different", 0LL);
                if (!t["error"].is_null())
                    drift.push_back(t.value("table", std::string()) + ": reconcile error: " + t["error"].dump());
                if (m || x || d)
                    drift.push_back(t.value("table", std::string()) + ": reconcile: missing " + std::to_string(m) +
                                    ", extra " + std::to_string(x) + ", different " + std::to_string(d) + " " +
                                    t["keys"].dump().substr(0, 400));
            }
        } catch (const std::exception &e) {
            ADD_FAILURE() << "reconcile --json: " << e.what() << ": " << rec.out.substr(0, 2000) << rec.err;
        }
    }
    phase("reconciled");
    for (const Feature *f : z.active)
        for (const auto &t : f->tables) {
            const auto &r = result[t];
            EXPECT_TRUE(r.equal) << f->name << " / " << t << " by " << strategyName(strategy) << " into "
                                 << targetName(target) << ": oracle differs: " << r.detail;
        }
    for (const auto &d : drift)
        ADD_FAILURE() << d;
    std::string counts;
    for (auto &[t, r] : result)
        counts += " " + t + "=" + std::to_string(r.rows);
    std::printf("oracle rows:%s\n", counts.c_str());
    if (!allEqual(result) || !drift.empty())
        std::printf("tables not ok per status:\n%s", z.status().c_str());
    std::printf(
        "zoo mariadb %s -> %s: %zu features, %d seconds\n", strategyName(strategy), targetName(target), z.active.size(),
        static_cast<int>(
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count()));
}

} // namespace

// Every feature by each strategy into each target: one pipeline per pair, in this order.
class ZooMysqlFeatures : public ::testing::TestWithParam<std::tuple<Strat, Target>> {};

TEST_P(ZooMysqlFeatures, syncsEveryFeature)
{
    everyFeature(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(ByStrategyIntoTarget, ZooMysqlFeatures,
                         ::testing::Combine(::testing::Values(Strat::FullRefresh, Strat::Cursor, Strat::Cdc),
                                            ::testing::Values(Target::Postgres, Target::Sqlite)),
                         [](const ::testing::TestParamInfo<std::tuple<Strat, Target>> &info) {
                             return std::string(strategyName(std::get<0>(info.param))) + "_into_" +
                                    targetName(std::get<1>(info.param));
                         });

// A zero date written under a permissive sql_mode stops the table with an error naming the
// table, the column and the key (docs/type-mapping.md): `run --once` exits 1. Kept apart from the
// shared pipelines, whose oracle expects every table synced (a CDC pipeline streams its other
// tables on: tst_mysqlsource aZeroDateStopsItsTableAloneUntilARunningSyncTakesItsReSnapshot).
TEST(ZooMysql, aZeroDateStopsTheTableNamingTableColumnAndKey)
{
    for (Strat s : {Strat::FullRefresh, Strat::Cursor, Strat::Cdc}) {
        SCOPED_TRACE(strategyName(s));
        Zoo z(s, Target::Postgres);
        z.src.exec(stamped("CREATE TABLE zerod (id int PRIMARY KEY, born date, v int"));
        z.src.exec("INSERT INTO zerod (id, born, v) VALUES (1, '2020-01-01', 1), (2, '2020-01-02', 2)");
        writeFile(z.dir.file("zoo.yaml"), z.workspace(z.entry("zerod")));
        auto a = z.cli({"apply", z.dir.file("zoo.yaml")});
        ASSERT_EQ(a.exitCode, 0) << a.out << a.err;
        auto first = z.cli({"run", "--once"});
        ASSERT_EQ(first.exitCode, 0) << first.err;
        auto c = z.src.connect();
        c.exec("SET SESSION sql_mode = ''");
        c.exec("INSERT INTO zerod (id, born, v) VALUES (7, '0000-00-00', 3)");
        auto r = z.cli({"run", "--once"});
        EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
        const std::string all = r.out + r.err;
        std::printf(
            "%s: %s\n", strategyName(s),
            r.err.substr(r.err.rfind("driftless:") == std::string::npos ? 0 : r.err.rfind("driftless:")).c_str());
        // The two readers word it differently (full refresh: "table db.zerod, column born, row
        // id=7"; the binlog decoder: "key (id=7) of `db`.`zerod` ... column `born`"); both name
        // the table, the column, the key and the value.
        auto has = [&](const std::string &a, const std::string &b) {
            return all.find(a) != std::string::npos || all.find(b) != std::string::npos;
        };
        EXPECT_TRUE(has(z.src.name() + ".zerod", "`" + z.src.name() + "`.`zerod`")) << "no table in: " << all;
        EXPECT_TRUE(has("column born", "column `born`")) << "no column in: " << all;
        EXPECT_NE(all.find("id=7"), std::string::npos) << "no key in: " << all;
        EXPECT_NE(all.find("0000-00-00"), std::string::npos) << "no value in: " << all;
        EXPECT_EQ(z.dst->scalar("SELECT count(*) FROM zoo.zerod"), "2") << "what was synced stays";
    }
}

// `reconcile PIPELINE db.Cased` read the name with Postgres rules, folded it to db.cased and
// compared (and `repair` then repaired) the other table, silently, although a MySQL source's
// `table:` keeps its case (README). Command-line table names now follow the source's rules.
TEST(ZooMysql, reconcileTakesAMariaDbTableNameWithItsCase)
{
    Zoo z(Strat::FullRefresh, Target::Postgres);
    z.src.exec("CREATE TABLE Cased (id int PRIMARY KEY, v int)");
    z.src.exec("CREATE TABLE cased (id int PRIMARY KEY, v int)");
    z.src.exec("INSERT INTO Cased VALUES (1, 1), (2, 2)");
    z.src.exec("INSERT INTO cased VALUES (1, 1), (2, 2)");
    writeFile(z.dir.file("zoo.yaml"), z.workspace(z.entry("Cased") + z.entry("cased")));
    ASSERT_EQ(z.cli({"apply", z.dir.file("zoo.yaml")}).exitCode, 0);
    ASSERT_EQ(z.cli({"run", "--once"}).exitCode, 0);
    // Deleted at the source after the pass: the row the pass loaded is in flight (its next pass
    // deletes it), in Cased and not in cased.
    z.src.exec("DELETE FROM Cased WHERE id = 2");
    auto rec = z.cli({"reconcile", z.pipeline, z.src.name() + ".Cased", "--json"});
    EXPECT_EQ(rec.exitCode, 0) << rec.out << rec.err;
    auto j = nlohmann::json::parse(rec.out);
    ASSERT_EQ(j["tables"].size(), 1u);
    EXPECT_EQ(j["tables"][0].value("table", std::string()), z.src.name() + ".\"Cased\"");
    EXPECT_EQ(j["tables"][0].value("extra", 0LL), 0);
    EXPECT_EQ(j["tables"][0].value("in_flight", 0LL), 1);
}
