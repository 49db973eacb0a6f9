// Who may reach an instance's workload through the access proxy (services/proxy). Two kinds of
// callers reach it: a user or service with an access token (a Principal), and a browser holding
// the proxy's cookie from a redeemed one-time link (a WorkloadGrant, scoped to one instance and
// port). Both decisions are made here and nowhere else.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "libs/authz/principal.h"

namespace gpuaas::authz {

// What a redeemed one-time link grants (instance.v1.AccessGrant): one port of one instance of
// one tenant, for the user who asked for the link.
struct WorkloadGrant {
  std::string instance_id;
  int32_t port = 0;
  std::string tenant_id;
  std::string user_id;
};

// A token's caller: the instance's tenant (else NOT_FOUND "instance not found"), or a global
// role; reaching a workload is using the instance, so it needs Power::kUse (else
// PERMISSION_DENIED): a VIEWER may read the instance but not open it.
absl::Status AuthorizeWorkloadAccess(const Principal& p, std::string_view instance_tenant_id);

// A cookie's grant: only its own instance, port and tenant (else NOT_FOUND, the same answer as
// for an instance that does not exist). The role was checked when the link was made
// (GetInstanceAccess needs MEMBER).
absl::Status AuthorizeWorkloadAccess(const WorkloadGrant& grant, std::string_view instance_id,
                                     int32_t port, std::string_view instance_tenant_id);

}  // namespace gpuaas::authz
