// The agent's workload runtime: runs the workloads of the node's desired set and reports what
// they do. The container runtime (container_launch.h, the default) runs each as an OCI
// container under runc; the process runtime (process_runtime.h) runs image-less ones as
// bubblewrap-sandboxed host processes (--runtime=process, or --image-less=process). Workloads
// outlive the agent: a runtime made again after an agent restart adopts those still running instead
// of starting them twice.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::agent {

class Runtime {
 public:
  virtual ~Runtime() = default;

  // Starts `workload` (instance.v1.Workload): its command through /bin/sh -c with its envs plus
  // GPUAAS_INSTANCE_ID, GPUAAS_PORT_<port> (a free host port per template port),
  // CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES, its mounts and only its GPUs' devices.
  // Returns once the process runs (STARTED) or could not start (the error; the workload is
  // then listed FAILED START_ERROR). Idempotent by workload_id: a known workload, running or
  // finished, is left as it is. Thread-safe.
  virtual absl::Status Start(const instance::v1::Workload& workload) = 0;

  // Stops a workload: SIGTERM to its process group, SIGKILL after its stop_grace_period.
  // Returns at once; the workload turns STOPPED when its processes are gone. Unknown or
  // finished workloads: OK. Thread-safe.
  virtual absl::Status Stop(std::string_view workload_id) = 0;

  // Forgets a finished workload (STOPPED, EXITED, FAILED): its state and logs go. A running one
  // is left alone (FAILED_PRECONDITION). Unknown: OK. Thread-safe.
  virtual absl::Status Remove(std::string_view workload_id) = 0;

  // Every workload the runtime knows, running or finished and not yet removed, with its state,
  // exit code, reason and host ports (gpu_utilization_percent is left 0: the caller knows the
  // GPUs). Thread-safe.
  virtual std::vector<instance::v1::WorkloadStatus> List() const = 0;

  // `changed` runs (on a runtime thread, never under a runtime lock) after any workload's
  // state changes: started, probe passed, exited, stopped, failed. Set it before the first
  // Start; it must not block long.
  virtual void OnChange(std::function<void()> changed) = 0;
};

}  // namespace gpuaas::agent
