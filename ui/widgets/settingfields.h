#pragma once

#include "core/model/duration.h"

#include <QString>
#include <QStringList>

#include <optional>
#include <string>

class QComboBox;
class QLineEdit;

namespace driftless::ui::settingfields {

// The workspace file's optional settings in the dialogs: an empty field (or a combo box's first,
// "default" entry) is a key left out of the file, and a value shown is spelt as the file spells
// it, so a dialog opened and closed without an edit writes back the same YAML.

/// A duration as the file writes it (`10m`); empty when unset.
QString durationText(const std::optional<core::Millis> &d);

/// What a field holds: its value (unset when empty) or why it cannot be saved.
template <typename T> struct Read {
    std::optional<T> value;
    QString problem;
};

/// The duration in `edit`: empty is unset; else at least `least`, or a problem naming `what`.
Read<core::Millis> readDuration(const QLineEdit *edit, const QString &what, core::Millis least);

/// A whole number in `edit` from `least` to `most`: empty is unset.
Read<long long> readCount(const QLineEdit *edit, const QString &what, long long least, long long most);

/// Fills `box` with `defaultText` (the key left out) and then `values`, each shown as itself.
void fillChoices(QComboBox *box, const QString &defaultText, const QStringList &values);
/// The value chosen, or nullopt for the default entry.
std::optional<std::string> choice(const QComboBox *box);
/// Selects `value` (the default entry for nullopt), adding it when the box does not offer it so
/// that a value the file holds is never lost.
void setChoice(QComboBox *box, const std::optional<std::string> &value);
/// A yes/no key (`adopt`) in a box filled with fillChoices(box, ..., {"true", "false"}).
std::optional<bool> boolChoice(const QComboBox *box);
void setBoolChoice(QComboBox *box, std::optional<bool> value);

} // namespace driftless::ui::settingfields
