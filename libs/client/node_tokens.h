// The tokens the instance service sends to node agents (issue 32: nodes are untrusted): one per
// node and agent call, minted by the auth service's NodeTokenService for the service's own token
// (`tokens`), cached, and minted again once most of its life has passed. Whatever answers on a
// node's agent port may keep what it is sent: these act only at that node's agent, only for
// that call (authz/node_calls.h), and only for minutes. Never logged. Thread-safe.
#pragma once

#include <grpcpp/channel.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"
#include "libs/common/clock.h"

namespace gpuaas::client {

class NodeTokens final {
 public:
  using Purpose = ::gpuaas::auth::v1::AgentCallPurpose;

  // `auth_channel` from OpenChannel to the auth service; `tokens` (the service's own) and
  // `clock` must outlive this object. Does not connect.
  NodeTokens(std::shared_ptr<grpc::ChannelInterface> auth_channel, AccessTokens& tokens,
             const Clock& clock, absl::Duration timeout = kDefaultTimeout);

  // A token for `purpose` on `node_id`'s agent: the cached one while it is fresh, else a new
  // one from the auth service (blocks up to `timeout`, and on the service token's exchange).
  // Errors: UNAVAILABLE when auth cannot be reached or no service token could be had;
  // PERMISSION_DENIED when auth refuses the service's role; INVALID_ARGUMENT for a bad node id.
  absl::StatusOr<std::string> Get(const std::string& node_id, Purpose purpose);

  // Drops the cached token for `node_id` and `purpose`, e.g. after its agent refused it.
  void Invalidate(const std::string& node_id, Purpose purpose);

 private:
  struct Cached {
    std::string token;
    absl::Time refresh_at;
  };

  std::unique_ptr<::gpuaas::auth::v1::NodeTokenService::StubInterface> stub_;
  AccessTokens& tokens_;
  const Clock& clock_;
  const absl::Duration timeout_;

  absl::Mutex mu_;
  std::map<std::pair<std::string, Purpose>, Cached> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::client
