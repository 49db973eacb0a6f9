// Role names as users type them (`tenant-admin`, `viewer` ...) and as gpuaasctl prints them.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpuaas/common/v1/common.pb.h"

namespace gpuaas::ctl {

using Role = ::gpuaas::common::v1::Role;

// Case-insensitive; `-` and `_` are interchangeable and a `ROLE_` prefix is optional, so
// `tenant-admin`, `TENANT_ADMIN` and `ROLE_TENANT_ADMIN` (the enum name, as `-o json` prints
// it) all work. Error: INVALID_ARGUMENT listing the valid names.
absl::StatusOr<Role> ParseRole(std::string_view name);

// `tenant-admin`, `member` ...; "" for ROLE_UNSPECIFIED, the number for unknown values.
std::string RoleDisplayName(Role role);

}  // namespace gpuaas::ctl
