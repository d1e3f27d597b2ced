// driftless-bench: the benchmark figures that need the engine as a library rather than the CLI.
//
//   driftless-bench b6 --source DSN --target DSN --baseline DSN [--where SQL] [--runs K]
//                      [--strategies cursor,cdc] [--only engine|baseline]
//
// B6 (merge of a delta): reads the changed rows of bench.t from the source once (COPY text, as a
// reader would hand them over) and builds one Batch of them. Then, K times, alternating which
// side goes first:
//   engine    for each strategy (the merge SQL differs by strategy: cursor tables skip rows that
//             come back unchanged): reset the target's bench.t from tpl.t (the rows before the change), then time
//             PgMerger::apply(batch) (staging COPY + guarded MERGE + checkpoint, one transaction),
//             then time applying the very same batch again (a replay: must write nothing).
//   baseline  reset the baseline database's bench.t from its tpl.t, then time what a DBA would
//             write by hand from the same COPY text: BEGIN; TRUNCATE an UNLOGGED staging table;
//             COPY staging FROM STDIN; INSERT ... SELECT FROM staging ON CONFLICT (pk) DO UPDATE;
//             COMMIT.
// Prints the medians in the line format of reference/benchmarks.md on stdout; per-run details go
// to stderr.
//
// The databases are prepared by tests/bench/b6_merge.sh: the source holds the changed rows in
// bench.t; the target and the baseline each hold the unchanged rows in tpl.t.

#include "core/db/pgcatalog.h"
#include "core/db/pgconnection.h"
#include "core/mergers/pgmerger.h"
#include "core/model/batch.h"
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <variant>
#include <vector>

using namespace driftless::core;

namespace {

[[noreturn]] void usage(const std::string &why)
{
    std::fprintf(stderr,
                 "driftless-bench: %s\n"
                 "usage: driftless-bench b6 --source DSN --target DSN --baseline DSN [--where SQL] [--runs K]\n"
                 "       driftless-bench binlog-parse BINLOG_FILE...\n"
                 "                          [--strategies cursor,cdc] [--only engine|baseline]\n",
                 why.c_str());
    std::exit(2);
}

double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double peakRssMb()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
}

void execAll(PgConnection &c, const std::vector<std::string> &statements)
{
    for (const auto &s : statements)
        c.exec(s);
}

struct B6Options {
    std::string source, target, baseline;
    std::string where = "true";
    int runs = 5;
    std::vector<Strategy> strategies{Strategy::Cursor};
    std::string only;
};

int runB6(const B6Options &o)
{
    const TableRef table{"bench", "t"};
    PgConnection src(o.source);
    const TableSchema schema = pgcatalog::describeTable(src, table);
    if (!schema.hasPrimaryKey())
        throw std::runtime_error("bench.t on the source has no primary key");

    std::string cols, keys, set;
    for (const auto &c : schema.columns) {
        cols += (cols.empty() ? "" : ", ") + quoteIdent(c.name);
        bool isKey = false;
        for (int k : schema.primaryKey)
            isKey = isKey || schema.columns[static_cast<size_t>(k)].name == c.name;
        if (!isKey)
            set += (set.empty() ? "" : ", ") + quoteIdent(c.name) + " = EXCLUDED." + quoteIdent(c.name);
    }
    for (int k : schema.primaryKey)
        keys += (keys.empty() ? "" : ", ") + quoteIdent(schema.columns[static_cast<size_t>(k)].name);

    // The delta, read once, exactly as a reader would: COPY text rows, one version for the batch.
    Batch batch;
    std::string copyText; // the same rows for the baseline's COPY
    const std::int64_t version = pgcatalog::currentLsn(src);
    src.copyOut("COPY (SELECT " + cols + " FROM bench.t WHERE " + o.where + " ORDER BY " + keys + ") TO STDOUT",
                [&](std::string_view row) {
                    batch.rows.append(row, ChangeOp::Update, version);
                    copyText.append(row);
                });
    batch.checkpoint = {R"({"bench":"b6"})", version};
    const auto n = static_cast<long long>(batch.rows.size());
    if (n == 0)
        throw std::runtime_error("the source returned no changed rows (WHERE " + o.where + ")");
    std::fprintf(stderr, "b6: delta of %lld rows (%zu bytes of COPY text), version %lld\n", n, copyText.size(),
                 static_cast<long long>(version));

    auto resetSql = [&](bool engine) {
        std::vector<std::string> s = {"DROP TABLE IF EXISTS bench.t", "CREATE SCHEMA IF NOT EXISTS bench",
                                      "CREATE TABLE bench.t (LIKE tpl.t)"};
        if (engine) {
            s.push_back("ALTER TABLE bench.t ADD COLUMN _driftless_version bigint NOT NULL DEFAULT 0");
            s.push_back("INSERT INTO bench.t SELECT *, 1 FROM tpl.t");
        } else {
            s.push_back("INSERT INTO bench.t SELECT * FROM tpl.t");
        }
        s.push_back("ALTER TABLE bench.t ADD PRIMARY KEY (" + keys + ")");
        // Outside a transaction: settle hint bits and statistics, and flush dirty buffers, so
        // the timed part starts from the same quiet state on both sides.
        s.push_back("VACUUM (ANALYZE) bench.t");
        s.push_back("CHECKPOINT");
        return s;
    };

    std::map<Strategy, std::vector<double>> applyS, replayS, mergeReplayS;
    std::vector<double> baseS, baseReplayS;

    auto engineRun = [&](Strategy strategy) {
        const std::string name(toString(strategy));
        PgConnection tc(o.target);
        execAll(tc, resetSql(true));
        PgMerger merger(std::move(tc), MergeTarget{"bench", table, {"bench", "t"}, strategy});
        merger.prepare(schema); // one-time setup per table and process: not timed
        // Both strategies share the checkpoint row of (pipeline, table) in this target: without
        // this the second one takes the batch for a replay of the first one's and skips it.
        merger.clearCheckpoint();
        auto t0 = std::chrono::steady_clock::now();
        ApplyResult first = merger.apply(batch);
        auto t1 = std::chrono::steady_clock::now();
        ApplyResult again = merger.apply(batch);
        auto t2 = std::chrono::steady_clock::now();
        // The same batch once more, its checkpoint forgotten: no skip, so the merge itself runs
        // and the version guard must leave every row as it is.
        merger.clearCheckpoint();
        auto t3 = std::chrono::steady_clock::now();
        ApplyResult third = merger.apply(batch);
        auto t4 = std::chrono::steady_clock::now();
        if (third.rowsWritten != 0)
            throw std::runtime_error("engine (" + name + ") replay through the merge wrote " +
                                     std::to_string(third.rowsWritten) + " rows, expected none");
        mergeReplayS[strategy].push_back(seconds(t3, t4));
        if (first.rowsWritten != n)
            throw std::runtime_error("engine (" + name + ") apply wrote " + std::to_string(first.rowsWritten) +
                                     " rows, expected " + std::to_string(n));
        // A replay must leave the target the same (P2); the merger may or may not rewrite
        // equal rows to get there, so report what it wrote rather than fail.
        applyS[strategy].push_back(seconds(t0, t1));
        replayS[strategy].push_back(seconds(t1, t2));
        std::fprintf(stderr,
                     "b6: engine %-6s apply %.3f s, replay %.3f s (replay wrote %lld rows), replay through "
                     "the merge %.3f s\n",
                     name.c_str(), applyS[strategy].back(), replayS[strategy].back(), again.rowsWritten,
                     mergeReplayS[strategy].back());
    };
    auto engineRuns = [&] {
        for (Strategy s : o.strategies)
            engineRun(s);
    };

    const std::string upsert =
        "INSERT INTO bench.t SELECT * FROM bench.stg ON CONFLICT (" + keys + ") DO UPDATE SET " + set;
    auto baselineOnce = [&](PgConnection &bc) {
        auto t0 = std::chrono::steady_clock::now();
        bc.begin();
        bc.exec("TRUNCATE bench.stg");
        bc.beginCopyIn("COPY bench.stg FROM STDIN");
        constexpr size_t kChunk = 1 << 20;
        for (size_t off = 0; off < copyText.size(); off += kChunk)
            bc.putCopyData(std::string_view(copyText).substr(off, kChunk));
        bc.endCopy();
        long long written = bc.exec(upsert).affected();
        bc.commit();
        auto t1 = std::chrono::steady_clock::now();
        if (written != n)
            throw std::runtime_error("baseline upsert wrote " + std::to_string(written) + " rows, expected " +
                                     std::to_string(n));
        return seconds(t0, t1);
    };
    auto baselineRun = [&] {
        PgConnection bc(o.baseline);
        execAll(bc, resetSql(false));
        bc.exec("CREATE UNLOGGED TABLE IF NOT EXISTS bench.stg (LIKE tpl.t)");
        baseS.push_back(baselineOnce(bc));
        baseReplayS.push_back(baselineOnce(bc)); // for context: the plain upsert rewrites every row
        std::fprintf(stderr, "b6: baseline        apply %.3f s, replay %.3f s\n", baseS.back(), baseReplayS.back());
    };

    for (int r = 0; r < o.runs; ++r) {
        bool engineFirst = r % 2 == 0;
        if (o.only != "baseline" && engineFirst)
            engineRuns();
        if (o.only != "engine")
            baselineRun();
        if (o.only != "baseline" && !engineFirst)
            engineRuns();
    }

    const double rss = peakRssMb();
    auto rate = [&](double s) { return s > 0 ? static_cast<double>(n) / s : 0.0; };
    for (Strategy s : o.strategies) {
        if (applyS[s].empty())
            break;
        const std::string name(toString(s));
        const double apply = median(applyS[s]), replay = median(replayS[s]);
        if (!baseS.empty()) {
            double ratio = median(baseS) / apply;
            std::printf("B6 rows_per_s=%.0f baseline_rows_per_s=%.0f ratio=%.2f peak_rss_mb=%.1f case=%s rows=%lld "
                        "runs=%d goal=0.9 goal_met=%s\n",
                        rate(apply), rate(median(baseS)), ratio, rss, name.c_str(), n, o.runs,
                        ratio >= 0.9 ? "yes" : "no");
        }
        double speedup = apply / replay;
        std::printf("B6 replay_rows_per_s=%.0f apply_rows_per_s=%.0f replay_speedup=%.2f peak_rss_mb=%.1f "
                    "case=%s rows=%lld runs=%d goal=2.0 goal_met=%s\n",
                    rate(replay), rate(apply), speedup, rss, name.c_str(), n, o.runs, speedup >= 2.0 ? "yes" : "no");
        const double mergeReplay = median(mergeReplayS[s]);
        const double mergeSpeedup = apply / mergeReplay;
        std::printf("B6 merge_replay_rows_per_s=%.0f apply_rows_per_s=%.0f replay_speedup=%.2f peak_rss_mb=%.1f "
                    "case=%s_replay_through_merge rows=%lld runs=%d goal=2.0 goal_met=%s\n",
                    rate(mergeReplay), rate(apply), mergeSpeedup, rss, name.c_str(), n, o.runs,
                    mergeSpeedup >= 2.0 ? "yes" : "no");
    }
    if (!baseS.empty())
        std::fprintf(stderr, "b6: baseline medians: apply %.0f rows/s, replay %.0f rows/s\n", rate(median(baseS)),
                     rate(median(baseReplayS)));
    return 0;
}

/// B9: decodes binlog files the way the CDC stream does (every event through binlog::Decoder,
/// every row of every table turned into the contract's text) and prints what it read.
int runBinlogParse(const std::vector<std::string> &files)
{
    binlog::Decoder decoder;
    long long events = 0, rows = 0, bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    // Read in 1 MiB pieces into one reused buffer, as mariadb-binlog reads its files and as the
    // engine receives events: the first version read each file byte by byte into a string
    // (istreambuf_iterator), which cost as much as the decoding it was timed with.
    constexpr size_t kPiece = 1 << 20;
    std::string buf;
    for (const auto &path : files) {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw std::runtime_error("cannot read " + path);
        buf.clear();
        size_t at = 0;
        bool header = true;
        for (;;) {
            // Keep the unread tail (an event cut by the piece's end), then append the next piece.
            buf.erase(0, at);
            at = 0;
            const size_t had = buf.size();
            buf.resize(had + kPiece);
            in.read(buf.data() + had, static_cast<std::streamsize>(kPiece));
            const auto got = static_cast<size_t>(in.gcount());
            buf.resize(had + got);
            bytes += static_cast<long long>(got);
            if (header) {
                if (buf.size() < 4 || buf.compare(0, 4,
                                                  "\xfe"
                                                  "bin") != 0)
                    throw std::runtime_error(path + " is not a binlog file");
                at = 4;
                header = false;
            }
            while (at + 19 <= buf.size()) {
                const auto *h = reinterpret_cast<const unsigned char *>(buf.data() + at);
                const std::uint32_t len = h[9] | (h[10] << 8) | (h[11] << 16) | (std::uint32_t(h[12]) << 24);
                if (len < 19)
                    throw std::runtime_error(path + ": an event shorter than its header");
                if (at + len > buf.size())
                    break; // the rest of it comes with the next piece
                binlog::Event ev = decoder.decode(std::string_view(buf.data() + at, len));
                if (auto *r = std::get_if<binlog::Rows>(&ev.body))
                    rows += static_cast<long long>(r->rows.size());
                ++events;
                at += len;
            }
            if (got == 0)
                break; // the end; a cut event there is the file's torn tail
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("events=%lld rows=%lld bytes=%lld secs=%.3f peak_rss_mb=%.1f\n", events, rows, bytes, secs,
                peakRssMb());
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2)
        usage("no command");
    std::string cmd = argv[1];
    if (cmd == "binlog-parse") {
        try {
            return runBinlogParse(std::vector<std::string>(argv + 2, argv + argc));
        } catch (const std::exception &e) {
            std::fprintf(stderr, "driftless-bench: %s\n", e.what());
            return 1;
        }
    }
    std::map<std::string, std::string> opt;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0 || i + 1 >= argc)
            usage("bad argument '" + a + "'");
        opt[a] = argv[++i];
    }
    auto take = [&](const std::string &k, bool required) {
        auto it = opt.find(k);
        if (it == opt.end()) {
            if (required)
                usage("missing " + k);
            return std::string();
        }
        std::string v = it->second;
        opt.erase(it);
        return v;
    };
    try {
        if (cmd == "b6") {
            B6Options o;
            o.source = take("--source", true);
            o.target = take("--target", true);
            o.baseline = take("--baseline", true);
            if (auto w = take("--where", false); !w.empty())
                o.where = w;
            if (auto r = take("--runs", false); !r.empty())
                o.runs = std::max(1, std::atoi(r.c_str()));
            if (auto list = take("--strategies", false); !list.empty()) {
                o.strategies.clear();
                size_t start = 0;
                while (start <= list.size()) {
                    size_t comma = std::min(list.find(',', start), list.size());
                    auto st = strategyFromString(list.substr(start, comma - start));
                    if (!st || *st == Strategy::FullRefresh)
                        usage("--strategies takes cursor and/or cdc");
                    o.strategies.push_back(*st);
                    start = comma + 1;
                }
            }
            o.only = take("--only", false);
            if (!o.only.empty() && o.only != "engine" && o.only != "baseline")
                usage("--only takes engine or baseline");
            if (!opt.empty())
                usage("unknown option " + opt.begin()->first);
            return runB6(o);
        }
        usage("unknown command '" + cmd + "'");
    } catch (const Error &e) {
        std::fprintf(stderr, "driftless-bench: %s%s%s\n", e.what(), e.code().empty() ? "" : " [",
                     e.code().empty() ? "" : (e.code() + "]").c_str());
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "driftless-bench: %s\n", e.what());
        return 1;
    }
}
