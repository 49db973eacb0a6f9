// Compact JWS signing and verification for our access tokens.
#include "libs/authz/jwt.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "libs/common/base64url.h"
#include "libs/common/status_macros.h"

namespace gpuaas::authz {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kAlg = "EdDSA";
constexpr std::string_view kTyp = "JWT";
// Far above any token we issue; bounds the work an unauthenticated caller can make us do.
constexpr size_t kMaxTokenSize = 8192;

absl::Status Reject(const char* reason) { return absl::UnauthenticatedError(reason); }

// Invalid UTF-8 in a claim is replaced rather than thrown on; claims come from our own code.
std::string Dump(const OrderedJson& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<Json> ParseObject(std::string_view segment) {
  absl::StatusOr<std::string> raw = Base64UrlDecode(segment);
  if (!raw.ok()) {
    return std::nullopt;
  }
  Json j = Json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {  // also covers the "discarded" value of a parse error
    return std::nullopt;
  }
  return j;
}

// A string member: nullopt when absent, an error when present with another type.
absl::StatusOr<std::optional<std::string>> OptionalString(const Json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end()) {
    return std::optional<std::string>();
  }
  if (!it->is_string()) {
    return Reject("invalid token claims");
  }
  return std::optional<std::string>(it->get<std::string>());
}

absl::StatusOr<std::string> RequiredString(const Json& obj, const char* name) {
  GPUAAS_ASSIGN_OR_RETURN(std::optional<std::string> v, OptionalString(obj, name));
  if (!v.has_value() || v->empty()) {
    return Reject("invalid token claims");
  }
  return *std::move(v);
}

// NumericDate (RFC 7519 §2), restricted to whole seconds that fit in int64.
absl::StatusOr<absl::Time> RequiredTime(const Json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_number_integer()) {
    return Reject("invalid token claims");
  }
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Reject("invalid token claims");
  }
  return absl::FromUnixSeconds(it->get<int64_t>());
}

absl::StatusOr<std::string> CheckHeader(std::string_view segment) {
  std::optional<Json> header = ParseObject(segment);
  if (!header.has_value()) {
    return Reject("malformed token");
  }
  auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string() || alg->get<std::string>() != kAlg) {
    return Reject("unsupported token algorithm");
  }
  auto typ = header->find("typ");
  if (typ != header->end() && (!typ->is_string() || typ->get<std::string>() != kTyp)) {
    return Reject("malformed token");
  }
  // RFC 7515 §4.1.11: extensions we do not understand must make the token invalid.
  if (header->contains("crit")) {
    return Reject("malformed token");
  }
  auto kid = header->find("kid");
  if (kid == header->end() || !kid->is_string() || kid->get<std::string>().empty()) {
    return Reject("malformed token");
  }
  return kid->get<std::string>();
}

absl::StatusOr<Claims> ParseClaims(const Json& payload, std::string kid) {
  Claims c;
  c.kid = std::move(kid);
  GPUAAS_ASSIGN_OR_RETURN(c.iss, RequiredString(payload, "iss"));
  GPUAAS_ASSIGN_OR_RETURN(c.sub, RequiredString(payload, "sub"));
  GPUAAS_ASSIGN_OR_RETURN(c.iat, RequiredTime(payload, "iat"));
  GPUAAS_ASSIGN_OR_RETURN(c.exp, RequiredTime(payload, "exp"));
  GPUAAS_ASSIGN_OR_RETURN(std::string role, RequiredString(payload, "role"));
  std::optional<Role> parsed_role = RoleFromName(role);
  if (!parsed_role.has_value()) {
    return Reject("invalid token claims");
  }
  c.role = *parsed_role;
  GPUAAS_ASSIGN_OR_RETURN(std::optional<std::string> tenant, OptionalString(payload, "tenant"));
  GPUAAS_ASSIGN_OR_RETURN(std::optional<std::string> jti, OptionalString(payload, "jti"));
  GPUAAS_ASSIGN_OR_RETURN(std::optional<std::string> akid, OptionalString(payload, "akid"));
  GPUAAS_ASSIGN_OR_RETURN(std::optional<std::string> node, OptionalString(payload, "node"));
  // A list of audiences (RFC 7519 allows one) is refused: ours name exactly one.
  GPUAAS_ASSIGN_OR_RETURN(std::optional<std::string> aud, OptionalString(payload, "aud"));
  GPUAAS_ASSIGN_OR_RETURN(std::optional<std::string> purpose, OptionalString(payload, "purpose"));
  c.tenant = tenant.value_or("");
  c.jti = jti.value_or("");
  c.api_key_id = akid.value_or("");
  c.node = node.value_or("");
  c.aud = aud.value_or("");
  c.purpose = purpose.value_or("");
  // A tenant role means nothing without the tenant it is held in, a node agent nothing without
  // its node; a machine role acts in no tenant.
  if (IsTenantRole(c.role) && c.tenant.empty()) {
    return Reject("invalid token claims");
  }
  if ((c.role == ::gpuaas::common::v1::ROLE_NODE_AGENT) != !c.node.empty() ||
      (IsMachineRole(c.role) && !c.tenant.empty())) {
    return Reject("invalid token claims");
  }
  // A call to a node is named by both: its audience and what it may do there.
  if (c.aud.empty() != c.purpose.empty() || (!c.aud.empty() && IsMachineRole(c.role))) {
    return Reject("invalid token claims");
  }
  return c;
}

}  // namespace

std::string SignJwt(const Claims& claims, const Ed25519Key& key) {
  OrderedJson header = {{"alg", kAlg}, {"typ", kTyp}, {"kid", claims.kid}};
  OrderedJson payload = {{"iss", claims.iss}, {"sub", claims.sub}};
  if (!claims.tenant.empty()) {
    payload["tenant"] = claims.tenant;
  }
  payload["role"] = RoleName(claims.role);
  payload["iat"] = absl::ToUnixSeconds(claims.iat);
  payload["exp"] = absl::ToUnixSeconds(claims.exp);
  if (!claims.jti.empty()) {
    payload["jti"] = claims.jti;
  }
  if (!claims.api_key_id.empty()) {
    payload["akid"] = claims.api_key_id;
  }
  if (!claims.node.empty()) {
    payload["node"] = claims.node;
  }
  if (!claims.aud.empty()) {
    payload["aud"] = claims.aud;
  }
  if (!claims.purpose.empty()) {
    payload["purpose"] = claims.purpose;
  }
  std::string signing_input = Base64UrlEncode(Dump(header)) + "." + Base64UrlEncode(Dump(payload));
  std::string signature = key.Sign(signing_input);
  return signing_input + "." + Base64UrlEncode(signature);
}

absl::StatusOr<Claims> VerifyJwt(std::string_view token, const KeyLookup& keys,
                                 std::string_view issuer, absl::Time now, absl::Duration leeway,
                                 std::string_view audience) {
  if (token.empty() || token.size() > kMaxTokenSize) {
    return Reject("malformed token");
  }
  const size_t dot1 = token.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Reject("malformed token");
  }
  const std::string_view header_b64 = token.substr(0, dot1);
  const std::string_view payload_b64 = token.substr(dot1 + 1, dot2 - dot1 - 1);
  const std::string_view signature_b64 = token.substr(dot2 + 1);

  // nlohmann's accessors throw on type confusion; none should, but nothing may escape.
  try {
    GPUAAS_ASSIGN_OR_RETURN(std::string kid, CheckHeader(header_b64));
    const Ed25519Key* key = keys.Find(kid);
    if (key == nullptr) {
      return Reject("unknown signing key");
    }
    absl::StatusOr<std::string> signature = Base64UrlDecode(signature_b64);
    if (!signature.ok()) {
      return Reject("malformed token");
    }
    // The payload is parsed only once the signature proves we wrote it.
    if (!key->Verify(token.substr(0, dot2), *signature)) {
      return Reject("invalid token signature");
    }
    std::optional<Json> payload = ParseObject(payload_b64);
    if (!payload.has_value()) {
      return Reject("malformed token");
    }
    GPUAAS_ASSIGN_OR_RETURN(Claims claims, ParseClaims(*payload, std::move(kid)));
    if (claims.iss != issuer) {
      return Reject("wrong token issuer");
    }
    // Both ways: a node-bound token is refused by every service, and a service's own token by
    // every agent.
    if (claims.aud != audience) {
      return Reject("token not meant for this server");
    }
    if (now - leeway >= claims.exp) {
      return Reject("token expired");
    }
    if (claims.iat > now + leeway) {
      return Reject("token not yet valid");
    }
    return claims;
  } catch (const Json::exception&) {
    return Reject("malformed token");
  }
}

}  // namespace gpuaas::authz
