#pragma once

#include "core/db/mysqlconnection.h"
#include "core/model/workspace.h"

#include <string>

namespace driftless::test {

/// A `mysql://` DSN (no password) for a database on the test MariaDB. Loading it exports
/// MYSQL_PWD, so the connection finds the password the way a DBA's environment provides it.
std::string myDsn(const std::string &db);

/// A database on the test MariaDB created for one test and dropped when it goes out of scope.
class MyTestDb {
public:
    explicit MyTestDb(const std::string &prefix);
    ~MyTestDb();
    MyTestDb(const MyTestDb &) = delete;
    MyTestDb &operator=(const MyTestDb &) = delete;

    const std::string &name() const { return m_name; }
    std::string dsn() const { return myDsn(m_name); }
    core::MysqlConnection connect() const;
    /// Runs one statement on a fresh connection.
    void exec(const std::string &sql) const;
    std::string scalar(const std::string &sql) const;

private:
    std::string m_name;
};

core::Endpoint myEndpoint(const std::string &name, const std::string &db);

} // namespace driftless::test
