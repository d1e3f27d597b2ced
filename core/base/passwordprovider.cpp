#include "core/base/passwordprovider.h"

#include <map>
#include <memory>
#include <mutex>

namespace driftless::core {

namespace {

std::mutex g_providerMutex;
// Shared so a connect in progress keeps the provider it started with while another is set.
std::shared_ptr<const PgPasswordProvider> g_provider;
std::map<std::string, std::string> g_aliases;
std::shared_ptr<const SshPassphraseProvider> g_sshProvider;

} // namespace

void setPgPasswordProvider(PgPasswordProvider provider)
{
    auto next = provider ? std::make_shared<const PgPasswordProvider>(std::move(provider)) : nullptr;
    std::lock_guard lock(g_providerMutex);
    g_provider = std::move(next);
}

std::optional<std::string> pgPasswordFor(const std::string &dsn)
{
    std::shared_ptr<const PgPasswordProvider> provider;
    std::string alias;
    {
        std::lock_guard lock(g_providerMutex);
        provider = g_provider;
        if (auto it = g_aliases.find(dsn); it != g_aliases.end())
            alias = it->second;
    }
    if (!provider)
        return std::nullopt;
    return (*provider)(alias.empty() ? dsn : alias);
}

void aliasPgPasswordDsn(const std::string &rewritten, const std::string &dsn)
{
    std::lock_guard lock(g_providerMutex);
    g_aliases[rewritten] = dsn;
}

void setSshPassphraseProvider(SshPassphraseProvider provider)
{
    auto next = provider ? std::make_shared<const SshPassphraseProvider>(std::move(provider)) : nullptr;
    std::lock_guard lock(g_providerMutex);
    g_sshProvider = std::move(next);
}

std::optional<std::string> sshPassphraseFor(const std::string &endpoint)
{
    std::shared_ptr<const SshPassphraseProvider> provider;
    {
        std::lock_guard lock(g_providerMutex);
        provider = g_sshProvider;
    }
    return provider ? (*provider)(endpoint) : std::nullopt;
}

std::optional<std::string> pgDsnAliasedFrom(const std::string &rewritten)
{
    std::lock_guard lock(g_providerMutex);
    if (auto it = g_aliases.find(rewritten); it != g_aliases.end())
        return it->second;
    return std::nullopt;
}

} // namespace driftless::core
