#include "services/instance/instance_sessions.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "libs/authz/principal.h"
#include "libs/client/call_context.h"
#include "libs/common/ids.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/status.h"
#include "libs/service/validate.h"
#include "services/instance/repository_sessions.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;
using Purpose = client::NodeTokens::Purpose;

struct InstanceSessionServiceImpl::Admitted {
  std::string session_id;
  std::string instance_id;
  std::string tenant_id;
  std::string user_id;
  int32_t run = 0;
  std::string node_id;
  std::string agent_address;
  std::string workload_id;
  SlotLimiter::Slot slot;
};

namespace {

constexpr size_t kMaxMessageBytes = 64 << 10;
constexpr int kMaxArgs = 256;
constexpr int kMaxTerminalCells = 1000;
constexpr size_t kMaxDetail = 1000;
// How long a session whose node side ended waits for its caller's half-close before it ends the
// call itself.
constexpr absl::Duration kCloseWait = absl::Seconds(10);

// What a caller gets when the node ends its session without the last answer.
pb::ExecInstanceResponse Aborted() {
  pb::ExecInstanceResponse r;
  r.set_aborted(true);
  return r;
}
pb::ForwardInstancePortResponse Closed() {
  pb::ForwardInstancePortResponse r;
  r.set_closed(true);
  return r;
}

absl::Status ValidateSize(std::string_view field, const pb::TerminalSize& size) {
  if (size.rows() > kMaxTerminalCells || size.cols() > kMaxTerminalCells) {
    return service::InvalidField(field,
                                 absl::StrCat("rows and cols must be 0 to ", kMaxTerminalCells));
  }
  return absl::OkStatus();
}

absl::Status ValidateExec(const pb::ExecStart& start) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("start.instance_id", start.instance_id()));
  if (start.command().empty() || start.command_size() > kMaxArgs) {
    return service::InvalidField("start.command",
                                 absl::StrCat("needs 1 to ", kMaxArgs, " entries"));
  }
  size_t bytes = 0;
  for (const std::string& arg : start.command()) {
    bytes += arg.size();
    if (arg.find('\0') != std::string::npos) {
      return service::InvalidField("start.command", "holds a NUL byte");
    }
  }
  if (bytes > kMaxMessageBytes) {
    return service::InvalidField("start.command", "longer than 64 KiB in all");
  }
  if (start.command(0).empty()) return service::InvalidField("start.command", "empty program");
  return ValidateSize("start.size", start.size());
}

// The agent's refusal as the caller hears it: its own words where they are about the caller's
// request, UNAVAILABLE where they are about the agent.
absl::Status FromAgent(const grpc::Status& status, AgentSessions& agents,
                       const std::string& node_id, Purpose purpose) {
  const absl::Status s = rpc::FromGrpcStatus(status);
  if (s.ok() || absl::IsCancelled(s) || absl::IsInvalidArgument(s) ||
      absl::IsFailedPrecondition(s) || absl::IsResourceExhausted(s) ||
      absl::IsDeadlineExceeded(s) || absl::IsUnavailable(s)) {
    return s;
  }
  if (absl::IsNotFound(s)) return absl::FailedPreconditionError("the instance's run has ended");
  if (absl::IsUnauthenticated(s) || absl::IsPermissionDenied(s)) {
    agents.tokens().Invalidate(node_id, purpose);  // expired, or a key rotated
  }
  return absl::UnavailableError(
      absl::StrCat("the instance's node cannot open sessions now: ", s.message()));
}

}  // namespace

InstanceSessionServiceImpl::InstanceSessionServiceImpl(db::Pool& pool, AgentSessions& agents,
                                                       Access& access, rpc::Handler& handler,
                                                       InstanceSessionsOptions options)
    : pool_(pool),
      agents_(agents),
      access_(access),
      handler_(handler),
      recheck_(options.recheck),
      sessions_(options.max_sessions, options.max_sessions_per_tenant, "sessions", "tenant") {}

absl::StatusOr<InstanceSessionServiceImpl::Admitted> InstanceSessionServiceImpl::Admit(
    grpc::ServerContext& ctx, const std::string& instance_id, std::string_view kind,
    std::string detail) {
  GPUAAS_ASSIGN_OR_RETURN(authz::Principal p, handler_.AuthenticateBlocking(ctx));
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kUse, "opening a session in an instance"));
  GPUAAS_ASSIGN_OR_RETURN(
      std::optional<repo::SessionTarget> target,
      pool_.Read<std::optional<repo::SessionTarget>>(
          "instance.session_target",
          [&](db::Tx& tx) -> absl::StatusOr<std::optional<repo::SessionTarget>> {
            return repo::GetSessionTarget(tx, instance_id);
          }));
  if (!target || target->deleted || !authz::RequireTenant(p, target->tenant_id, "instance").ok()) {
    return absl::NotFoundError("instance not found");
  }
  if ((target->state != pb::STATE_READY && target->state != pb::STATE_RUNNING) ||
      target->run == 0 || target->node_id.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("instance ", instance_id, " is not running: start it first"));
  }
  if (target->agent_address.empty()) {
    return absl::UnavailableError(
        absl::StrCat("node ", target->node_id, "'s agent has not said where it is reached"));
  }
  GPUAAS_ASSIGN_OR_RETURN(SlotLimiter::Slot slot, sessions_.Acquire(target->tenant_id));
  if (detail.size() > kMaxDetail) detail.resize(kMaxDetail);
  repo::SessionRecord record{.session_id = NewId("ses_"),
                             .instance_id = instance_id,
                             .tenant_id = target->tenant_id,
                             .user_id = p.user_id,
                             .peer = rpc::PeerAddress(ctx.peer()),
                             .kind = std::string(kind),
                             .detail = std::move(detail),
                             .node_id = target->node_id};
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("instance.open_session", [&](db::Tx& tx) {
    repo::InsertSession(tx, record);
    return absl::OkStatus();
  }));
  // Who, where and which instance; the command stays in the table (it may hold a secret).
  Logger("instance")
      ->info("session {} {} opened on instance {} (node {}) by {} from {}", record.session_id, kind,
             instance_id, record.node_id, rpc::PrincipalLabel(p), record.peer);
  return Admitted{.session_id = record.session_id,
                  .instance_id = instance_id,
                  .tenant_id = target->tenant_id,
                  .user_id = p.user_id,
                  .run = target->run,
                  .node_id = target->node_id,
                  .agent_address = target->agent_address,
                  .workload_id = absl::StrCat(instance_id, ".", target->run),
                  .slot = std::move(slot)};
}

// Relays one session between its caller and its agent until both are done: the caller's
// requests up (first `start`), the agent's answers down. Returns how it ended.
template <class Req, class Resp, class AgentReq, class AgentResp>
absl::Status InstanceSessionServiceImpl::Relay(
    grpc::ServerContext& ctx, grpc::ServerReaderWriter<Resp, Req>& caller, const Admitted& admitted,
    Purpose purpose,
    std::unique_ptr<grpc::ClientReaderWriterInterface<AgentReq, AgentResp>> (
        AgentSessions::Stub::*open)(grpc::ClientContext*),
    const Req& start, const std::function<bool(const Req&)>& valid,
    const std::function<bool(const Resp&)>& observe, const Resp& broken_off) {
  AgentSessions& agents = agents_;
  GPUAAS_ASSIGN_OR_RETURN(AgentSessions::Stub * stub, agents.StubFor(admitted.agent_address));
  absl::StatusOr<std::string> token = agents.tokens().Get(admitted.node_id, purpose);
  if (!token.ok()) {
    return absl::UnavailableError(absl::StrCat("no token for node ", admitted.node_id,
                                               "'s agent: ", token.status().message()));
  }
  client::CallContext call = client::CallContext::FromIncoming(ctx);
  call.set_timeout(absl::InfiniteDuration()).set_bearer_token(*token);
  std::unique_ptr<grpc::ClientContext> agent_ctx = call.NewClientContext();
  std::unique_ptr<grpc::ClientReaderWriterInterface<AgentReq, AgentResp>> agent =
      (stub->*open)(agent_ctx.get());
  AgentReq first;
  first.set_workload_id(admitted.workload_id);  // the service's, never the caller's
  *first.mutable_request() = start;
  agent->Write(first);

  absl::Notification reads_done;
  absl::Notification ended;
  std::atomic<bool> revoked{false};
  // Asked about again while open: a removed member's terminal must not outlive the removal.
  std::thread watch([&] {
    while (!ended.WaitForNotificationWithTimeout(recheck_)) {
      if (absl::IsPermissionDenied(StillHolds(admitted))) {
        revoked = true;
        agent_ctx->TryCancel();
        ctx.TryCancel();
        return;
      }
    }
  });
  std::thread pump([&] {
    AgentResp resp;
    bool last = false;
    bool writing = true;
    while (agent->Read(&resp)) {
      last = observe(resp.response()) || last;
      if (!caller.Write(resp.response())) {
        writing = false;
        agent_ctx->TryCancel();
        break;
      }
    }
    // The caller, still sending, would otherwise wait for an answer that never comes, and
    // then be cancelled after kCloseWait without the agent's error.
    if (!last && writing && !ctx.IsCancelled()) caller.Write(broken_off);
    if (!reads_done.WaitForNotificationWithTimeout(kCloseWait)) ctx.TryCancel();
  });
  absl::Status refused;
  Req req;
  while (caller.Read(&req)) {
    if (!valid(req)) {
      refused = absl::InvalidArgumentError("a request after start must carry at most 64 KiB");
      break;
    }
    AgentReq up;
    *up.mutable_request() = std::move(req);
    if (!agent->Write(up)) break;
  }
  if (ctx.IsCancelled() || !refused.ok()) {
    agent_ctx->TryCancel();
  } else {
    agent->WritesDone();
  }
  reads_done.Notify();
  pump.join();
  ended.Notify();
  watch.join();
  const absl::Status status = FromAgent(agent->Finish(), agents, admitted.node_id, purpose);
  if (revoked) {
    return absl::PermissionDeniedError(
        "the session's user may no longer use the instance, or it stopped running");
  }
  return refused.ok() ? status : refused;
}

absl::Status InstanceSessionServiceImpl::StillHolds(const Admitted& admitted) {
  GPUAAS_RETURN_IF_ERROR(access_.CheckStillMember(absl::Now() + absl::Seconds(10),
                                                  admitted.tenant_id, admitted.user_id));
  GPUAAS_ASSIGN_OR_RETURN(
      std::optional<repo::SessionTarget> target,
      pool_.Read<std::optional<repo::SessionTarget>>(
          "instance.session_target",
          [&](db::Tx& tx) -> absl::StatusOr<std::optional<repo::SessionTarget>> {
            return repo::GetSessionTarget(tx, admitted.instance_id);
          }));
  if (!target || target->deleted || target->run != admitted.run ||
      (target->state != pb::STATE_READY && target->state != pb::STATE_RUNNING)) {
    return absl::PermissionDeniedError("the instance no longer runs this session's run");
  }
  return absl::OkStatus();
}

void InstanceSessionServiceImpl::Close(const std::string& session_id, const std::string& outcome) {
  const absl::Status s = pool_.RunInTransaction("instance.close_session", [&](db::Tx& tx) {
    repo::CloseSession(tx, session_id, outcome);
    return absl::OkStatus();
  });
  Logger("instance")
      ->info("session {} closed: {}{}", session_id, outcome,
             s.ok() ? "" : absl::StrCat(" (not recorded: ", s.message(), ")"));
}

grpc::Status InstanceSessionServiceImpl::ExecInstance(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<pb::ExecInstanceResponse, pb::ExecInstanceRequest>* stream) {
  pb::ExecInstanceRequest first;
  if (!stream->Read(&first)) return grpc::Status(grpc::StatusCode::CANCELLED, "no request");
  if (!first.has_start()) {
    return rpc::ToGrpcStatus(service::InvalidField("start", "the first request must be start"));
  }
  if (const absl::Status s = ValidateExec(first.start()); !s.ok()) return rpc::ToGrpcStatus(s);
  absl::StatusOr<Admitted> admitted =
      Admit(*ctx, first.start().instance_id(), "exec", absl::StrJoin(first.start().command(), " "));
  if (!admitted.ok()) return rpc::ToGrpcStatus(admitted.status());
  std::optional<int32_t> exit_code;
  const absl::Status status = Relay<pb::ExecInstanceRequest, pb::ExecInstanceResponse,
                                    pb::ExecWorkloadRequest, pb::ExecWorkloadResponse>(
      *ctx, *stream, *admitted, client::NodeTokens::Purpose::AGENT_CALL_PURPOSE_EXEC_WORKLOAD,
      &AgentSessions::Stub::ExecWorkload, first,
      [](const pb::ExecInstanceRequest& r) {
        return r.stdin().size() <= kMaxMessageBytes && !r.has_start() &&
               (!r.has_resize() || ValidateSize("resize", r.resize()).ok());
      },
      [&exit_code](const pb::ExecInstanceResponse& r) {
        if (r.kind_case() != pb::ExecInstanceResponse::kExitCode) return false;
        exit_code = r.exit_code();
        return true;
      },
      Aborted());
  Close(admitted->session_id, exit_code ? absl::StrCat("exit ", *exit_code)
                                        : std::string(absl::StatusCodeToString(status.code())));
  return rpc::ToGrpcStatus(status);
}

grpc::Status InstanceSessionServiceImpl::ForwardInstancePort(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<pb::ForwardInstancePortResponse, pb::ForwardInstancePortRequest>*
        stream) {
  pb::ForwardInstancePortRequest first;
  if (!stream->Read(&first)) return grpc::Status(grpc::StatusCode::CANCELLED, "no request");
  if (!first.has_start()) {
    return rpc::ToGrpcStatus(service::InvalidField("start", "the first request must be start"));
  }
  const pb::PortForwardStart& start = first.start();
  if (const absl::Status s = service::ValidateRequired("start.instance_id", start.instance_id());
      !s.ok()) {
    return rpc::ToGrpcStatus(s);
  }
  if (start.port() < 1 || start.port() > 65535) {
    return rpc::ToGrpcStatus(service::InvalidField("start.port", "must be 1 to 65535"));
  }
  absl::StatusOr<Admitted> admitted =
      Admit(*ctx, start.instance_id(), "port_forward", absl::StrCat(start.port()));
  if (!admitted.ok()) return rpc::ToGrpcStatus(admitted.status());
  const absl::Status status =
      Relay<pb::ForwardInstancePortRequest, pb::ForwardInstancePortResponse,
            pb::ForwardWorkloadPortRequest, pb::ForwardWorkloadPortResponse>(
          *ctx, *stream, *admitted,
          client::NodeTokens::Purpose::AGENT_CALL_PURPOSE_FORWARD_WORKLOAD_PORT,
          &AgentSessions::Stub::ForwardWorkloadPort, first,
          [](const pb::ForwardInstancePortRequest& r) {
            return r.data().size() <= kMaxMessageBytes && !r.has_start();
          },
          [](const pb::ForwardInstancePortResponse& r) { return r.closed(); }, Closed());
  Close(admitted->session_id, std::string(absl::StatusCodeToString(status.code())));
  return rpc::ToGrpcStatus(status);
}

}  // namespace gpuaas::instance
