#include "services/proxy/access_cookie.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/common/base64url.h"

namespace gpuaas::proxy {
namespace {

absl::Status Unauthenticated() { return absl::UnauthenticatedError("invalid access cookie"); }

}  // namespace

std::string AccessCookieSigner::Mac(std::string_view payload) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), mac, &mac_len);
  return std::string(reinterpret_cast<const char*>(mac), mac_len);
}

absl::StatusOr<std::string> AccessCookieSigner::Sign(const authz::WorkloadGrant& grant,
                                                     absl::Time expiry) const {
  for (const std::string* field : {&grant.instance_id, &grant.tenant_id, &grant.user_id}) {
    if (field->find('|') != std::string::npos) {
      return absl::InvalidArgumentError("a cookie field holds '|'");
    }
  }
  const std::string payload =
      absl::StrCat("v1|", grant.instance_id, "|", grant.port, "|", grant.tenant_id, "|",
                   grant.user_id, "|", absl::ToUnixSeconds(expiry));
  return absl::StrCat(Base64UrlEncode(payload), ".", Base64UrlEncode(Mac(payload)));
}

absl::StatusOr<authz::WorkloadGrant> AccessCookieSigner::Verify(std::string_view value,
                                                                absl::Time now) const {
  const size_t dot = value.find('.');
  if (dot == std::string_view::npos) {
    return Unauthenticated();
  }
  absl::StatusOr<std::string> payload = Base64UrlDecode(value.substr(0, dot));
  absl::StatusOr<std::string> mac = Base64UrlDecode(value.substr(dot + 1));
  if (!payload.ok() || !mac.ok()) {
    return Unauthenticated();
  }
  const std::string want = Mac(*payload);
  // Constant time, so the MAC cannot be found byte by byte.
  if (mac->size() != want.size() || CRYPTO_memcmp(mac->data(), want.data(), want.size()) != 0) {
    return Unauthenticated();
  }
  std::vector<absl::string_view> parts = absl::StrSplit(*payload, '|');
  int64_t expiry = 0;
  authz::WorkloadGrant grant;
  if (parts.size() != 6 || parts[0] != "v1" || !absl::SimpleAtoi(parts[2], &grant.port) ||
      !absl::SimpleAtoi(parts[5], &expiry)) {
    return Unauthenticated();
  }
  if (now >= absl::FromUnixSeconds(expiry)) {
    return Unauthenticated();
  }
  grant.instance_id = std::string(parts[1]);
  grant.tenant_id = std::string(parts[3]);
  grant.user_id = std::string(parts[4]);
  return grant;
}

std::string_view FindCookie(std::string_view cookie_header, std::string_view name) {
  const absl::string_view want(name.data(), name.size());
  for (absl::string_view pair :
       absl::StrSplit(absl::string_view(cookie_header.data(), cookie_header.size()), ';')) {
    pair = absl::StripAsciiWhitespace(pair);
    if (absl::ConsumePrefix(&pair, want) && absl::ConsumePrefix(&pair, "=")) {
      return std::string_view(pair.data(), pair.size());
    }
  }
  return "";
}

std::string WithoutCookie(std::string_view cookie_header, std::string_view name) {
  const absl::string_view want(name.data(), name.size());
  std::vector<absl::string_view> kept;
  for (absl::string_view pair :
       absl::StrSplit(absl::string_view(cookie_header.data(), cookie_header.size()), ';')) {
    pair = absl::StripAsciiWhitespace(pair);
    absl::string_view rest = pair;
    if (pair.empty() || (absl::ConsumePrefix(&rest, want) && absl::StartsWith(rest, "="))) {
      continue;
    }
    kept.push_back(pair);
  }
  return absl::StrJoin(kept, "; ");
}

}  // namespace gpuaas::proxy
