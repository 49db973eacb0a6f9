#include "services/instance/instance_logs_relay.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/client/call_context.h"
#include "libs/common/status_macros.h"

namespace gpuaas::instance {
namespace {

namespace pb = ::gpuaas::instance::v1;

// A tail answers at once; a follow lasts as long as its caller wants (and its deadline allows).
constexpr absl::Duration kTailTimeout = absl::Seconds(30);

// The agent's stream, read by the relaying stream's thread.
class AgentLogSource final : public rpc::PullSource<pb::LogChunk> {
 public:
  AgentLogSource(client::ServerStreamPtr<pb::LogChunk> stream, client::WorkloadLogClient& agents,
                 std::string node_id, std::string agent_address)
      : stream_(std::move(stream)),
        agents_(agents),
        node_id_(std::move(node_id)),
        agent_address_(std::move(agent_address)) {}

  absl::StatusOr<std::optional<pb::LogChunk>> Next() override {
    pb::LogChunk chunk;
    if (stream_->Read(chunk)) return chunk;
    const absl::Status status = stream_->Finish();
    if (status.ok() || absl::IsNotFound(status) || absl::IsCancelled(status) ||
        absl::IsDeadlineExceeded(status) || absl::IsInvalidArgument(status) ||
        absl::IsResourceExhausted(status)) {  // the instance's share of the node's streams
      if (absl::IsNotFound(status)) {
        return absl::NotFoundError("the run's logs are gone: its node no longer keeps them");
      }
      if (!status.ok()) return status;
      return std::nullopt;
    }
    if (absl::IsUnauthenticated(status) || absl::IsPermissionDenied(status)) {
      agents_.TokenRefused(node_id_);  // expired, or a key rotated: mint another next time
    }
    // Whatever else the agent said (unreachable, refused our token, overloaded): the caller
    // can only retry later.
    return absl::UnavailableError(absl::StrCat("the node's agent at ", agent_address_,
                                               " cannot serve logs now: ", status.message()));
  }

  void Cancel() override { stream_->Cancel(); }

 private:
  client::ServerStreamPtr<pb::LogChunk> stream_;
  client::WorkloadLogClient& agents_;
  const std::string node_id_;
  const std::string agent_address_;
};

}  // namespace

absl::StatusOr<rpc::PullSourcePtr<pb::LogChunk>> AgentLogClient::Open(
    const std::string& node_id, const std::string& agent_address,
    const pb::ReadWorkloadLogsRequest& req, const grpc::ServerContextBase& incoming) {
  client::CallContext call = client::CallContext::FromIncoming(incoming);
  call.set_timeout(req.follow() ? absl::InfiniteDuration() : kTailTimeout);
  GPUAAS_ASSIGN_OR_RETURN(client::ServerStreamPtr<pb::LogChunk> stream,
                          agents_.OpenReadWorkloadLogs(node_id, agent_address, req, call));
  return std::make_unique<AgentLogSource>(std::move(stream), agents_, node_id, agent_address);
}

}  // namespace gpuaas::instance
