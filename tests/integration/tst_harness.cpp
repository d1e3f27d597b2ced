// The server fixtures themselves: the settings every later test (and CDC) relies on.

#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>

using namespace driftless::test;

namespace {
std::string run(const std::string &cmd)
{
    std::array<char, 4096> buf{};
    std::string out;
    std::unique_ptr<FILE, int (*)(FILE *)> p(::popen(cmd.c_str(), "r"), ::pclose);
    while (p && std::fgets(buf.data(), buf.size(), p.get()))
        out += buf.data();
    return out;
}
} // namespace

TEST(Harness, postgresIsReadyForLogicalReplication)
{
    PgTestDb db("harness");
    EXPECT_EQ(db.scalar("SHOW wal_level"), "logical");
    EXPECT_GE(std::stoi(db.scalar("SHOW max_wal_senders")), 10);
    EXPECT_GE(std::stoi(db.scalar("SHOW max_replication_slots")), 10);
    EXPECT_EQ(db.scalar("SELECT current_setting('server_version_num')::int / 10000"), "15");
    EXPECT_EQ(db.scalar("SHOW listen_addresses"), "127.0.0.1");
}

TEST(Harness, mariadbWritesAFullRowBinlog)
{
    const auto &s = servers();
    std::string out = run("MYSQL_PWD='" + s.myPassword + "' mariadb --no-defaults -N -B -h " + s.myHost + " -P " +
                          std::to_string(s.myPort) + " -u " + s.myUser +
                          " -e \"SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@server_id > 0, "
                          "@@version LIKE '10.11%'\" 2>&1");
    EXPECT_EQ(out, "1\tROW\tFULL\t1\t1\n");
}
