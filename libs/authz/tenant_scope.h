// Which tenant's rows a caller reaches: tenant roles their token's tenant only, global roles
// (PLATFORM_ADMIN, SERVICE) every tenant, naming one explicitly where a resource is made. Every
// service that keeps tenant-owned rows filters its reads with TenantScope and picks the owner
// of a new row with TargetTenant.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "libs/authz/principal.h"

namespace gpuaas::authz {

// The tenant filter of reads for `p`: its tenant, or "" (every tenant) for global roles.
// Error: PERMISSION_DENIED for a tenant role without a tenant (no valid token has one), so an
// empty filter never reaches a tenant role.
absl::StatusOr<std::string> TenantScope(const Principal& p);

// The tenant filter of instance listings and watches, which the access proxy also reads to
// route requests: a reading role gets TenantScope(p); the access proxy (Power::kAccessCalls,
// no read power) every tenant's instances, and nothing else of any tenant. Error:
// PERMISSION_DENIED saying `what` needs a reading role.
absl::StatusOr<std::string> InstanceListScope(const Principal& p, std::string_view what);

// The tenant a new resource belongs to: `requested` (a request's tenant_id, already validated
// as a tenant id by the caller) or else the token's tenant. Errors: INVALID_ARGUMENT
// "tenant_id: ..." for a global role with neither, NOT_FOUND "tenant not found" when a tenant
// role names another tenant.
absl::StatusOr<std::string> TargetTenant(const Principal& p, std::string_view requested);

}  // namespace gpuaas::authz
