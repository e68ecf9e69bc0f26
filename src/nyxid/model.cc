#include "nyxid/model.h"

#include <algorithm>

#include "absl/strings/str_split.h"
#include "base/api_error.h"

namespace aevatar::nyxid {

std::string_view OrgRoleName(OrgRole role) {
  switch (role) {
    case OrgRole::kAdmin:
      return "admin";
    case OrgRole::kMember:
      return "member";
    case OrgRole::kViewer:
      return "viewer";
  }
  return "viewer";
}

absl::StatusOr<OrgRole> ParseOrgRole(std::string_view name) {
  if (name == "admin") return OrgRole::kAdmin;
  if (name == "member") return OrgRole::kMember;
  if (name == "viewer") return OrgRole::kViewer;
  return base::ApiError(absl::StatusCode::kInvalidArgument, "ORG_ROLE_INVALID",
                        "an organisation role is admin, member or viewer");
}

std::string_view ServiceKindName(ServiceKind kind) {
  switch (kind) {
    case ServiceKind::kHttp:
      return "http";
    case ServiceKind::kSsh:
      return "ssh";
    case ServiceKind::kLlm:
      return "llm";
  }
  return "http";
}

absl::StatusOr<ServiceKind> ParseServiceKind(std::string_view name) {
  if (name.empty() || name == "http") return ServiceKind::kHttp;
  if (name == "ssh") return ServiceKind::kSsh;
  if (name == "llm") return ServiceKind::kLlm;
  return base::ApiError(absl::StatusCode::kInvalidArgument, "SERVICE_KIND_INVALID",
                        "a catalog service kind is http, llm or ssh");
}

std::string_view OwnerKindName(OwnerKind kind) { return kind == OwnerKind::kOrg ? "org" : "user"; }

std::vector<std::string> NormalizeScopes(std::string_view space_separated) {
  std::vector<std::string> scopes;
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(space_separated.data(), space_separated.size()),
                      absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    scopes.emplace_back(part.data(), part.size());
  }
  return NormalizeScopes(scopes);
}

std::vector<std::string> NormalizeScopes(const std::vector<std::string>& scopes) {
  std::vector<std::string> out;
  for (const std::string& scope : scopes) {
    if (!scope.empty()) out.push_back(scope);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const std::string& scope : scopes) {
    if (!out.empty()) out += ' ';
    out += scope;
  }
  return out;
}

bool IsValidSlug(std::string_view slug) {
  if (slug.empty() || slug.size() > 63 || slug.front() == '-') return false;
  return std::all_of(slug.begin(), slug.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

}  // namespace aevatar::nyxid
