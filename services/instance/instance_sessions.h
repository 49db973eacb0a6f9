// InstanceSessionService: a tenant's terminal (ExecInstance) or port-forward
// (ForwardInstancePort) into its instance, relayed to the agent of the node that runs the
// instance's current run (WorkloadSessionService). The caller is checked here, once per session,
// against the instance as it is now (MEMBER of its tenant, the instance READY or RUNNING); the
// agent is sent a token minted for that node and that one call, never the caller's or the
// service's own (a node may be hostile: what it is sent acts nowhere else). Every session is
// recorded before the first byte reaches the node (instance.sessions) and closed with how it
// ended.
//
// Full-duplex streams that people hold for hours: gRPC's synchronous API, a thread reading the
// caller and one reading the agent per session, capped in all and per tenant.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>

#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "gpuaas/instance/v1/workload_sessions.grpc.pb.h"
#include "libs/client/agent_stubs.h"
#include "libs/client/node_tokens.h"
#include "libs/common/slot_limiter.h"
#include "libs/db/db.h"
#include "libs/rpc/handler.h"
#include "services/instance/access.h"

namespace gpuaas::instance {

// The agents' WorkloadSessionService, and the tokens its calls carry.
class AgentSessions final {
 public:
  using Stub = v1::WorkloadSessionService::StubInterface;

  // `tokens` must outlive this object.
  AgentSessions(client::AgentChannelFactory open_channel, client::NodeTokens& tokens)
      : stubs_(std::move(open_channel)), tokens_(tokens) {}

  // The stub for `address`. Errors: UNAVAILABLE naming the address.
  absl::StatusOr<Stub*> StubFor(const std::string& address) { return stubs_.For(address); }
  client::NodeTokens& tokens() { return tokens_; }

 private:
  client::AgentStubs<v1::WorkloadSessionService> stubs_;
  client::NodeTokens& tokens_;
};

struct InstanceSessionsOptions {
  // Sessions open at once through this replica, in all and for one tenant (each holds three
  // threads here and two on its node). Below gRPC's synchronous pool (ServerOptions::
  // max_sync_threads, 64), which each session's handler holds and reflection shares.
  int max_sessions = 48;
  int max_sessions_per_tenant = 16;
  // A session is checked once, when it opens, and again this often while open: its user must
  // still be a member who may use the instance (Access::CheckStillMember), and the instance
  // still running the same run. One that fails either is closed (PERMISSION_DENIED to the
  // caller), so a removed member's terminal ends within this bound.
  absl::Duration recheck = absl::Seconds(60);
};

class InstanceSessionServiceImpl final : public v1::InstanceSessionService::Service {
 public:
  // All must outlive this object.
  InstanceSessionServiceImpl(db::Pool& pool, AgentSessions& agents, Access& access,
                             rpc::Handler& handler, InstanceSessionsOptions options = {});

  grpc::Status ExecInstance(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::ExecInstanceResponse, v1::ExecInstanceRequest>* stream) override;
  grpc::Status ForwardInstancePort(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::ForwardInstancePortResponse, v1::ForwardInstancePortRequest>*
          stream) override;

  // What a session needs once its caller is admitted; defined in the .cc.
  struct Admitted;

 private:
  // Checks the caller and the instance, takes a slot and records the session. Errors as the
  // proto says.
  absl::StatusOr<Admitted> Admit(grpc::ServerContext& ctx, const std::string& instance_id,
                                 std::string_view kind, std::string detail);
  // OK while the session may stay open (see InstanceSessionsOptions::recheck); UNAVAILABLE
  // when that cannot be known now (it stays open).
  absl::Status StillHolds(const Admitted& admitted);
  // Relays an admitted session until it ends; its status. The agent's messages wrap the
  // caller's (the first naming the run). `observe` sees each answer and says whether it was the
  // last one; when the agent's stream ends without it, the caller gets `broken_off`, so that it
  // half-closes and hears the agent's error now rather than waiting on its own input.
  template <class Req, class Resp, class AgentReq, class AgentResp>
  absl::Status Relay(grpc::ServerContext& ctx, grpc::ServerReaderWriter<Resp, Req>& caller,
                     const Admitted& admitted, client::NodeTokens::Purpose purpose,
                     std::unique_ptr<grpc::ClientReaderWriterInterface<AgentReq, AgentResp>> (
                         AgentSessions::Stub::*open)(grpc::ClientContext*),
                     const Req& start, const std::function<bool(const Req&)>& valid,
                     const std::function<bool(const Resp&)>& observe, const Resp& broken_off);
  // Records how the session ended. Never fails the session.
  void Close(const std::string& session_id, const std::string& outcome);

  db::Pool& pool_;
  AgentSessions& agents_;
  Access& access_;
  rpc::Handler& handler_;
  const absl::Duration recheck_;
  SlotLimiter sessions_;
};

}  // namespace gpuaas::instance
