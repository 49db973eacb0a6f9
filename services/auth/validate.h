// Input checks for the auth API. Each returns INVALID_ARGUMENT naming the offending field
// ("tenant.tenant_id: ...") so clients can point at it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "services/auth/repository.h"

namespace gpuaas::auth {

// Lowercase letters, digits and '-', 3 to 63 characters, starting with a letter.
absl::Status ValidateTenantId(std::string_view field, std::string_view value);
// Lowercase letters, digits, '.', '_' and '-', 3 to 63 characters.
absl::Status ValidateUserName(std::string_view field, std::string_view value);
// At most 256 bytes of valid UTF-8 without control characters.
absl::Status ValidateDisplayName(std::string_view field, std::string_view value);
// 8 to 1024 bytes.
absl::Status ValidatePassword(std::string_view field, std::string_view value);
// Every limit >= 0.
absl::Status ValidateQuota(std::string_view field, const pb::Quota& quota);
// TENANT_ADMIN, MEMBER or VIEWER: the roles a membership or API key may carry.
absl::Status ValidateTenantRole(std::string_view field, common::v1::Role role);
// Optional; at most 128 printable ASCII characters.
absl::Status ValidateRequestId(std::string_view field, std::string_view value);
// Ids we issued ("usr_..."): at most 64 characters of [a-z0-9_]; empty is an error.
absl::Status ValidateId(std::string_view field, std::string_view value);

// Refresh tokens and API-key secrets read "<id>.<secret>": the id finds the row, the secret
// proves possession. nullopt when malformed.
struct IdSecret {
  std::string id;
  std::string secret;
};
std::optional<IdSecret> ParseIdSecret(std::string_view credential);

// page_size: 0 means 50, at most 500, negative is invalid. page_token: opaque, ours.
absl::StatusOr<PageQuery> ParsePage(int32_t page_size, std::string_view page_token);
// The token for the page after the one ending at `last_key`; empty when the page was short.
std::string NextPageToken(const PageQuery& page, size_t returned, const std::string& last_key);

}  // namespace gpuaas::auth
