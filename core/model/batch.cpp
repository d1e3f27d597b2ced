#include "core/model/batch.h"

#include "core/base/copytext.h"
#include "core/model/tableref.h"

#include <stdexcept>
#include <string>
#include <unordered_map>

namespace driftless::core {

void RowSet::append(std::string_view line, ChangeOp op, std::int64_t version, std::string_view unchangedMask)
{
    if (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    if (m_data.size() + line.size() > 0xffffffffull)
        throw std::length_error("batch larger than 4 GiB");
    std::int32_t mask = -1;
    if (unchangedMask.find('1') != std::string_view::npos) {
        mask = static_cast<std::int32_t>(m_masks.size());
        m_masks.emplace_back(unchangedMask);
    }
    m_rows.push_back(
        {static_cast<std::uint32_t>(m_data.size()), static_cast<std::uint32_t>(line.size()), op, version, mask});
    m_data.append(line);
}

void RowSet::setBefore(size_t i, std::string_view line)
{
    m_rows[i].before = static_cast<std::int32_t>(m_befores.size());
    m_befores.emplace_back(line);
}

void RowSet::setCommitTime(size_t i, std::int64_t unixMicros)
{
    if (m_commitTimes.size() <= i)
        m_commitTimes.resize(m_rows.size(), 0);
    m_commitTimes[i] = unixMicros;
}

void RowSet::clear()
{
    m_commitTimes.clear();
    m_data.clear();
    m_rows.clear();
    m_masks.clear();
    m_befores.clear();
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
    // For a row with unchanged columns: the previous row of its key, to inherit from.
    std::vector<std::ptrdiff_t> previous(m_rows.size(), -1);
    std::vector<std::string_view> fields;
    std::string key;
    for (size_t i = 0; i < m_rows.size(); ++i) {
        copytext::split(line(i), fields);
        key.clear();
        for (int k : keyColumns) {
            key.append(fields.at(static_cast<size_t>(k)));
            key += '\t';
        }
        auto [it, inserted] = last.try_emplace(key, i);
        if (!inserted) {
            previous[i] = static_cast<std::ptrdiff_t>(it->second);
            it->second = i;
        }
    }
    if (last.size() == m_rows.size())
        return;
    std::vector<bool> keep(m_rows.size(), false);
    for (auto &[k, i] : last)
        keep[i] = true;

    // Resolves row i's fields and mask, inheriting unchanged columns from earlier rows of its key.
    std::vector<std::string_view> prevFields;
    auto resolve = [&](size_t i, std::string &lineOut, std::string &maskOut) {
        std::vector<std::string_view> f;
        copytext::split(line(i), f);
        std::string mask(unchangedMask(i));
        std::vector<std::string> owned(f.begin(), f.end());
        for (std::ptrdiff_t p = previous[i]; p >= 0 && mask.find('1') != std::string::npos;
             p = previous[static_cast<size_t>(p)]) {
            const auto &pr = m_rows[static_cast<size_t>(p)];
            if (pr.op == ChangeOp::Delete)
                break; // nothing older than a delete is the row's value any more
            copytext::split(line(static_cast<size_t>(p)), prevFields);
            std::string_view pmask = unchangedMask(static_cast<size_t>(p));
            for (size_t c = 0; c < mask.size() && c < owned.size(); ++c)
                if (mask[c] == '1' && (pmask.empty() || pmask[c] != '1')) {
                    owned[c] = std::string(prevFields.at(c));
                    mask[c] = '0';
                }
        }
        lineOut.clear();
        for (size_t c = 0; c < owned.size(); ++c) {
            if (c)
                lineOut += '\t';
            lineOut += owned[c];
        }
        maskOut = mask;
    };

    RowSet out;
    out.reserve(last.size(), m_data.size());
    std::string l, m;
    for (size_t i = 0; i < m_rows.size(); ++i) {
        if (!keep[i])
            continue;
        if (m_rows[i].unchanged >= 0 && previous[i] >= 0) {
            resolve(i, l, m);
            out.append(l, m_rows[i].op, m_rows[i].version, m);
        } else {
            out.append(line(i), m_rows[i].op, m_rows[i].version, unchangedMask(i));
        }
        {
            size_t first = i;
            while (previous[first] >= 0)
                first = static_cast<size_t>(previous[first]);
            if (m_rows[first].before == kNoBase)
                out.setNoBase(out.size() - 1);
            else if (m_rows[first].before >= 0)
                out.setBefore(out.size() - 1, before(first));
        }
        if (commitTime(i))
            out.setCommitTime(out.size() - 1, commitTime(i));
    }
    *this = std::move(out);
}

std::vector<std::string> pgKeyArrays(const RowSet &rows, const std::vector<size_t> &picked, size_t from, size_t to,
                                     const std::vector<int> &keyColumns)
{
    std::vector<std::string> arrays(keyColumns.size(), "{");
    std::vector<std::string_view> fields;
    std::string value;
    for (size_t p = from; p < to; ++p) {
        copytext::split(rows.line(picked[p]), fields);
        for (size_t i = 0; i < keyColumns.size(); ++i) {
            value.clear();
            copytext::unescape(fields.at(static_cast<size_t>(keyColumns[i])), value);
            if (p > from)
                arrays[i] += ',';
            appendPgArrayElement(value, arrays[i]);
        }
    }
    for (auto &a : arrays)
        a += '}';
    return arrays;
}

} // namespace driftless::core
