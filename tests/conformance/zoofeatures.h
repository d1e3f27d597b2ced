#pragma once

// The schema zoo's feature table: real-world Postgres table features, each with its DDL, seed
// rows, writer statements, the strategies it is synced by, the refusals `apply` must give, and
// the combinations known to fail (disabled unless DRIFTLESS_ZOO_ALL=1).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace driftless::zoo {

enum class Strat { FullRefresh, Cursor, Cdc };
enum class Target { Postgres, Sqlite };

const char *strategyName(Strat s);
const char *targetName(Target t);

/// One source table of a feature.
struct ZooTable {
    std::string sql;      ///< as SQL: zoo."Order"
    std::string yaml;     ///< as the workspace's `table:` (YAML single-quoted when it holds quotes)
    std::string liteName; ///< the SQLite target's table (the name without its schema)
    /// Synced by this strategy whatever the pair's strategy is (a keyless partitioned root).
    std::optional<Strat> always;
    /// The rows of this table alone, without its inheritance children (FROM ONLY).
    bool ownRowsOnly = false;
    /// Strategies `apply` refuses for this table (a substring of the reason and of the fix);
    /// the table is still synced, by `always`.
    std::map<Strat, std::pair<std::string, std::string>> refused;
};

/// A writer statement. Placeholders, drawn once per statement from the fixed-seed generator:
/// {k} a key that may exist (1..the feature's highest), {n} a fresh key, {r} a number 0..999999,
/// {c} a column number 1..997 (the wide table), {w} a word with mixed case and a space.
struct Op {
    char kind; ///< i insert, u update, d delete, p primary-key update, m row moved between partitions
    std::string sql;
};

struct Feature {
    std::string name;
    std::string what; ///< one line for the docs table
    std::string ddl;
    std::string seed;
    long long seedRows = 0; ///< seed keys are 1..seedRows; {n} continues from there
    std::vector<ZooTable> tables;
    std::vector<Op> ops;
    int writes = 30; ///< writer statements for this feature
    /// The whole feature is refused at `apply` under this strategy: (reason, fix) substrings.
    std::map<Strat, std::pair<std::string, std::string>> refusedBy;
    /// Known failures, disabled unless DRIFTLESS_ZOO_ALL=1: what fails (reported).
    std::map<std::pair<Strat, Target>, std::string> fails;
    /// What the oracle compares, where it is less than every column exactly.
    std::string oracleNote;
};

const std::vector<Feature> &features();

} // namespace driftless::zoo
