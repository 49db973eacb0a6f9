#include "services/instance/instance_logs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"
#include "services/instance/repository_logs.h"

namespace gpuaas::instance {
namespace {

namespace pb = ::gpuaas::instance::v1;

constexpr int kMaxTailLines = 10000;

// Holds the stream's slot for as long as it lives.
class CountedSource final : public rpc::PullSource<pb::LogChunk> {
 public:
  CountedSource(rpc::PullSourcePtr<pb::LogChunk> inner, SlotLimiter::Slot slot)
      : inner_(std::move(inner)), slot_(std::move(slot)) {}

  absl::StatusOr<std::optional<pb::LogChunk>> Next() override { return inner_->Next(); }
  void Cancel() override { inner_->Cancel(); }

 private:
  rpc::PullSourcePtr<pb::LogChunk> inner_;
  SlotLimiter::Slot slot_;
};

absl::Status Validate(const pb::GetInstanceLogsRequest& req) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("instance_id", req.instance_id()));
  if (req.tail_lines() < 0 || req.tail_lines() > kMaxTailLines) {
    return service::InvalidField("tail_lines", absl::StrCat("must be 0 to ", kMaxTailLines));
  }
  if (!pb::LogStream_IsValid(req.stream())) {
    return service::InvalidField("stream", "unknown stream");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<rpc::PullSourcePtr<pb::LogChunk>> InstanceLogs::Open(
    const authz::Principal& p, const pb::GetInstanceLogsRequest& req,
    const grpc::ServerContextBase& incoming) {
  GPUAAS_RETURN_IF_ERROR(Validate(req));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "reading instance logs"));
  GPUAAS_ASSIGN_OR_RETURN(
      std::optional<repo::LogTarget> target,
      pool_.Read<std::optional<repo::LogTarget>>(
          "instance.log_target", [&](db::Tx& tx) -> absl::StatusOr<std::optional<repo::LogTarget>> {
            return repo::GetLogTarget(tx, req.instance_id());
          }));
  if (!target || target->deleted || !authz::RequireTenant(p, target->tenant_id, "instance").ok()) {
    return absl::NotFoundError("instance not found");
  }
  if (target->run == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("instance ", req.instance_id(), " has not run on a node yet: no logs"));
  }
  if (target->agent_address.empty()) {
    return absl::UnavailableError(
        absl::StrCat("node ", target->node_id, "'s agent serves no logs (an older agent?)"));
  }
  GPUAAS_ASSIGN_OR_RETURN(SlotLimiter::Slot slot, streams_.Acquire(target->tenant_id));
  pb::ReadWorkloadLogsRequest upstream;
  upstream.set_workload_id(absl::StrCat(req.instance_id(), ".", target->run));
  upstream.set_tail_lines(req.tail_lines());
  upstream.set_follow(req.follow());
  upstream.set_stream(req.stream());
  GPUAAS_ASSIGN_OR_RETURN(rpc::PullSourcePtr<pb::LogChunk> source,
                          agents_.Open(target->node_id, target->agent_address, upstream, incoming));
  return std::make_unique<CountedSource>(std::move(source), std::move(slot));
}

}  // namespace gpuaas::instance
