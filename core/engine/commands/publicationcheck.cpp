#include "core/engine/commands/publicationcheck.h"

#include "core/db/pgconnection.h"

namespace driftless::core {

namespace {

// Per publication that publishes UPDATE or DELETE of the table: the replica-identity columns its
// column list lacks, and the columns its row filter reads outside the replica identity (from the
// dependencies Postgres records for the filter and the list; a listed column counts for the
// filter only when the filter's text names it).
constexpr const char *kCoverage = R"sql(
WITH rel AS (
    SELECT c.oid, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relname = $2
), ri AS (
    SELECT a.attname FROM rel JOIN pg_index i ON i.indrelid = rel.oid
        AND ((rel.relreplident = 'd' AND i.indisprimary) OR (rel.relreplident = 'i' AND i.indisreplident))
    JOIN pg_attribute a ON a.attrelid = rel.oid AND a.attnum = ANY (i.indkey)
    UNION
    SELECT a.attname FROM rel JOIN pg_attribute a ON a.attrelid = rel.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE rel.relreplident = 'f'
)
SELECT p.pubname,
       (SELECT string_agg(r.attname, ', ' ORDER BY r.attname) FROM ri r
         WHERE pt.attnames IS NOT NULL AND NOT r.attname = ANY (pt.attnames)),
       (SELECT string_agg(DISTINCT a.attname, ', ') FROM pg_publication_rel pr
          JOIN pg_depend d ON d.classid = 'pg_publication_rel'::regclass AND d.objid = pr.oid
               AND d.refclassid = 'pg_class'::regclass AND d.refobjsubid > 0
          JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
         WHERE pr.prpubid = p.oid AND pr.prrelid = (SELECT oid FROM rel) AND pt.rowfilter IS NOT NULL
           AND a.attname NOT IN (SELECT attname FROM ri)
           AND (pr.prattrs IS NULL OR NOT a.attnum = ANY (pr.prattrs::int2[])
                OR pt.rowfilter ~ ('(^|[^a-zA-Z0-9_$])"?' || a.attname || '"?([^a-zA-Z0-9_$]|$)'))),
       pt.rowfilter
FROM pg_publication p
JOIN pg_publication_tables pt ON pt.pubname = p.pubname AND pt.schemaname = $1 AND pt.tablename = $2
WHERE (p.pubupdate OR p.pubdelete)
ORDER BY p.pubname
)sql";

} // namespace

void checkPublicationCoverage(PgConnection &src, const std::string &pipeline, const TableRef &table,
                              std::vector<Finding> &out)
{
    if (src.serverVersion() < 150000)
        return; // no column lists or row filters before 15
    auto r = src.execParams(kCoverage, {table.schema, table.name});
    const std::string subject = "table " + table.display();
    for (int i = 0; i < r.rows(); ++i) {
        const std::string pub = r.text(i, 0);
        std::string why;
        if (!r.isNull(i, 1))
            why = "its column list lacks the replica identity column(s) " + r.text(i, 1);
        if (!r.isNull(i, 2))
            why += (why.empty() ? "its row filter (" : "; its row filter (") + r.text(i, 3) +
                   ") reads column(s) outside the replica identity: " + r.text(i, 2);
        if (why.empty())
            continue;
        out.push_back({FindingLevel::Warn, "config", pipeline, subject,
                       "publication " + pub + " publishes UPDATE/DELETE of this table but " + why +
                           ": every UPDATE and DELETE on the source table fails while it does",
                       "publish the table whole (drop the column list and row filter; Driftless filters rows "
                       "itself with 'where:'), or add the replica identity columns to the list and filter only on "
                       "them",
                       "ALTER PUBLICATION " + quoteIdent(pub) + " DROP TABLE " + table.quoted() +
                           "; ALTER PUBLICATION " + quoteIdent(pub) + " ADD TABLE " + table.quoted() + ";"});
    }
}

} // namespace driftless::core
