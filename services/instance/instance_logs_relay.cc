#include "services/instance/instance_logs_relay.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/client/call_context.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/status.h"

namespace gpuaas::instance {
namespace {

namespace pb = ::gpuaas::instance::v1;

// A tail answers at once; a follow lasts as long as its caller wants (and its deadline allows).
constexpr absl::Duration kTailTimeout = absl::Seconds(30);

// The agent's stream, read by the relaying stream's thread.
class AgentLogSource final : public rpc::PullSource<pb::LogChunk> {
 public:
  AgentLogSource(std::unique_ptr<grpc::ClientContext> ctx, client::AccessTokens& tokens,
                 std::string agent_address)
      : ctx_(std::move(ctx)), tokens_(tokens), agent_address_(std::move(agent_address)) {}

  void Start(pb::WorkloadLogService::Stub& stub, const pb::ReadWorkloadLogsRequest& req) {
    reader_ = stub.ReadWorkloadLogs(ctx_.get(), req);
  }

  absl::StatusOr<std::optional<pb::LogChunk>> Next() override {
    pb::LogChunk chunk;
    if (reader_->Read(&chunk)) return chunk;
    const absl::Status status = rpc::FromGrpcStatus(reader_->Finish());
    if (status.ok() || absl::IsNotFound(status) || absl::IsCancelled(status) ||
        absl::IsDeadlineExceeded(status) || absl::IsInvalidArgument(status)) {
      if (absl::IsNotFound(status)) {
        return absl::NotFoundError("the run's logs are gone: its node no longer keeps them");
      }
      if (!status.ok()) return status;
      return std::nullopt;
    }
    if (absl::IsUnauthenticated(status)) tokens_.Invalidate();
    // Whatever else the agent said (unreachable, refused our token, overloaded): the caller
    // can only retry later.
    return absl::UnavailableError(absl::StrCat("the node's agent at ", agent_address_,
                                               " cannot serve logs now: ", status.message()));
  }

  void Cancel() override { ctx_->TryCancel(); }

 private:
  std::unique_ptr<grpc::ClientContext> ctx_;
  client::AccessTokens& tokens_;
  const std::string agent_address_;
  std::unique_ptr<grpc::ClientReader<pb::LogChunk>> reader_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> AgentLogClient::Channel(const std::string& address) {
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(address);
  if (it != channels_.end()) return it->second;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = open_channel_(address);
  if (!channel.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the node's agent at ", address, ": ", channel.status().message()));
  }
  channels_[address] = *channel;
  return *channel;
}

absl::StatusOr<rpc::PullSourcePtr<pb::LogChunk>> AgentLogClient::Open(
    const std::string& agent_address, const pb::ReadWorkloadLogsRequest& req,
    const grpc::ServerContextBase& incoming) {
  absl::StatusOr<std::string> token = tokens_.Get();
  if (!token.ok()) {
    return absl::UnavailableError(
        absl::StrCat("no service token to reach the node's agent: ", token.status().message()));
  }
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, Channel(agent_address));
  client::CallContext call = client::CallContext::FromIncoming(incoming).set_bearer_token(*token);
  call.set_timeout(req.follow() ? absl::InfiniteDuration() : kTailTimeout);
  auto source = std::make_unique<AgentLogSource>(call.NewClientContext(), tokens_, agent_address);
  pb::WorkloadLogService::Stub stub(channel);
  source->Start(stub, req);
  return source;
}

}  // namespace gpuaas::instance
