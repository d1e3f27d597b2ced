#include "core/model/batch.h"

#include "core/db/copytext.h"

#include <stdexcept>
#include <string>
#include <unordered_map>

namespace driftless::core {

void RowSet::append(std::string_view line, ChangeOp op, std::int64_t version)
{
    if (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    if (m_data.size() + line.size() > 0xffffffffull)
        throw std::length_error("batch larger than 4 GiB");
    m_rows.push_back({static_cast<std::uint32_t>(m_data.size()), static_cast<std::uint32_t>(line.size()), op, version});
    m_data.append(line);
}

void RowSet::clear()
{
    m_data.clear();
    m_rows.clear();
}

void RowSet::reserve(size_t rows, size_t bytes)
{
    m_rows.reserve(rows);
    m_data.reserve(bytes);
}

void RowSet::foldByKey(const std::vector<int> &keyColumns)
{
    if (m_rows.size() < 2)
        return;
    std::unordered_map<std::string, size_t> last;
    last.reserve(m_rows.size());
    std::vector<std::string_view> fields;
    std::string key;
    for (size_t i = 0; i < m_rows.size(); ++i) {
        copytext::split(line(i), fields);
        key.clear();
        for (int k : keyColumns) {
            key.append(fields.at(static_cast<size_t>(k)));
            key += '\t';
        }
        last[key] = i;
    }
    if (last.size() == m_rows.size())
        return;
    std::vector<bool> keep(m_rows.size(), false);
    for (auto &[k, i] : last)
        keep[i] = true;
    RowSet out;
    out.reserve(last.size(), m_data.size());
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (keep[i])
            out.append(line(i), m_rows[i].op, m_rows[i].version);
    *this = std::move(out);
}

} // namespace driftless::core
