// Who is calling: the identity a verified access token carries, and the permission checks
// every service applies to it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gpuaas/common/v1/common.pb.h"

namespace gpuaas::authz {

using Role = ::gpuaas::common::v1::Role;

struct Principal {
  std::string user_id;    // JWT sub
  std::string tenant_id;  // the one tenant the token acts for; may be empty for global roles
  Role role = ::gpuaas::common::v1::ROLE_UNSPECIFIED;
  std::string token_id;    // jti
  std::string api_key_id;  // set when the token came from ExchangeApiKey

  // PLATFORM_ADMIN or SERVICE: may act across tenants.
  bool IsGlobal() const;
  bool IsPlatformAdmin() const;
};

// Tenant roles are ordered VIEWER < MEMBER < TENANT_ADMIN; PLATFORM_ADMIN passes every check.
// SERVICE passes checks up to MEMBER (it reads and drives workloads, never manages people).
// `at_least` = ROLE_UNSPECIFIED accepts any real role; a principal whose role is unspecified or
// outside the enum fails every check.
// Error: PERMISSION_DENIED naming the role needed.
absl::Status RequireRole(const Principal& p, Role at_least);

// Only PLATFORM_ADMIN. Error: PERMISSION_DENIED.
absl::Status RequirePlatformAdmin(const Principal& p);

// The caller acts in `tenant_id`, or is global. Another tenant's resource is NOT_FOUND
// ("<what> not found"), so callers cannot learn that it exists.
absl::Status RequireTenant(const Principal& p, std::string_view tenant_id, std::string_view what);

// The enum name ("TENANT_ADMIN"), as tokens carry it; "UNKNOWN" for values outside the enum.
std::string_view RoleName(Role r);

// The inverse of RoleName for the five real roles; nullopt for anything else, including
// "ROLE_UNSPECIFIED", so a token can never carry an unspecified role.
std::optional<Role> RoleFromName(std::string_view name);

}  // namespace gpuaas::authz
