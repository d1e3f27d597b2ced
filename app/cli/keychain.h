#pragma once

#include "core/model/workspace.h"

#include <string>
#include <vector>

namespace driftless::cli {

/// The keychain service the app saves endpoint passwords under (its SecretStore), the key being
/// the endpoint's name: the CLI reads the same items, so a password saved in the app's dialog
/// works for `driftless-cli run` too.
inline constexpr const char *kKeychainService = "Driftless";
/// The key of an SSH tunnel's identity-file passphrase: this prefix and the endpoint's name.
inline constexpr const char *kSshPassphrasePrefix = "ssh-passphrase:";
/// The key of a table's HMAC key (a hash mask's `key: keychain`) in that service: this prefix,
/// then the table as schema.name.
inline constexpr const char *kHmacKeyPrefix = "hmac:";

/// With a session bus (a desktop session, or DBUS_SESSION_BUS_ADDRESS), reads from the Secret
/// Service the passwords saved for the Postgres and MySQL/MariaDB endpoints of `ws`, and installs
/// a password provider answering from them for the rest of the process (a DSN that names a
/// password keeps it). Without a bus, with DRIFTLESS_KEYCHAIN=0, or for an endpoint with no
/// saved password, libpq's and the connector's own sources apply as before (PGPASSWORD,
/// ~/.pgpass, the service file, MYSQL_PWD, ~/.my.cnf). The passphrases of SSH identity files
/// saved for those endpoints (kSshPassphrasePrefix) are read too and handed to their tunnels;
/// the HMAC keys of the tables whose hash masks name `key: keychain` answer core's MaskKeyProvider.
///
/// Call on the main thread before anything connects. Waits for the keychain at most a few
/// seconds in all (a locked keychain that asks to be unlocked is given up on). Returns the
/// names of the endpoints a password was found for.
std::vector<std::string> useKeychainPasswords(const core::Workspace &ws);

} // namespace driftless::cli
