// Ed25519-signed JSON Web Tokens (alg EdDSA, RFC 8037) through OpenSSL EVP.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/authz/principal.h"

namespace gpuaas::authz {

struct Claims {
  std::string kid;  // header: which key signed it
  std::string iss;
  std::string sub;  // user id
  std::string tenant;
  Role role = ::gpuaas::common::v1::ROLE_UNSPECIFIED;
  absl::Time iat;
  absl::Time exp;
  std::string jti;
  std::string api_key_id;  // optional claim "akid"
  std::string node;        // claim "node": required for NODE_AGENT, refused for other roles
  // Claims "aud" and "purpose", both or neither: a token minted for one call to one node's
  // agent (node_calls.h) names that node's audience and the call. Refused for machine roles.
  std::string aud;
  std::string purpose;
};

// An Ed25519 key pair (or only a public key). Move-only; wraps EVP_PKEY.
class Ed25519Key final {
 public:
  static Ed25519Key Generate();
  // From the 32-byte raw private key (the form the auth service stores).
  static absl::StatusOr<Ed25519Key> FromPrivateRaw(std::string_view raw32);
  static absl::StatusOr<Ed25519Key> FromPublicRaw(std::string_view raw32);

  Ed25519Key(Ed25519Key&&) noexcept;
  Ed25519Key& operator=(Ed25519Key&&) noexcept;
  ~Ed25519Key();

  std::string PrivateRaw() const;  // empty for a public-only key
  std::string PublicRaw() const;
  bool HasPrivate() const;

  // 64-byte signature. Requires HasPrivate(); aborts otherwise (a programming error).
  std::string Sign(std::string_view data) const;
  bool Verify(std::string_view data, std::string_view signature) const;

 private:
  struct Impl;
  explicit Ed25519Key(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// header.payload.signature with {"alg":"EdDSA","typ":"JWT","kid":claims.kid}.
std::string SignJwt(const Claims& claims, const Ed25519Key& key);

// Looks a key up by kid; returns nullptr when unknown.
class KeyLookup {
 public:
  virtual ~KeyLookup() = default;
  virtual const Ed25519Key* Find(std::string_view kid) const = 0;
};

// Parses and verifies a compact JWT: structure, alg == EdDSA (so "none" and HS256 are refused),
// a known kid, the signature, iss == `issuer`, aud == `audience` (a token without "aud" only
// where `audience` is empty: the platform's APIs; a node-bound one only at its node's agent),
// and iat <= now + leeway < exp.
// Claims sub, iat, exp and role (a real role's name) are required; tenant is required for a
// tenant role and refused for a machine role; node is required for NODE_AGENT and refused
// otherwise; tokens over 8 KiB are refused unread. The header's typ, if present, must
// be "JWT" and a crit header is refused (RFC 7515 §4.1.11).
// Every failure is UNAUTHENTICATED with a short reason; nothing of the token is echoed.
absl::StatusOr<Claims> VerifyJwt(std::string_view token, const KeyLookup& keys,
                                 std::string_view issuer, absl::Time now,
                                 absl::Duration leeway = absl::Seconds(30),
                                 std::string_view audience = "");

// The JWKS document for `keys` (kty OKP, crv Ed25519, alg EdDSA, use sig), and its parser.
struct PublicJwk {
  std::string kid;
  std::string public_raw;  // 32 bytes
};
// The parser skips keys of other types, curves, algs or uses (RFC 7517 §5) and returns
// INVALID_ARGUMENT for a malformed document, an Ed25519 key without kid or with a bad x, or a
// repeated kid.
std::string JwksJson(const std::vector<PublicJwk>& keys);
absl::StatusOr<std::vector<PublicJwk>> ParseJwksJson(std::string_view json);

}  // namespace gpuaas::authz
