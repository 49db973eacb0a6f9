// What the reconciler does next with an instance: a pure function of its row, so every step
// is decided from the database alone and a process that crashed anywhere resumes where the row
// says, whichever replica picks it up.
//
// The start chain of run N (desired RUNNING, state PENDING/READY/RUNNING):
//   begin (held_run := N) → claim (stock) → attach (storage, when there is one) → publish
//   (the workload joins its node's set) → [the agent reports STARTED: READY] → meter (open the
//   usage interval at the workload's start, priced by the spec) → [RUNNING: probe passes].
// The chain backwards (stop, delete, failure, or a restart while an older run still holds
// something):
//   unpublish (and enter STOPPING/DELETING) → wait (until the agent reports the workload gone,
//   or the node is lost) → meter (close the interval at the workload's stop) → detach →
//   release (stock; clears the node) → finish (STOPPED; FAILED kept; tombstone for delete).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

// The columns of instance.instances the reconciler reads.
struct WorkRow {
  std::string instance_id;
  std::string tenant_id;
  std::string spec_name;
  int32_t gpu_num = 0;
  std::string storage_id;
  // The identity of storage_id's storage when the instance was created; "" for none (or an
  // instance created before identities).
  std::string storage_uid;
  pb::Template tmpl;
  pb::DesiredState desired = pb::DESIRED_STATE_UNSPECIFIED;
  pb::State state = pb::STATE_UNSPECIFIED;
  pb::Reason reason = pb::REASON_UNSPECIFIED;
  int32_t run = 0;
  int32_t held_run = 0;
  std::string stock_id;
  std::string node_id;
  std::vector<std::string> gpu_uuids;
  std::string mig_partition;
  // An attachment may exist: set when the run begins (for instances with a storage), so a
  // crash between AttachStorage and its commit still detaches.
  bool attached = false;
  std::string host_path;
  // A storage on Ceph: what the agent mounts instead of host_path (empty otherwise).
  pb::CephVolume ceph_mount;
  bool published = false;
  pb::WorkloadState workload_state = pb::WORKLOAD_STATE_UNSPECIFIED;
  std::optional<absl::Time> workload_start_time;
  std::optional<absl::Time> workload_stop_time;
  std::optional<absl::Time> unpublish_time;
  int metered = 0;  // 0 none, 1 open, 2 closed
  int32_t attempts = 0;
  std::optional<absl::Time> delete_time;
  // What users see besides state and reason (agents' reports write them).
  std::string message;
  int32_t exit_code = 0;
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> stop_time;
  google::protobuf::RepeatedPtrField<pb::PortMapping> ports;
  std::optional<absl::Time> last_active_time;
  // The workload's GPUAAS_PROXY_TOKEN (0006_proxy_tokens.sql). A secret: never logged.
  std::string proxy_token;
  // The container image pinned by digest; "" for the process runtime (0008_oci_images.sql).
  std::string image_reference;
  // Its registry login, sealed for the instance (registry_secrets.h); "" for none.
  std::string registry_secret;
  // cpu, memory and disk from the spec at create.
  pb::WorkloadLimits limits;
  bool deny_egress = false;
  // The run's GPUAAS_SSH_AUTHORIZED_KEYS, read at kPublish (0012_authorized_keys.sql).
  std::string authorized_keys;
};

enum class Step {
  kBegin,       // held_run := run; reset the run's bookkeeping
  kClaim,       // stock ClaimStock
  kAttach,      // storage AttachStorage
  kPublish,     // published := true
  kMeter,       // open (or open and close) the run's usage interval: stock GetSpec for the price
  kUnpublish,   // published := false; enter STOPPING / DELETING
  kMeterClose,  // close the open usage interval
  kDetach,      // storage DetachStorage
  kRelease,     // stock ReleaseStock; clear the node fields and held_run
  kFinish,      // STOPPING → STOPPED, or the tombstone of a deleted instance
  kWait,        // nothing to do until a report, node loss or the user changes the row
};

// The name tests and logs use: "begin", "claim", ...
std::string_view StepName(Step step);

// The states in which a run is wanted and not failed.
bool IsLiveState(pb::State state);

// The agent's states that say the workload no longer runs.
bool IsWorkloadGone(pb::WorkloadState state);

// The next step for `row`. Pure.
Step NextStep(const WorkRow& row);

// The environment variable that hands a workload its instance's proxy token
// (AccessService.GetProxyToken): catalog images require it of every request.
constexpr std::string_view kProxyTokenEnv = "GPUAAS_PROXY_TOKEN";
// The one that hands it its tenant's SSH public keys, one per line (set when there are any).
constexpr std::string_view kAuthorizedKeysEnv = "GPUAAS_SSH_AUTHORIZED_KEYS";

// The limits every workload gets from the service's flags beside its spec's.
struct WorkloadDefaults {
  // Processes and threads together (WorkloadLimits.pids).
  int64_t pids = 4096;
  // RLIMIT_NOFILE (WorkloadLimits.open_files).
  int64_t open_files = 65536;
};

// The workload an agent runs for `row` (published rows only): "<instance_id>.<held_run>",
// the template's cmd, envs (and kProxyTokenEnv, kAuthorizedKeysEnv) and ports, the volumes bound
// under host_path, the devices, the pinned image, the limits (the spec's, `defaults`' pids and open
// files) and the egress policy. Not the registry login: the caller opens it (it is sealed in the
// row).
pb::Workload BuildWorkload(const WorkRow& row, absl::Duration stop_grace_period,
                           const WorkloadDefaults& defaults = {});

// "<instance_id>.<run>".
std::string WorkloadId(const std::string& instance_id, int32_t run);

}  // namespace gpuaas::instance
