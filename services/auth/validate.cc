#include "services/auth/validate.h"

#include <string>

#include "libs/authz/roles.h"
#include "libs/service/validate.h"

namespace gpuaas::auth {
namespace {

using service::InvalidField;

constexpr size_t kMinPassword = 8;
constexpr size_t kMaxPassword = 1024;
constexpr size_t kMaxCredentialId = 64;
constexpr size_t kMaxCredentialSecret = 128;

bool IsUserNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

}  // namespace

absl::Status ValidateUserName(std::string_view field, std::string_view v) {
  if (v.empty()) return InvalidField(field, "required");
  if (v.size() < 3 || v.size() > 63) return InvalidField(field, "must be 3 to 63 characters");
  for (char c : v) {
    if (!IsUserNameChar(c)) {
      return InvalidField(field, "only lowercase letters, digits, '.', '_' and '-' are allowed");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePassword(std::string_view field, std::string_view v) {
  if (v.size() < kMinPassword) return InvalidField(field, "must be at least 8 characters");
  if (v.size() > kMaxPassword) return InvalidField(field, "must be at most 1024 bytes");
  return absl::OkStatus();
}

absl::Status ValidateQuota(std::string_view field, const pb::Quota& q) {
  const std::string f(field);
  if (absl::Status s = service::ValidateNonNegative(f + ".max_gpus", q.max_gpus()); !s.ok()) {
    return s;
  }
  if (absl::Status s = service::ValidateNonNegative(f + ".max_instances", q.max_instances());
      !s.ok()) {
    return s;
  }
  return service::ValidateNonNegative(f + ".max_storage_bytes", q.max_storage_bytes());
}

absl::Status ValidateTenantRole(std::string_view field, common::v1::Role role) {
  if (authz::IsTenantRole(role)) return absl::OkStatus();
  if (role == common::v1::ROLE_UNSPECIFIED) {
    return InvalidField(field, "required: ROLE_TENANT_ADMIN, ROLE_MEMBER or ROLE_VIEWER");
  }
  return InvalidField(field, "must be ROLE_TENANT_ADMIN, ROLE_MEMBER or ROLE_VIEWER");
}

absl::Status ValidateGlobalRole(std::string_view field, common::v1::Role role) {
  if (role == common::v1::ROLE_UNSPECIFIED || authz::IsGlobalRole(role)) {
    return absl::OkStatus();
  }
  return InvalidField(field, "must be ROLE_PLATFORM_ADMIN, ROLE_SERVICE or unspecified");
}

std::optional<IdSecret> ParseIdSecret(std::string_view credential) {
  const size_t dot = credential.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > kMaxCredentialId ||
      dot + 1 == credential.size() || credential.size() - dot - 1 > kMaxCredentialSecret) {
    return std::nullopt;
  }
  return IdSecret{std::string(credential.substr(0, dot)), std::string(credential.substr(dot + 1))};
}

}  // namespace gpuaas::auth
