#include "libs/client/node_tokens.h"

#include <algorithm>

#include "libs/client/internal/unary_call.h"
#include "libs/common/proto_time.h"

namespace gpuaas::client {

namespace authpb = ::gpuaas::auth::v1;

NodeTokens::NodeTokens(std::shared_ptr<grpc::ChannelInterface> auth_channel, AccessTokens& tokens,
                       const Clock& clock, absl::Duration timeout)
    : stub_(authpb::NodeTokenService::NewStub(std::move(auth_channel))),
      tokens_(tokens),
      clock_(clock),
      timeout_(timeout) {}

absl::StatusOr<std::string> NodeTokens::Get(const std::string& node_id, Purpose purpose) {
  const auto key = std::make_pair(node_id, purpose);
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && clock_.Now() < it->second.refresh_at) return it->second.token;
  }
  // Minted outside the lock: one slow mint for one node never holds another node's reads. Two
  // callers racing for one node mint twice, harmlessly.
  authpb::IssueNodeTokenRequest req;
  req.set_node_id(node_id);
  req.set_purpose(purpose);
  const absl::Time now = clock_.Now();
  absl::StatusOr<authpb::IssueNodeTokenResponse> resp =
      internal::UnaryCall(*stub_, &authpb::NodeTokenService::StubInterface::IssueNodeToken, req,
                          CallContext(), timeout_, &tokens_);
  if (!resp.ok()) return resp.status();
  // As AccessTokens: renewed after four fifths of its life, reused at least a few seconds.
  constexpr absl::Duration kMinReuse = absl::Seconds(5);
  const absl::Time expires = FromProtoTime(resp->expire_time());
  absl::MutexLock lock(&mu_);
  cache_[key] = Cached{resp->access_token(), now + std::max(kMinReuse, (expires - now) * 4 / 5)};
  return resp->access_token();
}

void NodeTokens::Invalidate(const std::string& node_id, Purpose purpose) {
  absl::MutexLock lock(&mu_);
  cache_.erase(std::make_pair(node_id, purpose));
}

}  // namespace gpuaas::client
