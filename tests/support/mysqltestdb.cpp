#include "tests/support/mysqltestdb.h"

#include "tests/support/testsupport.h"

#include <cstdlib>

namespace driftless::test {

std::string myDsn(const std::string &db)
{
    const auto &s = servers();
    ::setenv("MYSQL_PWD", s.myPassword.c_str(), 1);
    return "mysql://" + s.myUser + "@" + s.myHost + ":" + std::to_string(s.myPort) + "/" + db;
}

MyTestDb::MyTestDb(const std::string &prefix) : m_name(uniqueName(prefix))
{
    core::MysqlConnection c(myDsn(""));
    c.exec("CREATE DATABASE " + core::mysqlIdent(m_name) + " CHARACTER SET utf8mb4");
}

MyTestDb::~MyTestDb()
{
    try {
        core::MysqlConnection c(myDsn(""));
        c.exec("DROP DATABASE IF EXISTS " + core::mysqlIdent(m_name));
    } catch (...) {
    }
}

core::MysqlConnection MyTestDb::connect() const
{
    return core::MysqlConnection(dsn());
}

void MyTestDb::exec(const std::string &sql) const
{
    auto c = connect();
    c.exec(sql);
}

std::string MyTestDb::scalar(const std::string &sql) const
{
    auto c = connect();
    return c.scalar(sql).value_or("NULL");
}

core::Endpoint myEndpoint(const std::string &name, const std::string &db)
{
    core::Endpoint e;
    e.name = name;
    e.kind = core::EndpointKind::Mysql;
    e.dsn = myDsn(db);
    return e;
}

} // namespace driftless::test
