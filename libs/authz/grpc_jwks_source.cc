#include "libs/authz/grpc_jwks_source.h"

#include <grpcpp/client_context.h>

#include <chrono>

#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/authz/jwt.h"
#include "libs/common/base64url.h"

namespace gpuaas::authz {
namespace {

namespace pb = ::gpuaas::auth::v1;

// libs/rpc owns the general mapping, but depending on it would pull the server stack into
// every verifier; the two code enums are numerically identical, so a cast suffices.
absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) {
    return absl::OkStatus();
  }
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      "GetJwks: " + s.error_message());
}

class GrpcJwksSource final : public JwksSource {
 public:
  GrpcJwksSource(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout)
      : stub_(pb::AuthService::NewStub(channel)), timeout_(timeout) {}

  absl::StatusOr<std::string> FetchJwks() override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout_));
    pb::GetJwksRequest req;
    pb::GetJwksResponse resp;
    grpc::Status status = stub_->GetJwks(&ctx, req, &resp);
    if (!status.ok()) {
      return FromGrpc(status);
    }
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
  const std::unique_ptr<pb::AuthService::Stub> stub_;
  const absl::Duration timeout_;
};

}  // namespace

std::unique_ptr<JwksSource> NewGrpcJwksSource(std::shared_ptr<grpc::Channel> auth_channel,
                                              absl::Duration timeout) {
  return std::make_unique<GrpcJwksSource>(std::move(auth_channel), timeout);
}

}  // namespace gpuaas::authz
