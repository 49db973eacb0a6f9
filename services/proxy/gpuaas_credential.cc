#include "services/proxy/gpuaas_credential.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/common/base64url.h"

namespace gpuaas::proxy {
namespace {

// A JWS payload claiming our issuer.
bool IsOurJwt(absl::string_view token) {
  const std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  if (parts.size() != 3) {
    return false;
  }
  absl::StatusOr<std::string> payload =
      Base64UrlDecode(std::string_view(parts[1].data(), parts[1].size()));
  if (!payload.ok()) {
    return false;
  }
  const nlohmann::json claims =
      nlohmann::json::parse(*payload, nullptr, /*allow_exceptions=*/false);
  if (!claims.is_object()) {
    return false;
  }
  auto iss = claims.find("iss");
  return iss != claims.end() && iss->is_string() && iss->get<std::string>() == kGpuaasIssuer;
}

}  // namespace

bool IsGpuaasCredential(std::string_view authorization) {
  absl::string_view value =
      absl::StripAsciiWhitespace(absl::string_view(authorization.data(), authorization.size()));
  if (value.size() < 7 || !absl::EqualsIgnoreCase(value.substr(0, 7), "Bearer ")) {
    return false;
  }
  const absl::string_view credential = absl::StripLeadingAsciiWhitespace(value.substr(7));
  return absl::StartsWith(credential, "gak_") || absl::StartsWith(credential, "grt_") ||
         IsOurJwt(credential);
}

}  // namespace gpuaas::proxy
