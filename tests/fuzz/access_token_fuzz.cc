// Access tokens (Ed25519 JWTs, libs/authz/jwt.h) as anyone on the internet presents them to the
// gateway, the S3 endpoint and every service: no crash, no UB, and a token verifies only as one
// that the key signed, unexpired, with the claims its role requires.
//
// Input: the compact token. The key is one fixed Ed25519 key (private: 32 bytes of 0x01, kid
// "fuzz-key"), so the seeds are real signed tokens and the mutations start from them.
#include "libs/authz/jwt.h"
#include "libs/authz/roles.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using ::gpuaas::authz::Ed25519Key;

class FixedKey final : public gpuaas::authz::KeyLookup {
 public:
  const Ed25519Key* Find(std::string_view kid) const override {
    static const Ed25519Key* key = [] {
      auto k = Ed25519Key::FromPrivateRaw(std::string(32, '\x01'));
      if (!k.ok()) {
        gpuaas::fuzz::Fail("no key");
      }
      return new Ed25519Key(*std::move(k));
    }();
    return kid == "fuzz-key" ? key : nullptr;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::gpuaas::fuzz::Fail;
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  auto claims =
      gpuaas::authz::VerifyJwt(gpuaas::fuzz::AsText(data, size), FixedKey(), "gpuaas-auth", now);
  if (!claims.ok()) {
    if (claims.status().code() != absl::StatusCode::kUnauthenticated) {
      Fail("a refused token must be UNAUTHENTICATED");
    }
    return 0;
  }
  const absl::Duration leeway = absl::Seconds(30);
  if (claims->kid != "fuzz-key" || claims->iss != "gpuaas-auth" || claims->sub.empty() ||
      claims->iat > now + leeway || claims->exp <= now + leeway ||
      claims->role == gpuaas::common::v1::ROLE_UNSPECIFIED) {
    Fail("a token verified without its key, issuer, subject, times or role");
  }
  namespace authz = ::gpuaas::authz;
  if ((authz::IsTenantRole(claims->role) && claims->tenant.empty()) ||
      (authz::IsMachineRole(claims->role) && !claims->tenant.empty()) ||
      ((claims->role == gpuaas::common::v1::ROLE_NODE_AGENT) == claims->node.empty())) {
    Fail("a token verified with a tenant or node its role does not take");
  }
  return 0;
}
