#include "nyxid/store/store_rows.h"

#include <utility>

#include "base/crypto.h"
#include "base/json_read.h"
#include "nlohmann/json.hpp"

namespace aevatar::nyxid::rows {

std::vector<std::string> StringList(const std::string& column) {
  std::vector<std::string> out;
  nlohmann::json items = nlohmann::json::parse(column, nullptr, false);
  if (!items.is_array()) return out;
  for (const nlohmann::json& item : items) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

std::string StringListColumn(const std::vector<std::string>& items) {
  return nlohmann::json(items).dump();
}

std::vector<Membership> KnownMemberships(const std::vector<std::optional<Membership>>& found) {
  std::vector<Membership> out;
  for (const std::optional<Membership>& membership : found) {
    if (membership) out.push_back(*membership);
  }
  return out;
}

std::string SealProviderKey(const std::string& at_rest_key, const std::string& provider_key) {
  if (provider_key.empty()) return "";
  return base::Base64UrlEncode(base::SecretBoxSeal(at_rest_key, provider_key));
}

absl::StatusOr<CatalogService> OpenedCatalog(const std::string& at_rest_key,
                                             absl::StatusOr<CatalogService> service) {
  if (!service.ok() || service->provider_api_key.empty()) return service;
  auto raw = base::Base64UrlDecode(service->provider_api_key);
  service->provider_api_key.clear();
  if (!raw.ok()) return absl::DataLossError("a sealed provider key is corrupt");
  auto plain = base::SecretBoxOpen(at_rest_key, *raw);
  if (!plain.ok()) return absl::DataLossError("a sealed provider key cannot be opened");
  service->provider_api_key = std::move(*plain);
  return service;
}

absl::StatusOr<std::vector<CatalogService>> OpenedCatalogs(const std::string& at_rest_key,
                                                           std::vector<CatalogService> services) {
  for (CatalogService& service : services) {
    auto opened = OpenedCatalog(at_rest_key, std::move(service));
    if (!opened.ok()) return opened.status();
    service = *std::move(opened);
  }
  return services;
}

absl::StatusOr<std::vector<std::string>> PrincipalsFromColumn(const std::string& column) {
  auto principals = base::ParseJson(column);
  if (!principals.ok() || !principals->is_array()) {
    return absl::DataLossError("ssh_targets.principals is not a JSON array");
  }
  std::vector<std::string> out;
  for (const auto& principal : *principals) {
    if (!principal.is_string()) return absl::DataLossError("ssh_targets.principals: not text");
    out.push_back(principal.get<std::string>());
  }
  return out;
}

}  // namespace aevatar::nyxid::rows
