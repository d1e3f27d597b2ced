#include "ui/enginedoor.h"

namespace driftless::ui {

EngineDoor::Reply EngineDoor::replyFrom(int status, const QByteArray &data)
{
    Reply r;
    r.status = status;
    r.body = nlohmann::json::parse(data.toStdString(), nullptr, false);
    if (r.body.is_discarded())
        r.body = nullptr;
    if (status >= 200 && status < 300)
        return r;
    if (r.body.is_object() && r.body.contains("error") && r.body["error"].is_string()) {
        r.error = QString::fromStdString(r.body["error"].get<std::string>());
        if (r.body.contains("hint") && r.body["hint"].is_string())
            r.error += QStringLiteral(": ") + QString::fromStdString(r.body["hint"].get<std::string>());
    } else {
        r.error = tr("the engine answered %1").arg(status);
    }
    return r;
}

} // namespace driftless::ui
