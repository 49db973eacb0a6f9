// Field validators every service shares. Each returns OK or INVALID_ARGUMENT whose message
// starts with the field's path ("tenant.tenant_id: must be 3 to 63 characters"), so a client
// can point at the field. Service-specific rules (a password's length) stay in the service.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace gpuaas::service {

// INVALID_ARGUMENT "<field>: <why>".
absl::Status InvalidField(std::string_view field, std::string_view why);

// Not empty.
absl::Status ValidateRequired(std::string_view field, std::string_view value);

// A name a user chooses that becomes part of ids and URLs (tenant ids, spec names): lowercase
// letters, digits, '-' and the characters in `also_allowed` (spec names allow "."), 3 to 63
// characters, starting with a letter, not ending with '-'.
absl::Status ValidateSlug(std::string_view field, std::string_view value,
                          std::string_view also_allowed = "");

// Free text for people (display names, descriptions): at most 256 bytes of well-formed UTF-8
// without control characters. Empty is fine.
absl::Status ValidateDisplayText(std::string_view field, std::string_view value);

// An idempotency key: optional, at most 128 printable ASCII characters.
absl::Status ValidateRequestId(std::string_view field, std::string_view value);

// An id the server issued ("usr_4f..."): 1 to 64 characters of [a-z0-9_].
absl::Status ValidateServerId(std::string_view field, std::string_view value);

// A node id, as the stock service registers it: a DNS name, 1 to 253 characters of [a-z0-9.-],
// starting and ending with a letter or digit.
absl::Status ValidateNodeId(std::string_view field, std::string_view id);

// >= 0.
absl::Status ValidateNonNegative(std::string_view field, int64_t value);

}  // namespace gpuaas::service
