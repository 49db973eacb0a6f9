// Which tenant's rows a caller reaches: tenant roles their token's tenant only, global roles
// (PLATFORM_ADMIN, SERVICE) every tenant, naming one explicitly where a resource is made.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libs/authz/principal.h"

namespace gpuaas::storage {

// The `tenant` filter of repository reads for `p`: its tenant, or "" (every tenant) for global
// roles. Error: PERMISSION_DENIED for a tenant role without a tenant (no valid token has one),
// so an empty filter never reaches a tenant role.
absl::StatusOr<std::string> ReadScope(const authz::Principal& p);

// The tenant a new resource belongs to: `requested` (a request's tenant_id) or else the token's
// tenant. Errors: INVALID_ARGUMENT "tenant_id: ..." for a global role with neither (or a
// malformed tenant id), NOT_FOUND "tenant not found" when a tenant role names another tenant.
absl::StatusOr<std::string> TargetTenant(const authz::Principal& p, const std::string& requested);

}  // namespace gpuaas::storage
