#include "services/auth/validate.h"

#include "absl/strings/str_cat.h"
#include "libs/common/base64url.h"

namespace gpuaas::auth {
namespace {

constexpr size_t kMaxDisplayName = 256;
constexpr int kDefaultPageSize = 50;
constexpr int kMaxPageSize = 500;
constexpr std::string_view kPageTokenPrefix = "p1:";

absl::Status Invalid(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(std::string(field) + ": " + std::string(why));
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// True when `s` is well-formed UTF-8 with no control characters.
bool IsPrintableUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      extra = 0;
    } else if ((c >> 5) == 0x6) {
      extra = 1;
    } else if ((c >> 4) == 0xe) {
      extra = 2;
    } else if ((c >> 3) == 0x1e) {
      extra = 3;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    }
    i += static_cast<size_t>(extra) + 1;
  }
  return true;
}

}  // namespace

absl::Status ValidateTenantId(std::string_view field, std::string_view v) {
  if (v.empty()) return Invalid(field, "required");
  if (v.size() < 3 || v.size() > 63) return Invalid(field, "must be 3 to 63 characters");
  if (v[0] < 'a' || v[0] > 'z') return Invalid(field, "must start with a lowercase letter");
  for (char c : v) {
    if (!IsLowerAlnum(c) && c != '-') {
      return Invalid(field, "only lowercase letters, digits and '-' are allowed");
    }
  }
  if (v.back() == '-') return Invalid(field, "must not end with '-'");
  return absl::OkStatus();
}

absl::Status ValidateUserName(std::string_view field, std::string_view v) {
  if (v.empty()) return Invalid(field, "required");
  if (v.size() < 3 || v.size() > 63) return Invalid(field, "must be 3 to 63 characters");
  for (char c : v) {
    if (!IsLowerAlnum(c) && c != '-' && c != '_' && c != '.') {
      return Invalid(field, "only lowercase letters, digits, '.', '_' and '-' are allowed");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateDisplayName(std::string_view field, std::string_view v) {
  if (v.size() > kMaxDisplayName) return Invalid(field, "must be at most 256 bytes");
  if (!IsPrintableUtf8(v)) return Invalid(field, "must be printable UTF-8");
  return absl::OkStatus();
}

absl::Status ValidatePassword(std::string_view field, std::string_view v) {
  if (v.size() < 8) return Invalid(field, "must be at least 8 characters");
  if (v.size() > 1024) return Invalid(field, "must be at most 1024 bytes");
  return absl::OkStatus();
}

absl::Status ValidateQuota(std::string_view field, const pb::Quota& q) {
  if (q.max_gpus() < 0) return Invalid(std::string(field) + ".max_gpus", "must be >= 0");
  if (q.max_instances() < 0) return Invalid(std::string(field) + ".max_instances", "must be >= 0");
  if (q.max_storage_bytes() < 0) {
    return Invalid(std::string(field) + ".max_storage_bytes", "must be >= 0");
  }
  return absl::OkStatus();
}

absl::Status ValidateTenantRole(std::string_view field, common::v1::Role role) {
  switch (role) {
    case common::v1::ROLE_VIEWER:
    case common::v1::ROLE_MEMBER:
    case common::v1::ROLE_TENANT_ADMIN:
      return absl::OkStatus();
    case common::v1::ROLE_UNSPECIFIED:
      return Invalid(field, "required: TENANT_ADMIN, MEMBER or VIEWER");
    default:
      return Invalid(field, "must be TENANT_ADMIN, MEMBER or VIEWER");
  }
}

absl::Status ValidateRequestId(std::string_view field, std::string_view v) {
  if (v.size() > 128) return Invalid(field, "must be at most 128 characters");
  for (char c : v) {
    if (c < 0x21 || c > 0x7e) return Invalid(field, "must be printable ASCII");
  }
  return absl::OkStatus();
}

absl::Status ValidateId(std::string_view field, std::string_view v) {
  if (v.empty()) return Invalid(field, "required");
  if (v.size() > 64) return Invalid(field, "must be at most 64 characters");
  for (char c : v) {
    if (!IsLowerAlnum(c) && c != '_') return Invalid(field, "malformed id");
  }
  return absl::OkStatus();
}

std::optional<IdSecret> ParseIdSecret(std::string_view credential) {
  size_t dot = credential.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 64 || dot + 1 == credential.size() ||
      credential.size() - dot - 1 > 128) {
    return std::nullopt;
  }
  return IdSecret{std::string(credential.substr(0, dot)), std::string(credential.substr(dot + 1))};
}

absl::StatusOr<PageQuery> ParsePage(int32_t page_size, std::string_view page_token) {
  if (page_size < 0) return Invalid("page_size", "must be >= 0");
  PageQuery page;
  page.limit = page_size == 0 ? kDefaultPageSize : std::min(page_size, kMaxPageSize);
  if (page_token.empty()) return page;
  absl::StatusOr<std::string> decoded = Base64UrlDecode(page_token);
  if (!decoded.ok() || decoded->rfind(kPageTokenPrefix, 0) != 0) {
    return Invalid("page_token", "invalid");
  }
  page.after = decoded->substr(kPageTokenPrefix.size());
  return page;
}

std::string NextPageToken(const PageQuery& page, size_t returned, const std::string& last_key) {
  if (returned < static_cast<size_t>(page.limit)) return "";
  return Base64UrlEncode(std::string(kPageTokenPrefix) + last_key);
}

}  // namespace gpuaas::auth
