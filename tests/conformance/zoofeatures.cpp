#include "tests/conformance/zoofeatures.h"

namespace driftless::zoo {

const char *strategyName(Strat s)
{
    switch (s) {
    case Strat::FullRefresh:
        return "full_refresh";
    case Strat::Cursor:
        return "cursor";
    case Strat::Cdc:
        return "cdc";
    }
    return "?";
}

const char *targetName(Target t)
{
    return t == Target::Postgres ? "postgres" : "sqlite";
}

namespace {

// Every table carries the cursor column, stamped by every update the writer makes: cursor sync
// promises inserts and updates that move the cursor (README), and nothing else.
constexpr const char *kStamp = "updated_at timestamptz NOT NULL DEFAULT clock_timestamp()";

const std::pair<std::string, std::string> kNoKey{"has no primary key", "ADD PRIMARY KEY"};

ZooTable plain(const std::string &name)
{
    return {"zoo." + name, "zoo." + name, name, std::nullopt, false, {}};
}

std::vector<Feature> build()
{
    std::vector<Feature> f;

    f.push_back({"partitioned_keyless_root",
                 "LIST-partitioned table: root without a key (full refresh), leaves with keys; rows move "
                 "between leaves by an UPDATE of the partition key",
                 std::string("CREATE TABLE zoo.measure (id int NOT NULL, region text NOT NULL, v int, note text, ") +
                     kStamp +
                     ") PARTITION BY LIST (region);"
                     "CREATE TABLE zoo.measure_east PARTITION OF zoo.measure FOR VALUES IN ('east');"
                     "CREATE TABLE zoo.measure_west PARTITION OF zoo.measure FOR VALUES IN ('west');"
                     "ALTER TABLE zoo.measure_east ADD PRIMARY KEY (id);"
                     "ALTER TABLE zoo.measure_west ADD PRIMARY KEY (id);"
                     "CREATE INDEX ON zoo.measure (updated_at);",
                 "INSERT INTO zoo.measure (id, region, v, note) SELECT g, CASE WHEN g % 2 = 0 THEN 'east' ELSE "
                 "'west' END, g * 10, 'm' || g FROM generate_series(1, 40) g;",
                 40,
                 {{"zoo.measure",
                   "zoo.measure",
                   "measure",
                   Strat::FullRefresh,
                   false,
                   {{Strat::Cursor, kNoKey}, {Strat::Cdc, kNoKey}}},
                  plain("measure_east"),
                  plain("measure_west")},
                 {{'i', "INSERT INTO zoo.measure (id, region, v) VALUES ({n}, CASE WHEN {r} % 2 = 0 THEN 'east' ELSE "
                        "'west' END, {r})"},
                  {'u', "UPDATE zoo.measure SET v = {r}, note = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
                  {'m', "UPDATE zoo.measure SET region = CASE region WHEN 'east' THEN 'west' ELSE 'east' END, "
                        "updated_at = clock_timestamp() WHERE id = {k}"},
                  {'d', "DELETE FROM zoo.measure WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    f.push_back({"partition_root_publication",
                 "partitioned table with a key on the root, synced as the root; CDC through the DBA's own "
                 "publication WITH (publish_via_partition_root = true)",
                 std::string("CREATE TABLE zoo.ledger (id int NOT NULL, region text NOT NULL, amount numeric(12,2), ") +
                     kStamp +
                     ", PRIMARY KEY (id, region)) PARTITION BY LIST (region);"
                     "CREATE TABLE zoo.ledger_north PARTITION OF zoo.ledger FOR VALUES IN ('north');"
                     "CREATE TABLE zoo.ledger_south PARTITION OF zoo.ledger FOR VALUES IN ('south');"
                     "CREATE INDEX ON zoo.ledger (updated_at);",
                 "INSERT INTO zoo.ledger (id, region, amount) SELECT g, CASE WHEN g % 3 = 0 THEN 'north' ELSE "
                 "'south' END, g * 1.5 FROM generate_series(1, 40) g;",
                 40,
                 {plain("ledger")},
                 {{'i', "INSERT INTO zoo.ledger (id, region, amount) VALUES ({n}, 'north', {r} / 100.0)"},
                  {'u', "UPDATE zoo.ledger SET amount = {r} / 7.0, updated_at = clock_timestamp() WHERE id = {k}"},
                  {'m', "UPDATE zoo.ledger SET region = CASE region WHEN 'north' THEN 'south' ELSE 'north' END, "
                        "updated_at = clock_timestamp() WHERE id = {k}"},
                  {'d', "DELETE FROM zoo.ledger WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    f.push_back({"pk_include",
                 "PRIMARY KEY (id) INCLUDE (a, b): the key is id alone; updates of a and b",
                 std::string("CREATE TABLE zoo.incl (id int, a int, b text, c text, ") + kStamp +
                     ", PRIMARY KEY (id) INCLUDE (a, b)); CREATE INDEX ON zoo.incl (updated_at);",
                 "INSERT INTO zoo.incl (id, a, b, c) SELECT g, g, 'b' || g, 'c' || g FROM generate_series(1, 30) g;",
                 30,
                 {plain("incl")},
                 {{'i', "INSERT INTO zoo.incl (id, a, b, c) VALUES ({n}, {r}, '{w}', 'new')"},
                  {'u', "UPDATE zoo.incl SET a = {r}, b = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
                  {'u', "UPDATE zoo.incl SET c = NULL, updated_at = clock_timestamp() WHERE id = {k}"},
                  {'p', "UPDATE zoo.incl SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
                  {'d', "DELETE FROM zoo.incl WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    f.push_back(
        {"replica_identity_index",
         "REPLICA IDENTITY USING INDEX on a unique index that is not the primary key; updates of the "
         "indexed column",
         std::string("CREATE TABLE zoo.ri_index (id int PRIMARY KEY, code text NOT NULL, qty int, ") + kStamp +
             "); CREATE UNIQUE INDEX ri_index_code ON zoo.ri_index (code);"
             "ALTER TABLE zoo.ri_index REPLICA IDENTITY USING INDEX ri_index_code;"
             "CREATE INDEX ON zoo.ri_index (updated_at);",
         "INSERT INTO zoo.ri_index (id, code, qty) SELECT g, 'code-' || g, g FROM generate_series(1, 30) g;",
         30,
         {plain("ri_index")},
         {{'i', "INSERT INTO zoo.ri_index (id, code, qty) VALUES ({n}, 'code-{n}', {r})"},
          {'u', "UPDATE zoo.ri_index SET qty = {r}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'u', "UPDATE zoo.ri_index SET code = 'recoded-{r}-{k}', updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.ri_index SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.ri_index WHERE id = {k}"}},
         30,
         {{Strat::Cdc, {"leaves out primary-key column", "REPLICA IDENTITY DEFAULT"}}},
         {},
         ""});

    f.push_back(
        {"replica_identity_index_with_key",
         "REPLICA IDENTITY USING INDEX on a unique index that holds the primary key (code, id); updates "
         "of the indexed columns",
         std::string("CREATE TABLE zoo.ri_index_key (id int PRIMARY KEY, code text NOT NULL, qty int, ") + kStamp +
             "); CREATE UNIQUE INDEX ri_index_key_code ON zoo.ri_index_key (code, id);"
             "ALTER TABLE zoo.ri_index_key REPLICA IDENTITY USING INDEX ri_index_key_code;"
             "CREATE INDEX ON zoo.ri_index_key (updated_at);",
         "INSERT INTO zoo.ri_index_key (id, code, qty) SELECT g, 'code-' || g, g FROM generate_series(1, 30) g;",
         30,
         {plain("ri_index_key")},
         {{'i', "INSERT INTO zoo.ri_index_key (id, code, qty) VALUES ({n}, 'code-{n}', {r})"},
          {'u', "UPDATE zoo.ri_index_key SET qty = {r}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'u', "UPDATE zoo.ri_index_key SET code = 'recoded-{r}', updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.ri_index_key SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.ri_index_key WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back({"replica_identity_nothing",
                 "REPLICA IDENTITY NOTHING (updates and deletes carry no old key)",
                 std::string("CREATE TABLE zoo.ri_nothing (id int PRIMARY KEY, qty int, ") + kStamp +
                     "); ALTER TABLE zoo.ri_nothing REPLICA IDENTITY NOTHING;"
                     "CREATE INDEX ON zoo.ri_nothing (updated_at);",
                 "INSERT INTO zoo.ri_nothing (id, qty) SELECT g, g FROM generate_series(1, 30) g;",
                 30,
                 {plain("ri_nothing")},
                 {{'i', "INSERT INTO zoo.ri_nothing (id, qty) VALUES ({n}, {r})"},
                  {'u', "UPDATE zoo.ri_nothing SET qty = {r}, updated_at = clock_timestamp() WHERE id = {k}"},
                  {'d', "DELETE FROM zoo.ri_nothing WHERE id = {k}"}},
                 20,
                 {{Strat::Cdc, {"REPLICA IDENTITY NOTHING", "REPLICA IDENTITY DEFAULT"}}},
                 {},
                 ""});

    f.push_back(
        {"replica_identity_full",
         "REPLICA IDENTITY FULL with a primary key; updates, deletes and key updates",
         std::string("CREATE TABLE zoo.ri_full (id int PRIMARY KEY, qty int, label text, ") + kStamp +
             "); ALTER TABLE zoo.ri_full REPLICA IDENTITY FULL; CREATE INDEX ON zoo.ri_full (updated_at);",
         "INSERT INTO zoo.ri_full (id, qty, label) SELECT g, g, 'l' || g FROM generate_series(1, 30) g;",
         30,
         {plain("ri_full")},
         {{'i', "INSERT INTO zoo.ri_full (id, qty, label) VALUES ({n}, {r}, NULL)"},
          {'u', "UPDATE zoo.ri_full SET qty = {r}, label = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.ri_full SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.ri_full WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back(
        {"identity_columns",
         "identity keys: GENERATED ALWAYS AS IDENTITY and GENERATED BY DEFAULT AS IDENTITY",
         std::string("CREATE TABLE zoo.ident_always (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                     "payload text, ") +
             kStamp +
             "); CREATE INDEX ON zoo.ident_always (updated_at);"
             "CREATE TABLE zoo.ident_default (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
             "payload text, " +
             kStamp + "); CREATE INDEX ON zoo.ident_default (updated_at);",
         "INSERT INTO zoo.ident_always (payload) SELECT 'p' || g FROM generate_series(1, 30) g;"
         "INSERT INTO zoo.ident_default (payload) SELECT 'p' || g FROM generate_series(1, 30) g;",
         30,
         {plain("ident_always"), plain("ident_default")},
         {{'i', "INSERT INTO zoo.ident_always (payload) VALUES ('{w}')"},
          {'i', "INSERT INTO zoo.ident_default (payload) VALUES ('{w}')"},
          {'i', "INSERT INTO zoo.ident_default (id, payload) VALUES (100000 + {n}, 'explicit')"},
          {'u', "UPDATE zoo.ident_always SET payload = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.ident_default SET id = 200000 + {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.ident_always WHERE id = {k}"},
          {'d', "DELETE FROM zoo.ident_default WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back(
        {"generated_stored",
         "stored generated columns (numeric and text expressions)",
         std::string("CREATE TABLE zoo.gen_stored (id int PRIMARY KEY, qty int NOT NULL, price numeric(10,2) "
                     "NOT NULL, name text, total numeric GENERATED ALWAYS AS (qty * price) STORED, "
                     "shout text GENERATED ALWAYS AS (upper(name) || '!') STORED, ") +
             kStamp + "); CREATE INDEX ON zoo.gen_stored (updated_at);",
         "INSERT INTO zoo.gen_stored (id, qty, price, name) SELECT g, g, g * 0.25, 'n' || g FROM "
         "generate_series(1, 30) g;",
         30,
         {plain("gen_stored")},
         {{'i', "INSERT INTO zoo.gen_stored (id, qty, price, name) VALUES ({n}, {r} % 100, {r} / 1000.0, '{w}')"},
          {'u', "UPDATE zoo.gen_stored SET qty = qty + 1, updated_at = clock_timestamp() WHERE id = {k}"},
          {'u', "UPDATE zoo.gen_stored SET name = '{w}', price = price + 0.01, updated_at = clock_timestamp() "
                "WHERE id = {k}"},
          {'p', "UPDATE zoo.gen_stored SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.gen_stored WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back(
        {"domains",
         "domains over int and text (with CHECKs) and an array of a domain",
         std::string("CREATE DOMAIN zoo.posint AS int CHECK (VALUE > 0);"
                     "CREATE DOMAIN zoo.email AS text CHECK (VALUE LIKE '%@%');"
                     "CREATE TABLE zoo.domains (id zoo.posint PRIMARY KEY, mail zoo.email, qty zoo.posint, "
                     "scores zoo.posint[], ") +
             kStamp + "); CREATE INDEX ON zoo.domains (updated_at);",
         "INSERT INTO zoo.domains (id, mail, qty, scores) SELECT g, 'u' || g || '@example.org', g, "
         "ARRAY[g, g + 1]::zoo.posint[] FROM generate_series(1, 30) g;",
         30,
         {plain("domains")},
         {{'i', "INSERT INTO zoo.domains (id, mail, qty, scores) VALUES ({n}, 'n{r}@x.org', 1 + {r}, "
                "ARRAY[1 + {r}]::zoo.posint[])"},
          {'u',
           "UPDATE zoo.domains SET mail = '{r}@y.org', qty = 1 + {r}, scores = scores || (1 + {r} % 9)::zoo.posint, "
           "updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.domains SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.domains WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back(
        {"enums",
         "an enum (labels with spaces, quotes and non-ASCII) and an array of it",
         std::string("CREATE TYPE zoo.mood AS ENUM ('sad', 'so-so', 'très bien', 'it''s \"ok\"');"
                     "CREATE TABLE zoo.enums (id int PRIMARY KEY, mood zoo.mood, history zoo.mood[], ") +
             kStamp + "); CREATE INDEX ON zoo.enums (updated_at);",
         "INSERT INTO zoo.enums (id, mood, history) SELECT g, (enum_range(NULL::zoo.mood))[1 + g % 4], "
         "ARRAY[(enum_range(NULL::zoo.mood))[1 + (g + 1) % 4], 'très bien']::zoo.mood[] FROM "
         "generate_series(1, 30) g;",
         30,
         {plain("enums")},
         {{'i', "INSERT INTO zoo.enums (id, mood, history) VALUES ({n}, (enum_range(NULL::zoo.mood))[1 + {r} % 4], "
                "'{}')"},
          {'u', "UPDATE zoo.enums SET mood = (enum_range(NULL::zoo.mood))[1 + {r} % 4], history = history || "
                "(enum_range(NULL::zoo.mood))[1 + {r} % 3], updated_at = clock_timestamp() WHERE id = {k}"},
          {'u', "UPDATE zoo.enums SET mood = NULL, history = NULL, updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.enums SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.enums WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back(
        {"composites",
         "a composite type (with a text[] field) and an array of it",
         std::string("CREATE TYPE zoo.addr AS (street text, zip int, tags text[]);"
                     "CREATE TABLE zoo.composites (id int PRIMARY KEY, home zoo.addr, stops zoo.addr[], ") +
             kStamp + "); CREATE INDEX ON zoo.composites (updated_at);",
         "INSERT INTO zoo.composites (id, home, stops) SELECT g, ROW('Main St ' || g, 10000 + g, "
         "ARRAY['a', 'b c'])::zoo.addr, ARRAY[ROW('x, \"y\"', g, NULL)::zoo.addr] FROM generate_series(1, 30) g;",
         30,
         {plain("composites")},
         {{'i', "INSERT INTO zoo.composites (id, home) VALUES ({n}, ROW('{w}', {r}, ARRAY['t'])::zoo.addr)"},
          {'u', "UPDATE zoo.composites SET home.zip = {r}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'u', "UPDATE zoo.composites SET stops = stops || ROW(NULL, {r}, '{}')::zoo.addr, "
                "updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.composites SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.composites WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back({"ranges",
                 "built-in ranges (int4range, numrange, tstzrange, daterange) and a multirange",
                 std::string("CREATE TABLE zoo.ranges (id int PRIMARY KEY, ir int4range, nr numrange, tr tstzrange, "
                             "dr daterange, mr int8multirange, ") +
                     kStamp + "); CREATE INDEX ON zoo.ranges (updated_at);",
                 "INSERT INTO zoo.ranges (id, ir, nr, tr, dr, mr) SELECT g, int4range(g, g + 10), numrange(g / 3.0, "
                 "g, '[]'), tstzrange('2024-01-01 00:00:00+02'::timestamptz + g * interval '1 hour', NULL), "
                 "daterange('2024-01-01'::date + g, '2024-03-01'), int8multirange(int8range(1, g), int8range(g + 5, "
                 "g + 9)) FROM generate_series(1, 30) g;",
                 30,
                 {plain("ranges")},
                 {{'i', "INSERT INTO zoo.ranges (id, ir, nr, tr, dr, mr) VALUES ({n}, 'empty', NULL, "
                        "tstzrange(now(), now() + interval '{r} seconds'), '(,2025-01-01)', '{}')"},
                  {'u', "UPDATE zoo.ranges SET ir = int4range({r}, NULL), nr = numrange(0, {r} / 7.0), "
                        "updated_at = clock_timestamp() WHERE id = {k}"},
                  {'u', "UPDATE zoo.ranges SET mr = mr + int8multirange(int8range({r}, {r} + 3)), "
                        "updated_at = clock_timestamp() WHERE id = {k}"},
                  {'p', "UPDATE zoo.ranges SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
                  {'d', "DELETE FROM zoo.ranges WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    f.push_back(
        {"tsvector_trigger",
         "a tsvector kept by tsvector_update_trigger",
         std::string("CREATE TABLE zoo.tsv_docs (id int PRIMARY KEY, body text, tsv tsvector, ") + kStamp +
             "); CREATE INDEX ON zoo.tsv_docs (updated_at);"
             "CREATE TRIGGER tsv_docs_tsv BEFORE INSERT OR UPDATE ON zoo.tsv_docs FOR EACH ROW EXECUTE "
             "FUNCTION tsvector_update_trigger(tsv, 'pg_catalog.english', body);",
         "INSERT INTO zoo.tsv_docs (id, body) SELECT g, 'The quick brown fox ' || g || ' jumped over "
         "lazy dogs' FROM generate_series(1, 30) g;",
         30,
         {plain("tsv_docs")},
         {{'i', "INSERT INTO zoo.tsv_docs (id, body) VALUES ({n}, 'Running runners ran {r} times: {w}')"},
          {'u', "UPDATE zoo.tsv_docs SET body = body || ' and {w}', updated_at = clock_timestamp() WHERE id = {k}"},
          {'p', "UPDATE zoo.tsv_docs SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.tsv_docs WHERE id = {k}"}},
         30,
         {},
         {},
         ""});

    f.push_back({"before_update_trigger",
                 "a BEFORE UPDATE trigger that rewrites the row (lower-cases, counts revisions, stamps updated_at)",
                 std::string("CREATE TABLE zoo.trig_rewrite (id int PRIMARY KEY, name text, revision int NOT NULL "
                             "DEFAULT 0, ") +
                     kStamp +
                     "); CREATE INDEX ON zoo.trig_rewrite (updated_at);"
                     "CREATE FUNCTION zoo.rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "NEW.name := lower(NEW.name); NEW.revision := OLD.revision + 1; "
                     "NEW.updated_at := clock_timestamp(); RETURN NEW; END $$;"
                     "CREATE TRIGGER trig_rewrite_row BEFORE UPDATE ON zoo.trig_rewrite FOR EACH ROW EXECUTE "
                     "FUNCTION zoo.rewrite();",
                 "INSERT INTO zoo.trig_rewrite (id, name) SELECT g, 'Name ' || g FROM generate_series(1, 30) g;",
                 30,
                 {plain("trig_rewrite")},
                 {{'i', "INSERT INTO zoo.trig_rewrite (id, name) VALUES ({n}, 'Fresh {w}')"},
                  // No updated_at here: the trigger stamps it.
                  {'u', "UPDATE zoo.trig_rewrite SET name = 'UPPER {w}' WHERE id = {k}"},
                  {'p', "UPDATE zoo.trig_rewrite SET id = {n} WHERE id = {k}"},
                  {'d', "DELETE FROM zoo.trig_rewrite WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    // Rails, Django, Flyway and Liquibase run a migration's statements in one transaction: rows
    // are written and a column added together (docs/schema-changes.md).
    f.push_back({"migration_in_transaction",
                 "a migration in one transaction, as frameworks run it: a row updated, then a column added with a "
                 "default (NOT NULL), several times",
                 std::string("CREATE TABLE zoo.migrated (id int PRIMARY KEY, name text, ") + kStamp +
                     "); CREATE INDEX ON zoo.migrated (updated_at);",
                 "INSERT INTO zoo.migrated (id, name) SELECT g, 'row ' || g FROM generate_series(1, 30) g;",
                 30,
                 {plain("migrated")},
                 {{'i', "INSERT INTO zoo.migrated (id, name) VALUES ({n}, '{w}')"},
                  {'u', "UPDATE zoo.migrated SET name = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
                  {'u', "UPDATE zoo.migrated SET name = 'migrated {w}', updated_at = clock_timestamp() WHERE id = {k}; "
                        "ALTER TABLE zoo.migrated ADD COLUMN IF NOT EXISTS c{r} int NOT NULL DEFAULT 7"},
                  {'d', "DELETE FROM zoo.migrated WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    f.push_back({"fk_cascade",
                 "a foreign key ON DELETE CASCADE, parent and child both synced; deleting a parent deletes its "
                 "children",
                 std::string("CREATE TABLE zoo.authors (id int PRIMARY KEY, name text, ") + kStamp +
                     "); CREATE INDEX ON zoo.authors (updated_at);"
                     "CREATE TABLE zoo.books (id int PRIMARY KEY, author_id int NOT NULL REFERENCES zoo.authors "
                     "ON DELETE CASCADE, title text, " +
                     kStamp + "); CREATE INDEX ON zoo.books (updated_at); CREATE INDEX ON zoo.books (author_id);",
                 "INSERT INTO zoo.authors (id, name) SELECT g, 'author ' || g FROM generate_series(1, 30) g;"
                 "INSERT INTO zoo.books (id, author_id, title) SELECT g, 1 + g % 30, 'book ' || g FROM "
                 "generate_series(1, 90) g;",
                 90,
                 {plain("authors"), plain("books")},
                 {{'i', "INSERT INTO zoo.authors (id, name) VALUES ({n}, '{w}')"},
                  {'i', "INSERT INTO zoo.books (id, author_id, title) SELECT {n}, id, '{w}' FROM zoo.authors "
                        "WHERE id = {k} % 40"},
                  {'u', "UPDATE zoo.books SET title = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
                  {'u', "UPDATE zoo.authors SET name = '{w}', updated_at = clock_timestamp() WHERE id = {k} % 40"},
                  {'d', "DELETE FROM zoo.authors WHERE id = {k} % 40"},
                  {'d', "DELETE FROM zoo.books WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    f.push_back({"inheritance",
                 "an inheritance child and its parent, both synced: the parent's own rows only reach the "
                 "parent's target",
                 std::string("CREATE TABLE zoo.vehicles (id int PRIMARY KEY, kind text, wheels int, ") + kStamp +
                     "); CREATE INDEX ON zoo.vehicles (updated_at);"
                     "CREATE TABLE zoo.trucks (payload int) INHERITS (zoo.vehicles);"
                     "ALTER TABLE zoo.trucks ADD PRIMARY KEY (id); CREATE INDEX ON zoo.trucks (updated_at);",
                 "INSERT INTO zoo.vehicles (id, kind, wheels) SELECT g, 'car', 4 FROM generate_series(1, 20) g;"
                 "INSERT INTO zoo.trucks (id, kind, wheels, payload) SELECT g, 'truck', 6, g * 100 FROM "
                 "generate_series(21, 40) g;",
                 40,
                 {{"zoo.vehicles", "zoo.vehicles", "vehicles", std::nullopt, true, {}}, plain("trucks")},
                 {{'i', "INSERT INTO zoo.vehicles (id, kind, wheels) VALUES ({n}, 'bike', 2)"},
                  {'i', "INSERT INTO zoo.trucks (id, kind, wheels, payload) VALUES ({n}, 'lorry', 8, {r})"},
                  // Through the parent: reaches the child's rows too.
                  {'u', "UPDATE zoo.vehicles SET wheels = wheels + 1, updated_at = clock_timestamp() WHERE id = {k}"},
                  {'u', "UPDATE zoo.trucks SET payload = {r}, updated_at = clock_timestamp() WHERE id = {k}"},
                  {'d', "DELETE FROM zoo.vehicles WHERE id = {k}"}},
                 30,
                 {},
                 {},
                 ""});

    f.push_back(
        {"mixed_case_names",
         "mixed-case and keyword table and column names (\"Order\", \"select\", \"Mixed Case\")",
         std::string("CREATE TABLE zoo.\"Order\" (\"Id\" int PRIMARY KEY, \"select\" text, \"Mixed Case\" int, "
                     "\"group\" date, ") +
             kStamp +
             "); CREATE INDEX ON zoo.\"Order\" (updated_at);"
             "CREATE TABLE zoo.\"select\" (id int PRIMARY KEY, \"from\" text, \"Where\" numeric(12,4), " +
             kStamp +
             "); CREATE INDEX ON zoo.\"select\" (updated_at);"
             "CREATE TABLE zoo.\"Mixed Case\" (\"Key Col\" int PRIMARY KEY, \"Value\" text, " +
             kStamp + "); CREATE INDEX ON zoo.\"Mixed Case\" (updated_at);",
         "INSERT INTO zoo.\"Order\" SELECT g, 'sel ' || g, g, DATE '2024-01-01' + g FROM generate_series(1, 30) g;"
         "INSERT INTO zoo.\"select\" SELECT g, 'from ' || g, g / 8.0 FROM generate_series(1, 30) g;"
         "INSERT INTO zoo.\"Mixed Case\" SELECT g, 'V' || g FROM generate_series(1, 30) g;",
         30,
         {{"zoo.\"Order\"", "'zoo.\"Order\"'", "Order", std::nullopt, false, {}},
          {"zoo.\"select\"", "'zoo.\"select\"'", "select", std::nullopt, false, {}},
          {"zoo.\"Mixed Case\"", "'zoo.\"Mixed Case\"'", "Mixed Case", std::nullopt, false, {}}},
         {{'i', "INSERT INTO zoo.\"Order\" VALUES ({n}, '{w}', {r}, DATE '2025-01-01' - {r} % 1000)"},
          {'u', "UPDATE zoo.\"Order\" SET \"select\" = '{w}', \"Mixed Case\" = {r}, updated_at = "
                "clock_timestamp() WHERE \"Id\" = {k}"},
          {'p', "UPDATE zoo.\"Order\" SET \"Id\" = {n}, updated_at = clock_timestamp() WHERE \"Id\" = {k}"},
          {'i', "INSERT INTO zoo.\"select\" VALUES ({n}, '{w}', {r} / 9.0)"},
          {'u', "UPDATE zoo.\"select\" SET \"Where\" = {r} / 3.0, updated_at = clock_timestamp() WHERE id = {k}"},
          {'d', "DELETE FROM zoo.\"select\" WHERE id = {k}"},
          {'i', "INSERT INTO zoo.\"Mixed Case\" VALUES ({n}, '{w}')"},
          {'u', "UPDATE zoo.\"Mixed Case\" SET \"Value\" = '{w}', updated_at = clock_timestamp() WHERE "
                "\"Key Col\" = {k}"},
          {'d', "DELETE FROM zoo.\"Mixed Case\" WHERE \"Key Col\" = {k}"}},
         40,
         {},
         {},
         ""});

    {
        // id, c1..c997 (int and text alternating), note, updated_at: 1,000 columns.
        std::string cols, seedCols;
        for (int i = 1; i <= 997; ++i) {
            cols += ", c" + std::to_string(i) + (i % 2 ? " int" : " text");
            seedCols += i % 2 ? ", g + " + std::to_string(i) : ", 'v' || g || '_" + std::to_string(i) + "'";
        }
        f.push_back(
            {"wide_1000_columns",
             "a 1,000-column table; updates of random columns",
             "CREATE TABLE zoo.wide (id int PRIMARY KEY" + cols + ", note text, " + kStamp +
                 "); CREATE INDEX ON zoo.wide (updated_at);",
             "INSERT INTO zoo.wide SELECT g" + seedCols +
                 ", 'note', clock_timestamp() FROM "
                 "generate_series(1, 20) g;",
             20,
             {plain("wide")},
             {{'i', "INSERT INTO zoo.wide (id, c1, c500, c997, note) VALUES ({n}, {r}, '{w}', {r}, NULL)"},
              {'u', "UPDATE zoo.wide SET c{c} = NULL, note = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
              {'u', "UPDATE zoo.wide SET c1 = {r}, c996 = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
              {'p', "UPDATE zoo.wide SET id = {n}, updated_at = clock_timestamp() WHERE id = {k}"},
              {'d', "DELETE FROM zoo.wide WHERE id = {k}"}},
             20,
             {},
             {},
             ""});
    }

    {
        // 1.2 MB of md5 output: as bytes (bytea) and as hex text, stored out of line uncompressed.
        const std::string bigBytes = "(SELECT decode(string_agg(md5('{r}' || i), ''), 'hex') FROM generate_series(1, "
                                     "75000) i)";
        const std::string bigText = "(SELECT string_agg(md5('t{r}' || i), '') FROM generate_series(1, 40000) i)";
        f.push_back(
            {"toast_over_1mb",
             "TOASTed values over 1 MB, incompressible (bytea and text, STORAGE EXTERNAL); updates that "
             "leave them alone",
             std::string("CREATE TABLE zoo.blobs (id int PRIMARY KEY, note text, payload bytea, doc text, ") + kStamp +
                 "); ALTER TABLE zoo.blobs ALTER COLUMN payload SET STORAGE EXTERNAL;"
                 "ALTER TABLE zoo.blobs ALTER COLUMN doc SET STORAGE EXTERNAL;"
                 "CREATE INDEX ON zoo.blobs (updated_at);",
             "INSERT INTO zoo.blobs (id, note, payload, doc) SELECT g, 'seed', (SELECT decode(string_agg(md5(g "
             "|| 's' || i), ''), 'hex') FROM generate_series(1, 75000) i), (SELECT string_agg(md5(g || 'd' || "
             "i), '') FROM generate_series(1, 40000) i) FROM generate_series(1, 3) g;",
             3,
             {plain("blobs")},
             {{'i',
               "INSERT INTO zoo.blobs (id, note, payload, doc) VALUES ({n}, 'new', " + bigBytes + ", " + bigText + ")"},
              {'u', "UPDATE zoo.blobs SET note = '{w}', updated_at = clock_timestamp() WHERE id = {k}"},
              {'u', "UPDATE zoo.blobs SET payload = " + bigBytes + ", updated_at = clock_timestamp() WHERE id = {k}"},
              {'d', "DELETE FROM zoo.blobs WHERE id = {k}"}},
             8,
             {},
             {},
             ""});
    }
    return f;
}

} // namespace

const std::vector<Feature> &features()
{
    static const std::vector<Feature> f = build();
    return f;
}

} // namespace driftless::zoo
