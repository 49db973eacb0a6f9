#include "libs/client/workload_log_client.h"

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"

namespace gpuaas::client {

absl::StatusOr<WorkloadLogClient::Stub*> WorkloadLogClient::StubFor(const std::string& address) {
  absl::MutexLock lock(&mu_);
  auto it = stubs_.find(address);
  if (it != stubs_.end()) return it->second.get();
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = open_channel_(address);
  if (!channel.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the node's agent at ", address, ": ", channel.status().message()));
  }
  // A stub is thread-safe and lives as long as the client, so every caller shares it.
  std::unique_ptr<Stub>& stub = stubs_[address];
  stub = instancepb::WorkloadLogService::NewStub(*channel);
  return stub.get();
}

absl::StatusOr<ServerStreamPtr<instancepb::LogChunk>> WorkloadLogClient::OpenReadWorkloadLogs(
    const std::string& agent_address, const instancepb::ReadWorkloadLogsRequest& req,
    const CallContext& call) {
  GPUAAS_ASSIGN_OR_RETURN(Stub * stub, StubFor(agent_address));
  return internal::OpenServerStream(*stub, &Stub::ReadWorkloadLogs, req, call, &tokens_);
}

}  // namespace gpuaas::client
