// Schema changes (`schema_changes: { add_column: ... }`): a column the source gains is filled into
// the target's existing rows (backfill), added empty (propagate), left out (ignore), or stops the
// table (pause). Everything runs the way a DBA does it: YAML, `driftless-cli apply`, then `run`.
// Target contents are compared with an independent query on each side, never with the engine's
// own hashing.

#include "core/config/workspacefile.h"
#include "core/db/sqlitedb.h"
#include "core/model/error.h"
#include "core/state/statestore.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{200};

/// The rows of `items` as (id, a, b, d) in key order, hashed: the same query on each side.
const char *kWithD = "SELECT md5(coalesce(string_agg(ROW(id, a, b, d)::text, ',' ORDER BY id), '')) FROM items";
const char *kWithoutD = "SELECT md5(coalesce(string_agg(ROW(id, a, b)::text, ',' ORDER BY id), '')) FROM items";

std::string seed(long long rows)
{
    return "CREATE TABLE items (id bigint PRIMARY KEY, a text NOT NULL, b int);\n"
           "INSERT INTO items SELECT g, 'row ' || g, g % 13 FROM generate_series(1, " +
           std::to_string(rows) + ") g;\n";
}

/// Counts, on the target, every update the engine makes: the ones that changed another column
/// than d, and the ones that changed d while keeping the row's version (only a backfill chunk
/// does that), per row, so a test can tell which rows a chunk touched.
const char *kAudit = R"sql(
CREATE SCHEMA audit;
CREATE TABLE audit.writes (id bigint, other_changed boolean, d_kept_version boolean, old_version bigint);
CREATE FUNCTION audit.note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO audit.writes VALUES (
        NEW.id,
        (to_jsonb(OLD) - 'd' - '_driftless_version') IS DISTINCT FROM (to_jsonb(NEW) - 'd' - '_driftless_version'),
        to_jsonb(OLD) -> 'd' IS DISTINCT FROM to_jsonb(NEW) -> 'd'
            AND OLD._driftless_version = NEW._driftless_version,
        OLD._driftless_version);
    RETURN NEW;
END $$;
CREATE TRIGGER note BEFORE UPDATE ON public.items FOR EACH ROW EXECUTE FUNCTION audit.note();
ALTER TABLE public.items ENABLE ALWAYS TRIGGER note;
)sql";

struct SchemaChanges : ::testing::Test {
    PgTestDb src{"sc_src"};
    PgTestDb dst{"sc_dst"};
    TempDir dir;
    std::string pipeline = uniqueName("sc");
    std::string state = dir.file("workspace.db");
    std::string file = dir.file("ws.yaml");

    std::string head(const std::string &pipelineExtra = "")
    {
        const auto &s = servers();
        auto dsn = [&](const std::string &db) {
            return "\"host=127.0.0.1 port=" + std::to_string(s.pgPort) + " dbname=" + db + " user=" + s.pgUser + "\"";
        };
        return "endpoints:\n"
               "  app: { kind: postgres, dsn: " +
               dsn(src.name()) +
               " }\n"
               "  dw:  { kind: postgres, dsn: " +
               dsn(dst.name()) +
               " }\n"
               "pipelines:\n"
               "  - name: " +
               pipeline +
               "\n"
               "    source: app\n"
               "    target: dw\n" +
               pipelineExtra + "    tables:\n";
    }
    void apply(const std::string &yaml)
    {
        writeFile(file, yaml);
        auto r = runCli({"--state", state, "apply", file});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    /// The state file's events of `kind` for the pipeline, one message a line.
    std::string events(const std::string &kind = "schema_change")
    {
        SqliteDb db(state);
        auto st = db.prepare("SELECT level || ' ' || message FROM events WHERE kind = ?1 ORDER BY id");
        st.bindText(1, kind);
        std::string out;
        while (st.step())
            out += st.text(0) + "\n";
        return out;
    }
};

TEST_F(SchemaChanges, workspaceFileReadsWritesAndRefusesPolicies)
{
    auto ws = WorkspaceFile::parse(head("    schema_changes: { add_column: propagate }\n") +
                                       "      - table: public.items\n"
                                       "        strategy: cdc\n"
                                       "        schema_changes: { add_column: ignore }\n"
                                       "      - { table: public.other, strategy: cdc }\n",
                                   "ws.yaml", "/");
    const auto &p = ws.pipelines.at(0);
    EXPECT_EQ(p.addColumn, std::optional<std::string>("propagate"));
    EXPECT_EQ(p.tables.at(0).addColumn, std::optional<std::string>("ignore"));
    EXPECT_EQ(p.tables.at(1).addColumn, std::nullopt);
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "again.yaml", "/"), ws);

    struct Bad {
        std::string item, field, needle;
    };
    for (const auto &b : std::vector<Bad>{
             {"        schema_changes: { add_column: fill }\n", "schema_changes.add_column",
              "backfill (the default), propagate, ignore or pause"},
             {"        schema_changes: { rename_column: follow }\n", "schema_changes.rename_column",
              "rename (the default) or pause"},
             {"        schema_changes: { add_colum: backfill }\n", "schema_changes.add_colum", "unknown key"},
             {"        schema_changes: backfill\n", "schema_changes", "expected a map"}}) {
        try {
            WorkspaceFile::parse(head() + "      - table: public.items\n        strategy: cdc\n" + b.item, "ws.yaml",
                                 "/");
            ADD_FAILURE() << "accepted: " << b.item;
        } catch (const ConfigError &e) {
            EXPECT_EQ(e.line(), 11) << e.what();
            EXPECT_EQ(e.field(), "pipelines[" + pipeline + "].tables[public.items]." + b.field) << e.what();
            EXPECT_NE(std::string(e.what()).find(b.needle), std::string::npos) << e.what();
        }
    }
    // Cursor and full-refresh tables take the policies too (at their next pass): accepted.
    const auto cursorWs = WorkspaceFile::parse(head() + "      - table: public.items\n        strategy: cursor\n"
                                                        "        cursor: id\n"
                                                        "        schema_changes: { add_column: ignore }\n",
                                               "ws.yaml", "/");
    EXPECT_EQ(cursorWs.pipelines.at(0).tables.at(0).addColumn, std::optional<std::string>("ignore"));
    // The pipeline's policies are checked the same way.
    try {
        WorkspaceFile::parse(head("    schema_changes: { rename_column: keep }\n") +
                                 "      - { table: public.items, strategy: cdc }\n",
                             "ws.yaml", "/");
        ADD_FAILURE() << "accepted rename_column: keep";
    } catch (const ConfigError &e) {
        EXPECT_EQ(e.line(), 8) << e.what();
        EXPECT_EQ(e.field(), "pipelines[" + pipeline + "].schema_changes.rename_column") << e.what();
    }

    // apply keeps both levels in the state file (a run reads them from there).
    src.exec(seed(10) + "CREATE TABLE other (id int PRIMARY KEY);");
    apply(head("    schema_changes: { add_column: propagate }\n") +
          "      - { table: public.items, strategy: cdc, schema_changes: { add_column: pause } }\n"
          "      - { table: public.other, strategy: cdc }\n");
    const auto stored = StateStore(state).loadWorkspace();
    ASSERT_EQ(stored.pipelines.size(), 1u);
    EXPECT_EQ(stored.pipelines[0].addColumn, std::optional<std::string>("propagate"));
    EXPECT_EQ(stored.pipelines[0].tables.at(0).addColumn, std::optional<std::string>("pause"));
    EXPECT_EQ(stored.pipelines[0].tables.at(1).addColumn, std::nullopt);
    writeFile(file, head("    schema_changes: { add_column: sometimes }\n") +
                        "      - { table: public.items, strategy: cdc }\n");
    auto r = runCli({"--state", state, "apply", file});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("ws.yaml:8"), std::string::npos) << r.err;
}

// The issue's test: a column added with a DEFAULT while the stream runs, a bounded writer
// updating it right after the DDL. Every target row ends with the source's d; the backfill wrote
// only d; rows the writer changed after the DDL were never touched by a chunk.
TEST_F(SchemaChanges, backfillFillsExistingRowsWhileTheStreamGoesOn)
{
    constexpr long long kRows = 20000;
    src.exec(seed(kRows));
    apply(head() + "      - { table: public.items, strategy: cdc }\n");
    const std::string log = dir.file("run.log");
    const int runner = spawnCli({"--state", state, "run"}, {}, log);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return dst.scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'items' AND schemaname = 'public'") ==
                       "1" &&
                   dst.scalar("SELECT count(*) FROM items") == std::to_string(kRows);
        },
        120, kPoll))
        << readFile(log);
    dst.exec(kAudit);

    // The DDL, then at once a bounded writer: d on every 97th row (20 transactions), and new rows.
    src.exec("ALTER TABLE items ADD COLUMN d int DEFAULT 7");
    auto c = src.connect();
    for (int i = 0; i < 20; ++i) {
        c.exec("UPDATE items SET d = id * 10 + " + std::to_string(i) +
               " WHERE id % 97 = 0 AND id % 20 = " + std::to_string(i));
        c.exec("INSERT INTO items (id, a, b, d) VALUES (" + std::to_string(kRows + 1 + i) + ", 'new', 1, " +
               std::to_string(1000 + i) + ")");
    }
    const std::string want = src.scalar(kWithD);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] { return dst.scalar(kWithD) == want && events().find("column d added") != std::string::npos; }, 120, kPoll))
        << readFile(log) << events() << dst.scalar("SELECT count(*) FROM items WHERE d IS NULL");
    // It streamed on throughout: the runner never stopped.
    EXPECT_EQ(::kill(runner, 0), 0) << readFile(log);
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE d IS NULL"), "0");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE d = 7"),
              src.scalar("SELECT count(*) FROM items WHERE d = 7"));
    // Only d was written by anything after the DDL (the writer changed only d too).
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM audit.writes WHERE other_changed"), "0");
    // The chunks wrote d into every row nothing else touched, once each.
    const std::string untouched =
        src.scalar("SELECT count(*) FROM items WHERE id <= " + std::to_string(kRows) + " AND id % 97 <> 0");
    const std::string chunkWrites = "SELECT count(*) FROM audit.writes WHERE d_kept_version";
    EXPECT_EQ(dst.scalar(chunkWrites + " AND id % 97 <> 0"), untouched);
    // And never over a row the stream had written since the column appeared: the new rows came
    // after the first update, so every row a chunk wrote is older than all of them.
    const std::string firstNew =
        dst.scalar("SELECT min(_driftless_version) FROM items WHERE id > " + std::to_string(kRows));
    EXPECT_EQ(dst.scalar(chunkWrites + " AND old_version >= " + firstNew), "0");
    EXPECT_EQ(dst.scalar(chunkWrites + " AND id > " + std::to_string(kRows)), "0");
    const std::string ev = events();
    EXPECT_NE(ev.find("info column d added, 20,0"), std::string::npos) << ev; // and the new rows, if read
    EXPECT_NE(ev.find("rows backfilled in "), std::string::npos) << ev;
    EXPECT_NE(ev.find("checked: key and d match the source (20,020 rows)"), std::string::npos) << ev;
}

// propagate, ignore and pause in one pipeline (per-table overrides of the pipeline's backfill),
// through two passes of `run --once`: the column is added between them, as a DBA would.
TEST_F(SchemaChanges, propagateIgnoreAndPauseDoWhatTheySay)
{
    src.exec(seed(300) + "CREATE TABLE kept (LIKE items INCLUDING ALL); INSERT INTO kept SELECT * FROM items;"
                         "CREATE TABLE held (LIKE items INCLUDING ALL); INSERT INTO held SELECT * FROM items;");
    apply(head("    schema_changes: { add_column: backfill }\n") +
          "      - { table: public.items, strategy: cdc, schema_changes: { add_column: propagate } }\n"
          "      - { table: public.kept, strategy: cdc, schema_changes: { add_column: ignore } }\n"
          "      - { table: public.held, strategy: cdc, schema_changes: { add_column: pause } }\n");
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    ASSERT_EQ(dst.scalar("SELECT count(*) FROM held"), "300");

    for (const char *t : {"items", "kept", "held"})
        src.exec(std::string("ALTER TABLE ") + t + " ADD COLUMN d int DEFAULT 7; UPDATE " + t +
                 " SET d = 70, b = -1 WHERE id <= 10; INSERT INTO " + t + " VALUES (301, 'new', 1, 8);");
    r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;

    // propagate: the column is there; rows the stream brought have d, the others keep NULL.
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE d IS NULL"), "290");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE d = 70"), "10");
    EXPECT_EQ(dst.scalar("SELECT d FROM items WHERE id = 301"), "8");
    EXPECT_EQ(dst.scalar(kWithoutD), src.scalar(kWithoutD));
    // ignore: no column d; every other change applied.
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM information_schema.columns WHERE table_name = 'kept' AND "
                         "column_name = 'd'"),
              "0");
    EXPECT_EQ(dst.scalar("SELECT md5(string_agg(ROW(id, a, b)::text, ',' ORDER BY id)) FROM kept"),
              src.scalar("SELECT md5(string_agg(ROW(id, a, b)::text, ',' ORDER BY id)) FROM kept"));
    // pause: the table keeps what it had and says which column came and what to do.
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM held"), "300");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM held WHERE b = -1"), "0");
    const std::string ev = events();
    EXPECT_NE(ev.find("source added column(s) d; added to the target and applied (existing rows keep NULL"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("source added column(s) d; not added to the target (schema_changes: add_column: ignore)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("source added column(s) d (schema_changes: add_column: pause); the table is paused"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("driftless-cli resnapshot " + pipeline + " public.held"), std::string::npos) << ev;

    // ignore holds on the next pass too (the target is never given d), with new changes applied.
    src.exec("UPDATE kept SET b = -2, d = 71 WHERE id = 20");
    r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(dst.scalar("SELECT b FROM kept WHERE id = 20"), "-2");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM information_schema.columns WHERE table_name = 'kept' AND "
                         "column_name = 'd'"),
              "0");
    // And through a re-snapshot, which loads the table again without it.
    r = runCli({"--state", state, "resnapshot", pipeline, "public.kept"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    src.exec("UPDATE kept SET b = -3 WHERE id = 21");
    r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM information_schema.columns WHERE table_name = 'kept' AND "
                         "column_name = 'd'"),
              "0");
    EXPECT_EQ(dst.scalar("SELECT md5(string_agg(ROW(id, a, b)::text, ',' ORDER BY id)) FROM kept"),
              src.scalar("SELECT md5(string_agg(ROW(id, a, b)::text, ',' ORDER BY id)) FROM kept"));
}

// A backfill cut short by a kill -9 after a chunk resumes at its next chunk: the progress is in
// the target's checkpoint row.
TEST_F(SchemaChanges, aBackfillInterruptedByACrashResumes)
{
    constexpr long long kRows = 23000; // five chunks
    src.exec(seed(kRows));
    apply(head() + "      - { table: public.items, strategy: cdc }\n");
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    dst.exec(kAudit);

    // Updated between the DDL and the backfill (the engine was not running): the stream brings
    // these rows with their d, and no chunk may touch them.
    src.exec("ALTER TABLE items ADD COLUMN d int DEFAULT 7; UPDATE items SET d = id WHERE id % 1000 = 0");
    r = runCli({"--state", state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "addcolumn.after_chunk:2"}});
    ASSERT_NE(r.exitCode, 0) << r.out << r.err;
    const std::string position =
        dst.scalar("SELECT position FROM _driftless.checkpoints WHERE source_table = 'public.items'");
    EXPECT_NE(position.find("\"add_column\""), std::string::npos) << position;
    EXPECT_NE(position.find("\"after\":[\"10000\"]"), std::string::npos) << position;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE d IS NULL"), "12987");

    r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(dst.scalar(kWithD), src.scalar(kWithD));
    const std::string ev = events();
    EXPECT_NE(ev.find("column d added, 23,000 rows backfilled"), std::string::npos) << ev;
    EXPECT_NE(ev.find("match the source (23,000 rows)"), std::string::npos) << ev;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM audit.writes WHERE d_kept_version AND id % 1000 = 0"), "0");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM audit.writes WHERE d_kept_version"), "22977");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM audit.writes WHERE other_changed"), "0");
    EXPECT_EQ(dst.scalar("SELECT position FROM _driftless.checkpoints WHERE source_table = 'public.items'")
                  .find("add_column"),
              std::string::npos);
}

// A SQLite target: the same backfill, values converted as the merge converts them; the rows
// compared with a query on each side.
TEST_F(SchemaChanges, backfillFillsASqliteTarget)
{
    src.exec(seed(12000));
    const auto &s = servers();
    const std::string lite = dir.file("dw.db");
    apply("endpoints:\n"
          "  app: { kind: postgres, dsn: \"host=127.0.0.1 port=" +
          std::to_string(s.pgPort) + " dbname=" + src.name() + " user=" + s.pgUser +
          "\" }\n"
          "  dw:  { kind: sqlite, path: \"" +
          lite +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          pipeline +
          "\n"
          "    source: app\n"
          "    target: dw\n"
          "    tables:\n"
          "      - { table: public.items, strategy: cdc }\n");
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    src.exec("ALTER TABLE items ADD COLUMN d numeric DEFAULT 7.5; ALTER TABLE items ADD COLUMN e boolean DEFAULT true;"
             "UPDATE items SET d = id / 3.0, e = false WHERE id % 500 = 0");
    r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;

    const char *rowText = "id || '|' || a || '|' || coalesce(b, -1) || '|' || coalesce(d, -1) || '|' || "
                          "coalesce(CASE WHEN e THEN 1 ELSE 0 END, -1)";
    SqliteDb db(lite);
    auto st = db.prepare(std::string("SELECT coalesce(group_concat(r, ';'), '') FROM (SELECT ") +
                         "id || '|' || a || '|' || coalesce(b, -1) || '|' || coalesce(d, -1) || '|' || "
                         "coalesce(e, -1) AS r FROM items ORDER BY id)");
    ASSERT_TRUE(st.step());
    const std::string have = st.text(0);
    const std::string want = src.scalar(std::string("SELECT string_agg(") + rowText + ", ';' ORDER BY id) FROM items");
    EXPECT_EQ(have.size(), want.size());
    EXPECT_TRUE(have == want) << have.substr(0, 300) << "\n" << want.substr(0, 300);
    const std::string ev = events();
    EXPECT_NE(ev.find("column d, e added, 12,000 rows backfilled"), std::string::npos) << ev;
}

} // namespace
