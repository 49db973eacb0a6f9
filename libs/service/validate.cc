#include "libs/service/validate.h"

#include <algorithm>
#include <string>

namespace gpuaas::service {
namespace {

constexpr size_t kMaxDisplayText = 256;
constexpr size_t kMaxRequestId = 128;
constexpr size_t kMaxServerId = 64;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Well-formed UTF-8 (no overlong or truncated sequences) with no control characters.
bool IsPrintableUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      return false;
    }
    int extra = 0;
    if (c >= 0x80) {
      if ((c >> 5) == 0x6 && c >= 0xc2) {
        extra = 1;
      } else if ((c >> 4) == 0xe) {
        extra = 2;
      } else if ((c >> 3) == 0x1e && c <= 0xf4) {
        extra = 3;
      } else {
        return false;
      }
    }
    if (i + extra >= s.size()) {
      return false;  // truncated sequence
    }
    for (int k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) {
        return false;
      }
    }
    i += static_cast<size_t>(extra) + 1;
  }
  return true;
}

}  // namespace

absl::Status InvalidField(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(std::string(field) + ": " + std::string(why));
}

absl::Status ValidateRequired(std::string_view field, std::string_view value) {
  return value.empty() ? InvalidField(field, "required") : absl::OkStatus();
}

absl::Status ValidateSlug(std::string_view field, std::string_view v,
                          std::string_view also_allowed) {
  if (v.empty()) {
    return InvalidField(field, "required");
  }
  if (v.size() < 3 || v.size() > 63) {
    return InvalidField(field, "must be 3 to 63 characters");
  }
  if (v[0] < 'a' || v[0] > 'z') {
    return InvalidField(field, "must start with a lowercase letter");
  }
  for (char c : v) {
    if (!IsLowerAlnum(c) && c != '-' && also_allowed.find(c) == std::string_view::npos) {
      std::string allowed = "only lowercase letters, digits, '-'";
      for (char a : also_allowed) {
        allowed += std::string(", '") + a + "'";
      }
      return InvalidField(field, allowed + " are allowed");
    }
  }
  if (v.back() == '-') {
    return InvalidField(field, "must not end with '-'");
  }
  return absl::OkStatus();
}

absl::Status ValidateDisplayText(std::string_view field, std::string_view v) {
  if (v.size() > kMaxDisplayText) {
    return InvalidField(field, "must be at most 256 bytes");
  }
  if (!IsPrintableUtf8(v)) {
    return InvalidField(field, "must be printable UTF-8");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequestId(std::string_view field, std::string_view v) {
  if (v.size() > kMaxRequestId) {
    return InvalidField(field, "must be at most 128 characters");
  }
  for (char c : v) {
    if (c < 0x21 || c > 0x7e) {
      return InvalidField(field, "must be printable ASCII");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateServerId(std::string_view field, std::string_view v) {
  if (v.empty()) {
    return InvalidField(field, "required");
  }
  if (v.size() > kMaxServerId) {
    return InvalidField(field, "must be at most 64 characters");
  }
  for (char c : v) {
    if (!IsLowerAlnum(c) && c != '_') {
      return InvalidField(field, "malformed id");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateNodeId(std::string_view field, std::string_view id) {
  if (id.empty() || id.size() > 253 || !IsLowerAlnum(id.front()) || !IsLowerAlnum(id.back()) ||
      !std::all_of(id.begin(), id.end(),
                   [](char c) { return IsLowerAlnum(c) || c == '-' || c == '.'; })) {
    return InvalidField(field, "a DNS name: 1 to 253 characters of [a-z0-9.-]");
  }
  return absl::OkStatus();
}

absl::Status ValidateNonNegative(std::string_view field, int64_t value) {
  return value < 0 ? InvalidField(field, "must be >= 0") : absl::OkStatus();
}

}  // namespace gpuaas::service
