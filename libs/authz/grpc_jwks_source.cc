#include "libs/authz/grpc_jwks_source.h"

#include "absl/strings/str_cat.h"
#include "libs/authz/jwt.h"
#include "libs/client/auth_client.h"
#include "libs/common/base64url.h"

namespace gpuaas::authz {
namespace {

namespace pb = ::gpuaas::auth::v1;

class GrpcJwksSource final : public JwksSource {
 public:
  GrpcJwksSource(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout)
      : auth_(std::move(channel), timeout) {}

  absl::StatusOr<std::string> FetchJwks() override {
    absl::StatusOr<pb::GetJwksResponse> answer = auth_.GetJwks(pb::GetJwksRequest());
    if (!answer.ok()) {
      return absl::Status(answer.status().code(),
                          absl::StrCat("GetJwks: ", answer.status().message()));
    }
    const pb::GetJwksResponse& resp = *answer;
    if (!resp.json().empty()) {
      return resp.json();
    }
    // An older server may fill only the structured keys; rebuild the canonical document.
    std::vector<PublicJwk> keys;
    for (const pb::Jwk& jwk : resp.keys()) {
      if (jwk.kty() != "OKP" || jwk.crv() != "Ed25519") {
        continue;
      }
      absl::StatusOr<std::string> raw = Base64UrlDecode(jwk.x());
      if (!raw.ok()) {
        return absl::InternalError("GetJwks: bad key encoding");
      }
      keys.push_back(PublicJwk{.kid = jwk.kid(), .public_raw = *std::move(raw)});
    }
    return JwksJson(keys);
  }

 private:
  const client::AuthClient auth_;
};

}  // namespace

std::unique_ptr<JwksSource> NewGrpcJwksSource(std::shared_ptr<grpc::Channel> auth_channel,
                                              absl::Duration timeout) {
  return std::make_unique<GrpcJwksSource>(std::move(auth_channel), timeout);
}

}  // namespace gpuaas::authz
