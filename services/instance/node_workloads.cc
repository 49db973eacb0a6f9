#include "services/instance/node_workloads.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "libs/common/logging.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"
#include "services/instance/agent_address.h"
#include "services/instance/registry_secrets.h"
#include "services/instance/repository_logs.h"

namespace gpuaas::instance {
namespace {

constexpr int kMaxStatusesPerReport = 10000;

absl::Status RequireAgent(const authz::Principal& p, const std::string& node_id) {
  return authz::RequireNode(p, node_id, "node workloads");
}

absl::Status ValidateReport(const pb::ReportWorkloadsRequest& req) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", req.node_id()));
  if (req.workloads_size() > kMaxStatusesPerReport) {
    return service::InvalidField("workloads", absl::StrCat("at most ", kMaxStatusesPerReport));
  }
  for (int i = 0; i < req.workloads_size(); ++i) {
    const pb::WorkloadStatus& s = req.workloads(i);
    const std::string field = absl::StrCat("workloads[", i, "]");
    GPUAAS_RETURN_IF_ERROR(service::ValidateRequired(field + ".workload_id", s.workload_id()));
    GPUAAS_RETURN_IF_ERROR(service::ValidateRequired(field + ".instance_id", s.instance_id()));
    if (s.state() == pb::WORKLOAD_STATE_UNSPECIFIED || !pb::WorkloadState_IsValid(s.state())) {
      return service::InvalidField(field + ".state", "must be a WorkloadState");
    }
    // Instance ids are [a-z0-9-]; anything else names no instance and would break the list
    // the repository passes as one text.
    if (s.instance_id().find(',') != std::string::npos) {
      return service::InvalidField(field + ".instance_id", "not an instance id");
    }
  }
  return absl::OkStatus();
}

// A FAILED report's reason; each is final for the run (the instance is FAILED until started
// again): a start error or a pull that failed would fail again, an OOM kill is the workload's.
pb::Reason FailureReason(const pb::WorkloadStatus& s) {
  switch (s.reason()) {
    case pb::REASON_PROBE_TIMEOUT:
    case pb::REASON_START_ERROR:
    case pb::REASON_OOM_KILLED:
    case pb::REASON_IMAGE_PULL_FAILED:
      return s.reason();
    default:
      return pb::REASON_START_ERROR;
  }
}

// An agent's progress line as an event shows it: at most this long.
constexpr size_t kMaxProgress = 512;

bool SamePorts(const google::protobuf::RepeatedPtrField<pb::PortMapping>& a,
               const google::protobuf::RepeatedPtrField<pb::PortMapping>& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool ApplyWorkloadStatus(WorkRow& r, const pb::WorkloadStatus& s, absl::Time now,
                         const std::string& address, double busy_threshold_percent, bool& wake) {
  // Its end is recorded; anything later about it is stale.
  if (IsWorkloadGone(r.workload_state)) return false;
  // Agents' clocks may run ahead: nothing happened after the report arrived.
  const absl::Time t = s.has_state_time() ? std::min(FromProtoTime(s.state_time()), now) : now;
  const bool live = r.published && r.desired == pb::DESIRED_STATE_RUNNING && IsLiveState(r.state) &&
                    r.held_run == r.run;
  bool changed = false;
  switch (s.state()) {
    case pb::WORKLOAD_STATE_STARTED:
    case pb::WORKLOAD_STATE_RUNNING: {
      // A workload only runs once it was published; a stray report about a row the agent was
      // never given changes nothing.
      if (!r.published && !r.unpublish_time) return false;
      if (!r.workload_start_time) {
        r.workload_start_time = t;
        wake = true;  // its usage interval opens
        changed = true;
      }
      const pb::WorkloadState ws = (s.state() == pb::WORKLOAD_STATE_RUNNING ||
                                    r.workload_state == pb::WORKLOAD_STATE_RUNNING)
                                       ? pb::WORKLOAD_STATE_RUNNING
                                       : pb::WORKLOAD_STATE_STARTED;
      if (ws != r.workload_state) {
        r.workload_state = ws;
        changed = true;
      }
      if (live) {
        if (r.state == pb::STATE_PENDING) {
          r.start_time = r.workload_start_time;
          r.last_active_time = r.workload_start_time;  // the idle window starts with the run
          // Why it was pending (a lost node it left) no longer holds once it runs again.
          r.reason = pb::REASON_UNSPECIFIED;
          r.message.clear();
        }
        const pb::State want = ws == pb::WORKLOAD_STATE_RUNNING ? pb::STATE_RUNNING
                               : r.state == pb::STATE_RUNNING   ? pb::STATE_RUNNING
                                                                : pb::STATE_READY;
        if (want != r.state) {
          r.state = want;
          changed = true;
        }
        // A report without mappings keeps the ones known.
        google::protobuf::RepeatedPtrField<pb::PortMapping> ports = s.ports();
        for (pb::PortMapping& m : ports) {
          if (m.host().empty()) m.set_host(address);
        }
        if (!ports.empty() && !SamePorts(ports, r.ports)) {
          r.ports = std::move(ports);
          changed = true;
        }
      }
      if (s.gpu_utilization_percent() >= busy_threshold_percent) {
        r.last_active_time = now;
        changed = true;
      }
      return changed;
    }
    case pb::WORKLOAD_STATE_EXITED:
    case pb::WORKLOAD_STATE_STOPPED:
    case pb::WORKLOAD_STATE_FAILED:
      r.workload_state = s.state();
      r.workload_stop_time = r.workload_start_time ? std::max(t, *r.workload_start_time) : t;
      wake = true;
      if (live) {
        r.state = pb::STATE_FAILED;
        r.stop_time = r.workload_stop_time;
        r.message = s.message();
        if (s.state() == pb::WORKLOAD_STATE_FAILED) {
          r.reason = FailureReason(s);
        } else {
          r.reason = pb::REASON_WORKLOAD_EXITED;
          if (s.state() == pb::WORKLOAD_STATE_EXITED) {
            r.exit_code = s.exit_code();
            if (r.message.empty()) {
              r.message = absl::StrCat("the workload exited with code ", s.exit_code());
            }
          } else if (r.message.empty()) {
            r.message = "the agent stopped the workload";
          }
        }
        r.published = false;
        r.unpublish_time = now;
      }
      return true;
    default:
      return false;
  }
}

std::optional<std::string> PullEvent(const WorkRow& r, const pb::WorkloadStatus& s) {
  if (s.state() != pb::WORKLOAD_STATE_PULLING) return std::nullopt;
  const bool live = r.published && r.desired == pb::DESIRED_STATE_RUNNING && IsLiveState(r.state) &&
                    r.held_run == r.run && !r.workload_start_time;
  if (!live) return std::nullopt;
  std::string progress = s.message().empty() ? "started" : s.message().substr(0, kMaxProgress);
  // An event's message is text for people: a cut UTF-8 sequence or a control byte goes.
  for (char& c : progress) {
    if (static_cast<unsigned char>(c) < ' ' || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return absl::StrCat("pulling the image: ", progress);
}

bool ApplyAbsence(WorkRow& r, absl::Time now) {
  if (r.published || !r.unpublish_time || *r.unpublish_time > now ||
      IsWorkloadGone(r.workload_state)) {
    return false;
  }
  r.workload_state = pb::WORKLOAD_STATE_STOPPED;
  r.workload_stop_time = r.workload_start_time ? std::max(now, *r.workload_start_time) : now;
  return true;
}

absl::Status NodeWorkloads::ReportWorkloads(const authz::Principal& p,
                                            const pb::ReportWorkloadsRequest& req,
                                            pb::ReportWorkloadsResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateReport(req));
  GPUAAS_RETURN_IF_ERROR(RequireAgent(p, req.node_id()));
  out.Clear();
  std::vector<std::string> ids;
  for (const pb::WorkloadStatus& s : req.workloads()) ids.push_back(s.instance_id());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return pool_.RunInTransaction("instance.report_workloads", [&](db::Tx& tx) {
    const absl::Time now = repo_.Now(tx);
    const std::string address = repo_.SeeNode(tx, req.node_id(), "");
    std::vector<WorkRow> rows = repo_.LockHeldOn(tx, req.node_id(), ids);
    std::map<std::string, size_t> by_workload;
    for (size_t i = 0; i < rows.size(); ++i) {
      by_workload[WorkloadId(rows[i].instance_id, rows[i].held_run)] = i;
    }
    std::vector<bool> mentioned(rows.size(), false);
    for (const pb::WorkloadStatus& s : req.workloads()) {
      auto it = by_workload.find(s.workload_id());
      if (it == by_workload.end()) continue;  // an older run, or not this node's
      WorkRow& row = rows[it->second];
      if (row.instance_id != s.instance_id()) continue;
      mentioned[it->second] = true;
      if (std::optional<std::string> event = PullEvent(row, s)) {
        repo_.AddEventUnlessLatest(tx, row, *event);
        continue;
      }
      bool wake = false;
      // Written status by status: STARTED and RUNNING in one report are two transitions, and
      // each is an event.
      if (ApplyWorkloadStatus(row, s, now, address, options_.busy_threshold_percent, wake)) {
        repo_.WriteReported(tx, row, wake);
      }
    }
    if (req.complete()) {
      for (size_t i = 0; i < rows.size(); ++i) {
        if (!mentioned[i] && ApplyAbsence(rows[i], now)) repo_.WriteReported(tx, rows[i], true);
      }
      for (WorkRow& row : repo_.LockOthersHeldOn(tx, req.node_id(), ids)) {
        if (ApplyAbsence(row, now)) repo_.WriteReported(tx, row, true);
      }
    }
    return absl::OkStatus();
  });
}

absl::Status NodeWorkloads::OpenWatch(const authz::Principal& p,
                                      const pb::WatchWorkloadsRequest& req,
                                      const std::string& peer_host) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", req.node_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("address", req.address()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("agent_address", req.agent_address()));
  GPUAAS_RETURN_IF_ERROR(RequireAgent(p, req.node_id()));
  return pool_.RunInTransaction("instance.open_watch", [&](db::Tx& tx) {
    repo_.SeeNode(tx, req.node_id(), req.address());
    repo::SetAgentAddress(tx, req.node_id(), AgentAddressAt(peer_host, req.agent_address()));
    return absl::OkStatus();
  });
}

absl::StatusOr<pb::WorkloadSet> NodeWorkloads::NodeSet(const std::string& node_id) {
  return pool_.Read<pb::WorkloadSet>(
      "instance.node_set", [&](db::Tx& tx) -> absl::StatusOr<pb::WorkloadSet> {
        pb::WorkloadSet set;
        set.set_node_id(node_id);
        *set.mutable_report_interval() = ToProtoDuration(options_.report_interval);
        for (const WorkRow& row : repo_.PublishedOn(tx, node_id)) {
          pb::Workload* w = set.add_workloads();
          *w = BuildWorkload(row, options_.stop_grace_period, options_.workload_defaults);
          AddRegistryLogin(row, *w);
        }
        return set;
      });
}

void NodeWorkloads::AddRegistryLogin(const WorkRow& row, pb::Workload& w) const {
  if (row.registry_secret.empty()) return;
  absl::StatusOr<pb::RegistryCredentials> login =
      options_.box == nullptr
          ? absl::FailedPreconditionError("no --secret-key-file")
          : OpenCredentials(*options_.box, row.registry_secret, InstanceSecretAad(row.instance_id));
  if (!login.ok()) {
    // Its pull then fails as unauthorized (IMAGE_PULL_FAILED), which the user sees.
    Logger("instance")
        ->error("instance {}: its registry login cannot be opened: {}", row.instance_id,
                login.status().ToString());
    return;
  }
  *w.mutable_registry_credentials() = *std::move(login);
}

absl::Status NodeWorkloads::TouchNodes(const std::vector<std::string>& node_ids) {
  if (node_ids.empty()) return absl::OkStatus();
  return pool_.RunInTransaction("instance.touch_nodes", [&](db::Tx& tx) {
    repo_.TouchNodes(tx, node_ids);
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::instance
