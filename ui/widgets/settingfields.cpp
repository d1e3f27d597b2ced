#include "ui/widgets/settingfields.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QLineEdit>

namespace driftless::ui::settingfields {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::settingfields", text);
}
} // namespace

QString durationText(const std::optional<core::Millis> &d)
{
    return d ? QString::fromStdString(core::formatDuration(*d)) : QString();
}

Read<core::Millis> readDuration(const QLineEdit *edit, const QString &what, core::Millis least)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return {};
    const auto d = core::parseDuration(text.toStdString());
    if (!d)
        return {std::nullopt, tr("%1 '%2' is not a duration: write e.g. 90s, 10m, 1h or 1d.").arg(what, text)};
    if (*d < least)
        return {std::nullopt, tr("%1 is at least %2.").arg(what, QString::fromStdString(core::formatDuration(least)))};
    return {d, {}};
}

Read<long long> readCount(const QLineEdit *edit, const QString &what, long long least, long long most)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return {};
    bool ok = false;
    const long long n = text.toLongLong(&ok);
    if (!ok || n < least || n > most)
        return {std::nullopt, tr("%1 '%2' is not a whole number from %3 to %4.").arg(what, text).arg(least).arg(most)};
    return {n, {}};
}

void fillChoices(QComboBox *box, const QString &defaultText, const QStringList &values)
{
    const QSignalBlocker block(box);
    box->clear();
    box->addItem(defaultText, QVariant());
    for (const QString &v : values)
        box->addItem(v, v);
}

std::optional<std::string> choice(const QComboBox *box)
{
    const QVariant v = box->currentData();
    if (!v.isValid())
        return std::nullopt;
    return v.toString().toStdString();
}

void setChoice(QComboBox *box, const std::optional<std::string> &value)
{
    if (!value) {
        box->setCurrentIndex(0);
        return;
    }
    const QString v = QString::fromStdString(*value);
    int i = box->findData(v);
    if (i < 0) {
        box->addItem(v, v);
        i = box->count() - 1;
    }
    box->setCurrentIndex(i);
}

std::optional<bool> boolChoice(const QComboBox *box)
{
    const auto v = choice(box);
    return v ? std::optional<bool>(*v == "true") : std::nullopt;
}

void setBoolChoice(QComboBox *box, std::optional<bool> value)
{
    setChoice(box, value ? std::optional<std::string>(*value ? "true" : "false") : std::nullopt);
}

} // namespace driftless::ui::settingfields
