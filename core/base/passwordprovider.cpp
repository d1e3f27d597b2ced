#include "core/base/passwordprovider.h"

#include <memory>
#include <mutex>

namespace driftless::core {

namespace {

std::mutex g_mutex;
// Shared so a connect in progress keeps the provider it started with while another is set.
std::shared_ptr<const PgPasswordProvider> g_provider;

} // namespace

void setPgPasswordProvider(PgPasswordProvider provider)
{
    auto next = provider ? std::make_shared<const PgPasswordProvider>(std::move(provider)) : nullptr;
    std::lock_guard lock(g_mutex);
    g_provider = std::move(next);
}

std::optional<std::string> pgPasswordFor(const std::string &dsn)
{
    std::shared_ptr<const PgPasswordProvider> provider;
    {
        std::lock_guard lock(g_mutex);
        provider = g_provider;
    }
    if (!provider)
        return std::nullopt;
    return (*provider)(dsn);
}

} // namespace driftless::core
