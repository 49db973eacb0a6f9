// JSON Web Key Sets for Ed25519 keys (RFC 7517, with the OKP key type of RFC 8037).
#include <nlohmann/json.hpp>
#include <set>

#include "libs/authz/jwt.h"
#include "libs/common/base64url.h"

namespace gpuaas::authz {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError("malformed JWKS: " + std::string(why));
}

// An optional string member must be a string equal to `want` when present.
bool AbsentOr(const Json& jwk, const char* name, std::string_view want) {
  auto it = jwk.find(name);
  return it == jwk.end() || (it->is_string() && it->get<std::string>() == want);
}

bool Equals(const Json& jwk, const char* name, std::string_view want) {
  auto it = jwk.find(name);
  return it != jwk.end() && it->is_string() && it->get<std::string>() == want;
}

}  // namespace

std::string JwksJson(const std::vector<PublicJwk>& keys) {
  OrderedJson list = OrderedJson::array();
  for (const PublicJwk& k : keys) {
    list.push_back({{"kty", "OKP"},
                    {"crv", "Ed25519"},
                    {"x", Base64UrlEncode(k.public_raw)},
                    {"kid", k.kid},
                    {"alg", "EdDSA"},
                    {"use", "sig"}});
  }
  OrderedJson doc = {{"keys", std::move(list)}};
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::StatusOr<std::vector<PublicJwk>> ParseJwksJson(std::string_view json) {
  try {
    Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) {
      return Malformed("not a JSON object");
    }
    auto keys = doc.find("keys");
    if (keys == doc.end() || !keys->is_array()) {
      return Malformed("no \"keys\" array");
    }
    std::vector<PublicJwk> out;
    std::set<std::string> kids;
    for (const Json& jwk : *keys) {
      if (!jwk.is_object()) {
        return Malformed("key is not an object");
      }
      // RFC 7517 §5: keys of types we do not understand are skipped, not fatal, so the auth
      // service can publish other key types later without breaking older verifiers.
      if (!Equals(jwk, "kty", "OKP") || !Equals(jwk, "crv", "Ed25519") ||
          !AbsentOr(jwk, "alg", "EdDSA") || !AbsentOr(jwk, "use", "sig")) {
        continue;
      }
      auto kid = jwk.find("kid");
      auto x = jwk.find("x");
      if (kid == jwk.end() || !kid->is_string() || kid->get<std::string>().empty()) {
        return Malformed("key without kid");
      }
      if (x == jwk.end() || !x->is_string()) {
        return Malformed("key without x");
      }
      absl::StatusOr<std::string> raw = Base64UrlDecode(x->get<std::string>());
      if (!raw.ok() || raw->size() != 32) {
        return Malformed("bad Ed25519 public key");
      }
      if (!kids.insert(kid->get<std::string>()).second) {
        return Malformed("duplicate kid");
      }
      out.push_back(PublicJwk{.kid = kid->get<std::string>(), .public_raw = *std::move(raw)});
    }
    return out;
  } catch (const Json::exception&) {
    return Malformed("unexpected structure");
  }
}

}  // namespace gpuaas::authz
