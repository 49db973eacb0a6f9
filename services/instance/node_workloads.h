// The agents' side of the instance service (NodeWorkloadService): what each node should run,
// and what the agents report about it.
//
// A node's set is its published rows (the reconciler publishes and unpublishes them). Reports
// move a run's visible state (STARTED → READY, RUNNING → RUNNING, EXITED / FAILED → FAILED),
// record the workload's start and stop for metering and the reconciler's wait, keep
// last_active_time for the idle auto-stop, and mark the node seen. A report names a workload
// by "<instance_id>.<run>", so a late report about an older run never touches a newer one.
//
// Every method blocks on PostgreSQL and returns the errors instance.proto documents.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "services/instance/reconciler_plan.h"
#include "services/instance/repository_reconcile.h"

namespace gpuaas::instance {

struct NodeWorkloadsOptions {
  // How often agents must report (sent in every set).
  absl::Duration report_interval = absl::Seconds(10);
  // SIGTERM to SIGKILL (every workload's stop_grace_period).
  absl::Duration stop_grace_period = absl::Seconds(10);
  // A report whose gpu_utilization_percent reaches this keeps the instance from idling.
  double busy_threshold_percent = 5;
  // Every workload's pids and open files.
  WorkloadDefaults workload_defaults;
  // Opens the instances' registry logins for their workloads; null when the service keeps no
  // secret key (workloads then go without a login). Not owned.
  const SecretBox* box = nullptr;
};

class NodeWorkloads final {
 public:
  NodeWorkloads(db::Pool& pool, NodeWorkloadsOptions options) : pool_(pool), options_(options) {}

  // The ReportWorkloads RPC. Needs ROLE_NODE_AGENT bound to the node (authz::RequireNode).
  // Errors: INVALID_ARGUMENT naming the field, PERMISSION_DENIED.
  absl::Status ReportWorkloads(const authz::Principal& p, const pb::ReportWorkloadsRequest& req,
                               pb::ReportWorkloadsResponse& out);

  // A WatchWorkloads stream opens: the caller may watch (as ReportWorkloads) and the node is
  // seen now at `address`; its agent is called at the reported agent_address's port on
  // `peer_host`, the host this stream came from (agent_address.h). Errors: INVALID_ARGUMENT,
  // PERMISSION_DENIED.
  absl::Status OpenWatch(const authz::Principal& p, const pb::WatchWorkloadsRequest& req,
                         const std::string& peer_host);

  // The node's set now.
  absl::StatusOr<pb::WorkloadSet> NodeSet(const std::string& node_id);

  // The nodes were heard from (their streams are open).
  absl::Status TouchNodes(const std::vector<std::string>& node_ids);

 private:
  // `row`'s registry login, opened, into `w`; logged (never the login) when it does not open.
  void AddRegistryLogin(const WorkRow& row, pb::Workload& w) const;

  db::Pool& pool_;
  const NodeWorkloadsOptions options_;
  ReconcileRepository repo_;
};

// What one report status does to its row (matched by workload id) at `now`, the database's
// time; `address` fills port mappings without a host. Returns whether the row changed; `wake`
// tells whether the reconciler has work from it. Pure.
bool ApplyWorkloadStatus(WorkRow& row, const pb::WorkloadStatus& status, absl::Time now,
                         const std::string& address, double busy_threshold_percent, bool& wake);

// The instance event a PULLING report makes: "pulling the image: <progress>" while the run it
// is about is the instance's live one (a stale run's pulls say nothing); nullopt otherwise.
// The caller skips it when it repeats the instance's latest event. Pure.
std::optional<std::string> PullEvent(const WorkRow& row, const pb::WorkloadStatus& status);

// A complete report did not mention the row's workload: an unpublished workload the agent no
// longer runs is gone (since `now`). Returns whether the row changed (then the reconciler has
// work).
bool ApplyAbsence(WorkRow& row, absl::Time now);

}  // namespace gpuaas::instance
