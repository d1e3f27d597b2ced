#pragma once

#include <functional>
#include <optional>
#include <string>

namespace driftless::core {

/// Supplies the password for a Postgres DSN at connect time, so a password never has to live in
/// a DSN, a workspace file or the environment. The desktop app installs one that answers from
/// the passwords it read from the OS keychain (or that the user typed this session).
///
/// Called by PgConnection's constructor, on whatever thread connects, only when the DSN itself
/// names no password; returning nullopt leaves libpq to its own sources (PGPASSWORD, ~/.pgpass,
/// the service file). The provider must be thread-safe and must never block on a user or the
/// UI thread: it answers from memory.
using PgPasswordProvider = std::function<std::optional<std::string>(const std::string &dsn)>;

/// Installs `provider` for the whole process (an empty function removes it). Thread-safe.
void setPgPasswordProvider(PgPasswordProvider provider);

/// What the installed provider says for `dsn`; nullopt without a provider. Thread-safe.
std::optional<std::string> pgPasswordFor(const std::string &dsn);

/// Makes pgPasswordFor(`rewritten`) ask the provider for `dsn`: a DSN the engine rewrote (to go
/// through an SSH tunnel) keeps the password of the DSN as written. Thread-safe.
void aliasPgPasswordDsn(const std::string &rewritten, const std::string &dsn);

/// Supplies the passphrase of an SSH tunnel's identity_file, by endpoint name, when its tunnel
/// starts: the app answers from the keychain (or what the DBA typed this session), the CLI from
/// the same keychain items. Thread-safe, answers from memory; nullopt leaves ssh to the agent.
using SshPassphraseProvider = std::function<std::optional<std::string>(const std::string &endpoint)>;
void setSshPassphraseProvider(SshPassphraseProvider provider);
std::optional<std::string> sshPassphraseFor(const std::string &endpoint);

/// The DSN as written that `rewritten` was made from (aliasPgPasswordDsn), or nullopt. Thread-safe.
std::optional<std::string> pgDsnAliasedFrom(const std::string &rewritten);

} // namespace driftless::core
