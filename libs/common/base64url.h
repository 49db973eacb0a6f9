// Base64url without padding (RFC 4648 §5): JWS compact serialization, secrets shown once,
// password hashes and page tokens.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas {

std::string Base64UrlEncode(std::string_view data);

// Strict (INVALID_ARGUMENT for padding, whitespace, foreign characters or non-zero trailing
// bits), so each byte string has exactly one accepted encoding.
absl::StatusOr<std::string> Base64UrlDecode(std::string_view text);

}  // namespace gpuaas
