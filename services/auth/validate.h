// Input rules of the auth API that other services do not share; the shared ones (slugs,
// display text, request ids, server ids) are in libs/service/validate.h. Each returns
// INVALID_ARGUMENT naming the offending field ("user.user_name: ...").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gpuaas/auth/v1/auth.pb.h"

namespace gpuaas::auth {

namespace pb = ::gpuaas::auth::v1;

// Lowercase letters, digits, '.', '_' and '-', 3 to 63 characters.
absl::Status ValidateUserName(std::string_view field, std::string_view value);
// 8 to 1024 bytes.
absl::Status ValidatePassword(std::string_view field, std::string_view value);
// Every limit >= 0.
absl::Status ValidateQuota(std::string_view field, const pb::Quota& quota);
// TENANT_ADMIN, MEMBER or VIEWER: the roles a membership carries.
absl::Status ValidateTenantRole(std::string_view field, common::v1::Role role);
// PLATFORM_ADMIN, SERVICE or unspecified: the roles a user holds globally.
absl::Status ValidateGlobalRole(std::string_view field, common::v1::Role role);

// Refresh tokens and API-key secrets read "<id>.<secret>": the id finds the row, the secret
// proves possession. nullopt when malformed.
struct IdSecret {
  std::string id;
  std::string secret;
};
std::optional<IdSecret> ParseIdSecret(std::string_view credential);

}  // namespace gpuaas::auth
