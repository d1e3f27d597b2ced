#pragma once

// An engine door that answers from a recording of a real agent, for page tests without servers.

#include "ui/enginedoor.h"

#include "core/base/clock.h"
#include "core/base/isotime.h"
#include "core/engine/status/statusreport.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QPointer>
#include <QTimer>
#include <QUrlQuery>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace driftless::test {

/// Replays what an agent answered (tests/gui/data/record-agent.sh writes the recording): each
/// request is looked up by its verb, path and query (less `since_ms`, `phases_from` and `record`, which
/// depend on the clock and on the caller). Times in the answers are moved forward by how long
/// ago the recording was made, so it reads as if made a moment ago: freshness, lag history and
/// report ages come out as they did then. What was not recorded answers 404 saying so; a test
/// adds answers (for the actions it makes) with answer(), and reads the requests in calls().
///
/// Replies come from the event loop, never inside request(), as the real doors' do.
class RecordedDoor final : public ui::EngineDoor {
public:
    explicit RecordedDoor(const QString &file, QObject *parent = nullptr) : ui::EngineDoor(parent)
    {
        QFile f(file);
        if (!f.open(QIODevice::ReadOnly))
            throw std::runtime_error("cannot read the recording " + file.toStdString());
        const auto j = nlohmann::json::parse(f.readAll().toStdString());
        m_shiftMs = core::wallClockMs() - j.at("recorded_at_ms").get<std::int64_t>();
        for (const auto &[key, a] : j.at("answers").items())
            m_answers[key] = {a.at("status").get<int>(), a.at("body")};
    }

    struct Call {
        std::string verb, path;
        nlohmann::json body;
        std::string raw; ///< the body as sent (a workspace's YAML is no JSON)
    };
    const std::vector<Call> &calls() const { return m_calls; }
    int count(const std::string &verbAndPath) const
    {
        int n = 0;
        for (const auto &c : m_calls)
            n += c.verb + " " + c.path == verbAndPath ? 1 : 0;
        return n;
    }
    /// What `verbAndPath` ("POST /api/v1/pause") answers from now on.
    void answer(const std::string &verbAndPath, int status, nlohmann::json body)
    {
        m_answers[verbAndPath] = {status, std::move(body)};
    }

    void request(const QByteArray &verb, const QString &path, const QByteArray &body, QObject *context,
                 Done done) override
    {
        const std::string key = keyOf(verb, path);
        Call call{verb.toStdString(), key.substr(verb.size() + 1), nlohmann::json(), body.toStdString()};
        call.body = nlohmann::json::parse(body.toStdString(), nullptr, false);
        m_calls.push_back(call);
        Reply reply;
        auto it = m_answers.find(key);
        if (it == m_answers.end()) {
            reply =
                replyFrom(404, QByteArray::fromStdString(nlohmann::json({{"error", "not recorded: " + key}}).dump()));
        } else {
            nlohmann::json b = it->second.body;
            shift(b, {});
            reply = replyFrom(it->second.status, QByteArray::fromStdString(b.dump()));
        }
        QTimer::singleShot(0, this, [guard = QPointer<QObject>(context), done, reply] {
            if (guard)
                done(reply);
        });
    }

    /// "GET /api/v1/lag?pipeline=shop&table=public.orders": the query decoded, in the order sent.
    static std::string keyOf(const QByteArray &verb, const QString &path)
    {
        const int q = path.indexOf(QLatin1Char('?'));
        QString key = QString::fromLatin1(verb) + QLatin1Char(' ') + (q < 0 ? path : path.left(q));
        if (q >= 0) {
            QStringList kept;
            for (const auto &[k, v] : QUrlQuery(path.mid(q + 1)).queryItems(QUrl::FullyDecoded))
                if (k != QLatin1String("since_ms") && k != QLatin1String("phases_from") && k != QLatin1String("record"))
                    kept << k + QLatin1Char('=') + v;
            if (!kept.isEmpty())
                key += QLatin1Char('?') + kept.join(QLatin1Char('&'));
        }
        return key.toStdString();
    }

private:
    struct Answer {
        int status;
        nlohmann::json body;
    };
    /// Moves every time of `j` (numbers under keys ending in _ms, ISO 8601 strings under keys
    /// ending in "at") forward by m_shiftMs.
    void shift(nlohmann::json &j, const std::string &key) const
    {
        if (j.is_object()) {
            for (auto &[k, v] : j.items())
                shift(v, k);
        } else if (j.is_array()) {
            for (auto &v : j)
                shift(v, key);
        } else if (j.is_number_integer() && key.ends_with("_ms") && j.get<std::int64_t>() > 1'000'000'000'000) {
            j = j.get<std::int64_t>() + m_shiftMs;
        } else if (j.is_string() && (key == "at" || key.ends_with("_at"))) {
            if (auto ms = core::parseIso8601(j.get<std::string>()))
                j = core::formatIso8601(*ms + m_shiftMs);
        }
    }

    std::int64_t m_shiftMs = 0;
    std::map<std::string, Answer> m_answers;
    std::vector<Call> m_calls;
};

} // namespace driftless::test
