#include "core/model/error.h"

namespace driftless::core {

Error::Error(ErrorKind kind, std::string message, std::string code, std::string hint)
    : std::runtime_error(std::move(message)), m_kind(kind), m_code(std::move(code)), m_hint(std::move(hint))
{
}

std::string Error::describe() const
{
    std::string s = what();
    if (!m_hint.empty())
        s += "; " + m_hint;
    return s;
}

std::string describe(const std::exception &e)
{
    if (const auto *error = dynamic_cast<const Error *>(&e))
        return error->describe();
    return std::string("internal error: ") + e.what();
}

namespace {
std::string locate(const std::string &message, const std::string &file, int line, const std::string &field)
{
    std::string s;
    if (!file.empty()) {
        s += file;
        if (line > 0)
            s += ":" + std::to_string(line);
        s += ": ";
    }
    if (!field.empty())
        s += field + ": ";
    return s + message;
}
} // namespace

ConfigError::ConfigError(std::string message, std::string file, int line, std::string field)
    : Error(ErrorKind::Permanent, locate(message, file, line, field)), m_file(std::move(file)), m_line(line),
      m_field(std::move(field))
{
}

bool isTransientSqlState(const std::string &s)
{
    if (s.size() != 5)
        return false;
    const std::string cls = s.substr(0, 2);
    return cls == "08" || cls == "40" || cls == "53" || s.rfind("57P", 0) == 0 || s == "55P03" || s == "55006";
}

} // namespace driftless::core
