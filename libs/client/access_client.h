// The instance service's proxy-facing API (gpuaas.instance.v1.AccessService) for the access
// proxy: trading a one-time link's code for a grant, re-checking a grant, and reporting which
// instances were reached. Every call carries the proxy's own token from `tokens`; a token the
// service refuses is dropped, so the next call exchanges the API key again.
//
// Errors: the codes instance.proto documents for the RPC, with the server's message;
// UNAVAILABLE when the service cannot be reached or no token could be had; DEADLINE_EXCEEDED
// when the deadline passed. Thread-safe.
#pragma once

#include <grpcpp/channel.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"

namespace gpuaas::client {

namespace instancepb = ::gpuaas::instance::v1;

class AccessClient final {
 public:
  // `channel` from OpenChannel; `tokens` must outlive the client; `default_timeout` bounds
  // every call whose CallContext sets none. Does not connect.
  AccessClient(std::shared_ptr<grpc::ChannelInterface> channel, AccessTokens& tokens,
               absl::Duration default_timeout = kDefaultTimeout);

  absl::StatusOr<instancepb::AccessGrant> RedeemAccessCode(
      const instancepb::RedeemAccessCodeRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<instancepb::AccessGrant> CheckAccessGrant(
      const instancepb::CheckAccessGrantRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<instancepb::ReportAccessResponse> ReportAccess(
      const instancepb::ReportAccessRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<instancepb::ProxyToken> GetProxyToken(const instancepb::GetProxyTokenRequest& req,
                                                       const CallContext& call = {}) const;

 private:
  using Stub = ::gpuaas::instance::v1::AccessService::StubInterface;

  std::unique_ptr<Stub> stub_;
  AccessTokens& tokens_;
  const absl::Duration default_timeout_;
};

}  // namespace gpuaas::client
