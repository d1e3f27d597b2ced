#include "app/cli/help.h"

#include <algorithm>
#include <sstream>

namespace driftless::cli {

namespace {

constexpr std::size_t kWidth = 100;

constexpr std::string_view kExitCodes =
    "0 success, 1 a sync (or a server check) failed, 2 usage or configuration error, 3 reconcile found drift";

constexpr std::string_view kWorkspace =
    "The workspace (endpoints, pipelines, tables and their state) lives in FILE: --state FILE, else "
    "$DRIFTLESS_STATE, else $XDG_DATA_HOME/driftless/workspace.db (~/.local/share/driftless/workspace.db).";

const std::vector<CommandHelp> kCommands = {
    {"apply",
     "FILE [--no-check]",
     "validate a workspace YAML file and store it",
     "Reads FILE (endpoints, pipelines, tables; see the README), checks it, and stores it in the workspace. "
     "A mistake is refused with the file, line and field, and nothing is stored. Unless --no-check, the live "
     "servers are checked too (the doctor's checks): a table that cannot be synced correctly is refused here, "
     "with the statement that fixes it.\n\n"
     "Applying the same file twice changes nothing the second time. A running sync (run, serve, the app) "
     "starts again in place with what was stored.",
     {{"--no-check", "store without connecting to the servers"}},
     {},
     "file"},
    {"run",
     "[--pipeline NAME] [--once] [--guard-every DURATION]",
     "run the pipelines until stopped",
     "Syncs every table of the workspace (or of one pipeline) by its strategy until SIGINT or SIGTERM, "
     "stopping between batches; a second signal stops at once. A changed workspace (apply, a slot guard "
     "fallback, promote) is followed in place.",
     {{"--pipeline NAME", "only this pipeline"},
      {"--once", "one pass of every table (CDC: up to the source's current position), then exit"},
      {"--guard-every DURATION", "how often slot guards with action: fallback are checked (default 5s)"}},
     {},
     ""},
    {"status",
     "[--json]",
     "one row per table: state, freshness, lag, rows, checkpoint",
     "Shows each table's strategy, state, freshness badge (ok within half the SLA, warn, breach, unknown "
     "before the first sync), lag, rows applied and position, and a backfill's progress. Reads the "
     "workspace only: it works while a sync runs elsewhere.",
     {{"--json", "the same as JSON: pipeline, table, strategy, state, rows_applied, last_sync_at, checkpoint, "
                 "last_synced_lsn, last_synced_binlog or cursor, lag_seconds, freshness, backfill, paused, "
                 "reconcile"}},
     {},
     ""},
    {"doctor",
     "[--pipeline NAME] [--endpoint NAME] [--json]",
     "preflight checks against the servers",
     "Connects to every endpoint and checks what the pipelines need: wal_level, replication privileges, "
     "keys, publications, binlog settings, target tables. Each finding says what is wrong and the exact "
     "statement that fixes it. Exits 2 when the workspace or a server's settings must change, 1 when a "
     "server could not be reached. The app's Doctor runs the same checks.",
     {{"--pipeline NAME", "only this pipeline's endpoints and tables"},
      {"--endpoint NAME", "only this endpoint: its connection and settings, and the tables and slots read from it"},
      {"--json", "the findings as JSON: level, category, pipeline, subject, message, fix, sql (the exact "
                 "statements, names filled in) and setting (table, key and value of the workspace setting "
                 "that fixes it, or null)"}},
     {},
     ""},
    {"trust-host",
     "ENDPOINT [--jump] [--yes] [--replace] [--file FILE]",
     "trust the host key of an endpoint's SSH server",
     "Shows the host keys the SSH server of the endpoint's ssh: tunnel offers (ssh-keyscan; through the jump "
     "host, the key ssh is offered there), each with its "
     "SHA256 fingerprint, and asks whether to trust them: compare the fingerprint with the server's "
     "administrator first. Trusted keys go to Driftless's own known_hosts, beside the workspace "
     "file (workspace.db.known_hosts for workspace.db); tunnels read it and ~/.ssh/known_hosts. Until then a tunnel to "
     "an unknown host is "
     "refused. A key that differs from the trusted one is printed beside it and refused unless --replace. "
     "Off a terminal without --yes, it prints the keys, changes nothing and exits 2. Through a jump host "
     "(ssh.jump), the jump host's key is checked as strictly, against the same files: trust it first with --jump.",
     {{"--jump", "the key of the endpoint's jump host (ssh.jump), not of the SSH server behind it"},
      {"--yes", "trust without asking"},
      {"--replace", "the server's key was changed on purpose: drop the old one"},
      {"--file FILE", "read the endpoint from a workspace YAML file not applied yet"}},
     {},
     ""},
    {"resnapshot",
     "PIPELINE [TABLE...]",
     "load CDC tables again from a new snapshot",
     "For a lost slot or a schema change: removes the tables' checkpoints (and, for the whole pipeline, "
     "its replication slot) so the next run loads them again from a new snapshot, merging into the rows "
     "already there. Run it with the sync stopped.",
     {},
     {},
     "pipeline tables"},
    {"recover",
     "PIPELINE",
     "bring a CDC pipeline back to a source that changed (failover, restore) by diff",
     "After the source changed under the pipeline in a way it cannot read on from (a promoted standby without "
     "its replication slot, a timeline that left the target's history, another server at the address), the "
     "next run brings every table back: on Postgres a new slot, then each table compared page by page with the "
     "new server and only what differs copied, while the stream goes on; on MariaDB each table loaded again, "
     "merging. The pipeline's recover: auto does this without asking. Run it with the sync stopped or running.",
     {},
     {},
     "pipeline"},
    {"backfill",
     "[--cancel] PIPELINE TABLE",
     "copy a CDC table again while its pipeline keeps streaming",
     "A running sync picks the request up within a second; with none running, this runs the pipeline's CDC "
     "tables until the table is backfilled, then exits. Rows are merged through the version guard, so a "
     "change the stream applied meanwhile is never overwritten.",
     {{"--cancel", "stop a backfill under way, keeping what it merged"}},
     {"rebackfill"},
     "pipeline tables"},
    {"decommission",
     "[--yes] [--keep-slot] PIPELINE",
     "remove a pipeline and what it holds on its source",
     "Removes the pipeline from the workspace and drops what keeps WAL for it on a Postgres source: its "
     "replication slot and the publication Driftless made (a publication named in the workspace is yours and "
     "stays). Its checkpoints are forgotten, so a pipeline of the same name added later starts with a fresh "
     "load; the target tables and their rows stay. Prints the exact statements first and asks (or needs "
     "--yes when not at a terminal). A sync running on the workspace lets go of the slot once the pipeline "
     "is removed; a slot still read after 30 s stays, and the command says what to run later.",
     {{"--yes", "do it without asking"},
      {"--keep-slot", "leave the slot and publication on the source (a source that is gone for good)"}},
     {},
     "pipelines"},
    {"pause",
     "PIPELINE [TABLE...]",
     "stop syncing tables, kept across restarts",
     "Pauses the named tables (every table of the pipeline when none is named). Cursor and full refresh "
     "tables are skipped; a paused CDC table's changes are not applied while the rest of its pipeline "
     "streams. State and checkpoints stay. A running sync takes it within a second.",
     {},
     {},
     "pipeline tables"},
    {"resume",
     "PIPELINE [TABLE...]",
     "sync paused tables again",
     "Cursor and full refresh tables run a pass at once; a CDC table is copied again through the guarded "
     "merge while the stream goes on (only rows that differ are written), so every change made during the "
     "pause arrives.",
     {},
     {},
     "pipeline tables"},
    {"slots",
     "[--json]",
     "every replication slot on the Postgres sources, and each binlog pipeline's retention",
     "Lists each slot with its owner pipeline (or orphaned, or not Driftless's), whether it is active, "
     "wal_status, the WAL it retains, safe_wal_size and confirmed_flush_lsn; and, from the samples a "
     "running serve stored, the time until the slot guard's limit at the recent growth rate (\"at this "
     "rate: limit in 3 h 10 min\"). For each MariaDB/MySQL CDC pipeline, the binlog file its checkpoint "
     "needs, the server's oldest, the bytes behind and the time until the server may purge the needed file "
     "(\"binlog: needs mysql-bin.000012, oldest mysql-bin.000010, 3.2 MB behind, expires in 2 h 10 min\"); "
     "then the alerts this reading raises, with what to do.",
     {{"--json", "the same as JSON (the slots and binlogs of /sync/status, with seconds_to_limit and "
                 "seconds_to_expiry, plus the alerts)"}},
     {},
     ""},
    {"serve",
     "[--listen HOST:PORT] [--pipeline NAME] [--allow-remote] [--monitor-every DURATION] [--sample-every "
     "DURATION] [--tls | --cert FILE --key FILE]",
     "run like 'run', and serve /sync/status, /metrics and the agent API",
     "Runs the pipelines like run and answers GET /sync/status (JSON) and GET /metrics (Prometheus) on "
     "127.0.0.1:8765. Slots are read and alerts raised every 5s. The agent API under /api/v1/ (the app's "
     "File > Connect to Agent) needs the token of agent-token; over plain HTTP it answers this machine only.",
     {{"--listen HOST:PORT", "the address to listen on (default 127.0.0.1:8765)"},
      {"--allow-remote", "needed for any address other than the loopback"},
      {"--pipeline NAME", "only this pipeline"},
      {"--monitor-every DURATION", "how often slots are read and alerts raised (default 5s)"},
      {"--sample-every DURATION",
       "how often each slot is stored as a sample, the history behind seconds_to_limit (default 15s)"},
      {"--tls", "serve HTTPS with a self-signed certificate made beside the workspace file"},
      {"--cert FILE --key FILE", "serve HTTPS with this certificate and key"}},
     {},
     ""},
    {"agent-token",
     "[--rotate] [--fingerprint]",
     "print the agent API's bearer token",
     "Prints the token (made, mode 0600, beside the workspace file when there is none) that the agent API "
     "of serve asks for.",
     {{"--rotate", "make a new token; the old one stops working at once"},
      {"--fingerprint", "print the SHA-256 fingerprint of serve --tls's certificate instead"}},
     {},
     ""},
    {"reconcile",
     "PIPELINE [TABLE...] [--json] [--max-keys N] [--settle DURATION]",
     "compare source and target, and store the report",
     "Compares row counts and checksums over key ranges computed inside each database, then fetches only "
     "the differing rows: missing, extra or different (with the columns). Rows the sync has not applied yet "
     "count as in flight, not drift. The report is stored and its id printed; exit code 3 when drift was "
     "found.",
     {{"--json", "the report as JSON (report_id, and per table the counts, drift_ratio and keys)"},
      {"--max-keys N", "keys listed per kind (default 100)"},
      {"--settle DURATION", "how long CDC tables may take to apply what the source had (default 30s)"}},
     {},
     "pipeline tables"},
    {"compare",
     "ENDPOINT:TABLE ENDPOINT:TABLE [--key COLS] [--columns COLS] [--where SQL] [--json] [--max-keys N]",
     "compare two tables of any two endpoints, no pipeline needed",
     "Compares two tables as reconcile does (counts, checksums over key ranges computed inside each "
     "database, then only the differing rows): the first is read as the source (Postgres or MySQL/MariaDB), "
     "the second as the target (any endpoint, SQLite too). Missing rows are those only the first has, extra "
     "rows those only the second has. Rows match by the first table's primary key; a table without one is "
     "compared as a multiset of whole rows. TABLE is schema.table or table (Postgres: public; MySQL: the "
     "DSN's database). The report is stored (driftless-cli reports lists it under (compare)); exit code 3 "
     "when the tables differ.",
     {{"--key COLS", "match rows by these columns (a,b), unique and never NULL on both sides, instead of the "
                     "first table's primary key"},
      {"--columns COLS", "compare only these columns (a,b), besides the key"},
      {"--where SQL", "compare only the rows this condition holds for, on both sides (SQL both engines take)"},
      {"--json", "the report as JSON, as reconcile --json gives it"},
      {"--max-keys N", "keys listed per kind (default 100)"}},
     {},
     ""},
    {"reports",
     "[--pipeline P] [--json]",
     "list the stored reconciliation reports",
     "One row per stored report, newest first: its id, when it finished, its pipeline, how many tables it "
     "compared, the missing, extra and different rows it found in all, and whether a repair was run from it.",
     {{"--pipeline P", "only the reports of pipeline P"},
      {"--json", "as JSON (report_id, pipeline, finished_at, tables, missing, extra, different, repaired)"}},
     {},
     ""},
    {"conflicts",
     "[--pipeline P] [--json]",
     "list the open conflicts of two-way pipelines",
     "One line per open conflict: a row both sides of a two-way pipeline changed that the table's conflicts: "
     "policy leaves to a person (manual, or merge_columns whose edits overlap). Both rows stay as they are "
     "until driftless-cli resolve decides. Reads the workspace only: it works while a sync runs elsewhere.",
     {{"--pipeline P", "only the conflicts of pipeline P"},
      {"--json", "as JSON: an object with an array conflicts of id, pipeline, table, key, columns, source, target, "
                 "base, detected_at and status"}},
     {},
     ""},
    {"resolve",
     "ID --take source|target|merged [--column COL=source|target]...",
     "resolve a queued conflict of a two-way pipeline",
     "Writes the chosen version of conflict ID's row (driftless-cli conflicts lists them) over each side that "
     "does not hold it, in one transaction per side under a replication origin both directions drop, so it is "
     "not read back; then marks the conflict resolved and records how. Taking a side that has no row deletes "
     "the row on the other side.\n\n"
     "--take merged is the three-way merge from the base: a column only one side changed takes that side's "
     "value, a column both changed to the same value takes it. A column both sides changed to different values "
     "cannot be merged: resolve refuses, names those columns, and changes nothing; choose a side for each with "
     "--column. --column COL=SIDE takes that side's value of COL; the other columns follow --take (merged "
     "when --take is not given).",
     {{"--take source|target|merged", "the pipeline endpoint whose version both sides keep, or the merged row"},
      {"--column COL=source|target", "the side whose value of column COL both sides keep (repeat for more columns)"}},
     {},
     ""},
    {"report",
     "ID [--json|--csv|--html]",
     "show one stored reconciliation report",
     "Prints report ID (driftless-cli reports lists them): per table the counts and the differing rows. "
     "--csv writes one row per differing row (pipeline, table, key, kind, columns, source, target; RFC 4180), "
     "--html a standalone page to share; both are what the app's Export buttons write.",
     {{"--json", "the report as JSON, as reconcile --json prints it"},
      {"--csv", "the differing rows as CSV"},
      {"--html", "the report as a standalone HTML page"}},
     {},
     ""},
    {"repair",
     "REPORT_ID [--table TABLE] [--json] [--dry-run] [--sql FILE]",
     "apply a report's differing rows from the source",
     "Plans the repair first: missing rows are inserted and different rows updated from the source, extra "
     "rows deleted, through the guarded merge, never over a newer row. Then runs exactly that plan, table by "
     "table in one transaction each, and checks the rows again. A row the source no longer agrees with is "
     "left alone and counted as skipped. --dry-run prints the plan (the statements and their row counts) and "
     "changes nothing.",
     {{"--table TABLE", "only this table of the report"},
      {"--json", "the outcome (with --dry-run: the plan) as JSON"},
      {"--dry-run", "print the statements the repair would run, with their row counts, and change nothing"},
      {"--sql FILE", "write the repair (of a reconcile or a compare report) as plain INSERT, UPDATE and DELETE "
                     "statements in one transaction to FILE, to review and run with psql, sqlite3 or mariadb; "
                     "change nothing"}},
     {},
     ""},
    {"promote",
     "PIPELINE [TABLE...] [--no-run]",
     "back to CDC after a slot guard fallback",
     "Switches tables the slot guard moved to cursor sync back to change data capture: a new slot, a copy "
     "through the guarded merge, then streaming.",
     {{"--no-run", "only store the change; the next run does the copy"}},
     {},
     "pipeline tables"},
    {"export",
     "",
     "print the stored workspace as YAML",
     "Prints what apply stored, in the same YAML form; apply takes it back unchanged.",
     {},
     {},
     ""},
    {"export-debezium",
     "PIPELINE [--bootstrap-servers HOST:PORT]",
     "print the Debezium connector that captures the same tables",
     "Prints the Debezium source connector (Kafka Connect's REST form, for POST /connectors) for the "
     "pipeline's tables, with a slot and server id of its own so both can run during a hand-over. What it "
     "cannot express goes to stderr, each with what to do.",
     {{"--bootstrap-servers HOST:PORT", "Kafka, for the MySQL connector's schema history"}},
     {},
     "pipeline"},
    {"completion",
     "bash|zsh",
     "print the shell completion script",
     "Completes commands, options, pipeline and table names (read from the workspace). For bash: "
     "source <(driftless-cli completion bash), or put it in ~/.local/share/bash-completion/completions/"
     "driftless-cli. For zsh: driftless-cli completion zsh > \"${fpath[1]}/_driftless-cli\".",
     {},
     {},
     "shell"},
    {"help",
     "[COMMAND]",
     "this overview, or one command's help",
     "Without a command, the overview; with one, what it does and its options (the same as COMMAND "
     "--help).",
     {{"--man", "print the man page driftless-cli(1) instead"}},
     {},
     "command"},
    {"version", "", "print the version", "The same version as the app's About box and --version.", {}, {}, ""},
};

/// `text` wrapped to kWidth columns, every line after the first indented by `indent`, the first
/// by `first` (blank lines kept: they separate paragraphs).
std::string wrap(std::string_view text, std::size_t first, std::size_t indent)
{
    std::string out;
    std::size_t column = first;
    bool lineStart = true;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '\n') {
            out += '\n';
            if (i + 1 < text.size() && text[i + 1] == '\n') {
                out += '\n';
                ++i;
            }
            out.append(indent, ' ');
            column = indent;
            lineStart = true;
            ++i;
            continue;
        }
        if (text[i] == ' ') {
            ++i;
            continue;
        }
        std::size_t end = text.find_first_of(" \n", i);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view word = text.substr(i, end - i);
        if (!lineStart && column + 1 + word.size() > kWidth) {
            out += '\n';
            out.append(indent, ' ');
            column = indent;
            lineStart = true;
        }
        if (!lineStart) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
        lineStart = false;
        i = end;
    }
    return out;
}

std::string usageLine(const CommandHelp &c)
{
    std::string s = "driftless-cli [--state FILE] " + std::string(c.name);
    if (!c.synopsis.empty())
        s += " " + std::string(c.synopsis);
    return s;
}

/// Text as groff shows it literally: backslashes, dashes, and a dot or quote opening a line.
std::string roff(std::string_view text)
{
    std::string out;
    bool lineStart = true;
    for (char ch : text) {
        if (lineStart && (ch == '.' || ch == '\''))
            out += "\\&";
        if (ch == '\\')
            out += "\\e";
        else if (ch == '-')
            out += "\\-";
        else
            out += ch;
        lineStart = ch == '\n';
    }
    return out;
}

/// Paragraphs of `details` as groff paragraphs.
std::string roffParagraphs(std::string_view details)
{
    std::string out;
    std::size_t start = 0;
    while (start <= details.size()) {
        std::size_t end = details.find("\n\n", start);
        const std::string_view para =
            details.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        out += ".PP\n" + roff(para) + "\n";
        if (end == std::string_view::npos)
            break;
        start = end + 2;
    }
    return out;
}

/// The flags of a command's options, without their arguments ("--cert FILE --key FILE" gives two).
std::vector<std::string> flagsOf(const CommandHelp &c)
{
    std::vector<std::string> out;
    for (const auto &o : c.options) {
        std::istringstream words{std::string(o.flag)};
        for (std::string w; words >> w;)
            if (w.rfind("--", 0) == 0)
                out.push_back(w);
    }
    out.push_back("--help");
    return out;
}

std::string join(const std::vector<std::string> &items)
{
    std::string out;
    for (const auto &i : items)
        out += (out.empty() ? "" : " ") + i;
    return out;
}

/// The `case` label of a command in the shell scripts: its name and its aliases.
std::string caseLabel(const CommandHelp &c)
{
    std::string label(c.name);
    for (auto a : c.aliases)
        label += "|" + std::string(a);
    return label;
}

/// The two `case $cmd` blocks both shell scripts share: each command's options into `opts`, and
/// what its positional arguments complete to into `what`.
std::string commandCases()
{
    std::string opts = "    case $cmd in\n", what = "    case $cmd in\n";
    for (const auto &c : kCommands) {
        opts += "        " + caseLabel(c) + ") opts=\"" + join(flagsOf(c)) + "\" ;;\n";
        if (!c.completes.empty())
            what += "        " + caseLabel(c) + ") what=\"" + std::string(c.completes) + "\" ;;\n";
    }
    return opts + "    esac\n" + what + "    esac\n";
}

std::string commandNames()
{
    std::vector<std::string> names;
    for (const auto &c : kCommands)
        names.emplace_back(c.name);
    return join(names);
}

} // namespace

const std::vector<CommandHelp> &commandHelps()
{
    return kCommands;
}

const CommandHelp *findCommandHelp(std::string_view name)
{
    for (const auto &c : kCommands)
        if (c.name == name || std::find(c.aliases.begin(), c.aliases.end(), name) != c.aliases.end())
            return &c;
    return nullptr;
}

std::string overviewText()
{
    std::string s = "usage: driftless-cli [--state FILE] COMMAND [ARGS]\n\n"
                    "Keeps tables in two databases in sync. " +
                    wrap(kWorkspace, 40, 0) + "\n\ncommands:\n";
    for (const auto &c : kCommands) {
        std::string head = "  " + std::string(c.name);
        if (!c.synopsis.empty())
            head += " " + std::string(c.synopsis);
        if (head.size() > 32) {
            s += "  " + wrap(std::string_view(head).substr(2), 2, 8) + "\n" + std::string(34, ' ') +
                 wrap(c.summary, 34, 34) + "\n";
        } else {
            head.resize(34, ' ');
            s += head + wrap(c.summary, 34, 34) + "\n";
        }
    }
    s += "\n'driftless-cli help COMMAND' (or COMMAND --help) tells more of each.\n\nexit codes: " +
         wrap(kExitCodes, 12, 12) + "\n";
    return s;
}

std::string commandHelpText(const CommandHelp &c)
{
    std::string s = "usage: " + wrap(usageLine(c), 7, 8) + "\n\n" + wrap(c.details, 0, 0) + "\n";
    if (!c.aliases.empty()) {
        s += "\nalso spelled:";
        for (auto a : c.aliases)
            s += " " + std::string(a);
        s += "\n";
    }
    if (!c.options.empty()) {
        s += "\noptions:\n";
        for (const auto &o : c.options) {
            std::string flag = "  " + std::string(o.flag);
            if (flag.size() > 28) {
                s += flag + "\n" + std::string(30, ' ') + wrap(o.text, 30, 30) + "\n";
            } else {
                flag.resize(30, ' ');
                s += flag + wrap(o.text, 30, 30) + "\n";
            }
        }
    }
    s += "\n" + wrap(kWorkspace, 0, 0) + "\n\nexit codes: " + wrap(kExitCodes, 12, 12) + "\n";
    return s;
}

std::string manPage(std::string_view version)
{
    std::string s = ".TH DRIFTLESS\\-CLI 1 \"\" \"Driftless " + roff(version) + "\" \"User Commands\"\n";
    s += ".SH NAME\ndriftless\\-cli \\- keep tables in two databases in sync, headless\n";
    s += ".SH SYNOPSIS\n.B driftless\\-cli\n[\\fB\\-\\-state\\fR \\fIFILE\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n";
    s += ".SH DESCRIPTION\n" +
         roffParagraphs("Driftless keeps tables in two databases in sync (Postgres and MariaDB/MySQL "
                        "sources; Postgres, MariaDB/MySQL and SQLite targets) by full refresh, cursor "
                        "sync or change data capture, and shows that the copies are fresh and "
                        "correct. driftless-cli runs the same engine as the desktop app, driftless(1).\n\n" +
                        std::string(kWorkspace));
    s += ".SH COMMANDS\n";
    for (const auto &c : kCommands) {
        s += ".SS \"" + roff(c.name) + (c.synopsis.empty() ? "" : " " + roff(c.synopsis)) + "\"\n";
        s += roffParagraphs(c.details);
        if (!c.aliases.empty()) {
            s += ".PP\nAlso spelled:";
            for (auto a : c.aliases)
                s += " \\fB" + roff(a) + "\\fR";
            s += ".\n";
        }
        for (const auto &o : c.options)
            s += ".TP\n.B " + roff(o.flag) + "\n" + roff(o.text) + "\n";
    }
    s += ".SH ENVIRONMENT\n.TP\n.B DRIFTLESS_STATE\nThe workspace file, when \\-\\-state is not given.\n"
         ".TP\n.B PGPASSFILE, PGSERVICEFILE, PG*\nAs libpq reads them: passwords never go in the workspace.\n";
    s += ".SH EXIT STATUS\n" + roffParagraphs(kExitCodes);
    s += ".SH SEE ALSO\n.BR driftless (1)\n";
    return s;
}

std::string completionScript(std::string_view shell)
{
    if (shell == "bash") {
        return "# bash completion for driftless-cli (driftless-cli completion bash)\n"
               "_driftless_cli() {\n"
               "    local cur=${COMP_WORDS[COMP_CWORD]} i=1 state=() cmd= pos=0 opts= what= p=\n"
               "    while (( i < COMP_CWORD )); do\n"
               "        case ${COMP_WORDS[i]} in\n"
               "            --state) state=(--state \"${COMP_WORDS[i+1]}\"); (( i += 2 )); continue ;;\n"
               "            --state=*) state=(\"${COMP_WORDS[i]}\") ;;\n"
               "            -*) ;;\n"
               "            *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; else (( pos++ )); [[ -z $p ]] && "
               "p=${COMP_WORDS[i]}; fi ;;\n"
               "        esac\n"
               "        (( i++ ))\n"
               "    done\n"
               "    if [[ -z $cmd ]]; then\n"
               "        if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '--state --help --version' -- \"$cur\"));\n"
               "        elif [[ ${COMP_WORDS[COMP_CWORD-1]} == --state ]]; then COMPREPLY=($(compgen -f -- "
               "\"$cur\"));\n"
               "        else COMPREPLY=($(compgen -W '" +
               commandNames() +
               "' -- \"$cur\")); fi\n"
               "        return\n"
               "    fi\n" +
               commandCases() +
               "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi\n"
               "    local words=\n"
               "    case $what in\n"
               "        pipeline) (( pos == 0 )) && words=$(driftless-cli \"${state[@]}\" __complete pipelines "
               "2>/dev/null) ;;\n"
               "        'pipeline tables')\n"
               "            if (( pos == 0 )); then words=$(driftless-cli \"${state[@]}\" __complete pipelines "
               "2>/dev/null)\n"
               "            else words=$(driftless-cli \"${state[@]}\" __complete tables \"$p\" 2>/dev/null); fi ;;\n"
               "        file) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
               "        shell) words='bash zsh' ;;\n"
               "        command) words='" +
               commandNames() +
               "' ;;\n"
               "    esac\n"
               "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
               "}\n"
               "complete -F _driftless_cli driftless-cli\n";
    }
    if (shell == "zsh") {
        std::string describe;
        for (const auto &c : kCommands) {
            std::string summary(c.summary);
            std::replace(summary.begin(), summary.end(), '\'', ' ');
            std::string escaped;
            for (char ch : summary)
                escaped += ch == ':' ? std::string("\\:") : std::string(1, ch);
            describe += "        '" + std::string(c.name) + ":" + escaped + "'\n";
        }
        return "#compdef driftless-cli\n"
               "# zsh completion for driftless-cli (driftless-cli completion zsh > \"${fpath[1]}/_driftless-cli\")\n"
               "_driftless_cli() {\n"
               "    local -a state_args commands\n"
               "    local i=2 cmd= pos=0 opts= what= p=\n"
               "    while (( i < CURRENT )); do\n"
               "        case ${words[i]} in\n"
               "            --state) state_args=(--state ${words[i+1]}); (( i += 2 )); continue ;;\n"
               "            -*) ;;\n"
               "            *) if [[ -z $cmd ]]; then cmd=${words[i]}; else (( pos++ )); [[ -z $p ]] && p=${words[i]}; "
               "fi ;;\n"
               "        esac\n"
               "        (( i++ ))\n"
               "    done\n"
               "    if [[ -z $cmd ]]; then\n"
               "        commands=(\n" +
               describe +
               "        )\n"
               "        _describe command commands\n"
               "        return\n"
               "    fi\n" +
               commandCases() +
               "    if [[ ${words[CURRENT]} == -* ]]; then compadd -- ${=opts}; return; fi\n"
               "    case $what in\n"
               "        pipeline) (( pos == 0 )) && compadd -- ${(f)\"$(driftless-cli $state_args __complete pipelines "
               "2>/dev/null)\"} ;;\n"
               "        'pipeline tables')\n"
               "            if (( pos == 0 )); then compadd -- ${(f)\"$(driftless-cli $state_args __complete pipelines "
               "2>/dev/null)\"}\n"
               "            else compadd -- ${(f)\"$(driftless-cli $state_args __complete tables $p 2>/dev/null)\"}; "
               "fi ;;\n"
               "        file) _files ;;\n"
               "        shell) compadd bash zsh ;;\n"
               "        command) compadd " +
               commandNames() +
               " ;;\n"
               "    esac\n"
               "}\n"
               "_driftless_cli \"$@\"\n";
    }
    return {};
}

} // namespace driftless::cli
