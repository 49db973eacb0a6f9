// The agent's link to the instance service (NodeWorkloadService in instance.proto): one
// WatchWorkloads stream brings the node's whole desired workload set, on connect and after
// every change, and the runtime is made to match it — what is missing starts, what left the set
// stops, what finished and was reported is forgotten. ReportWorkloads tells the service what
// the workloads do: the changed ones as soon as the runtime says (debounced by a few
// milliseconds), and all of them (a complete report) after each connect and every
// report_interval, which also keeps the node alive in the service's eyes. After any break the
// stream is reopened after a jittered backoff and the next set converges the node again.
//
//   WorkloadSync sync(channel, &tokens, runtime, utilization, {.node_id = "gpu-7"});
//   std::thread t([&] { sync.Run(); });
//   ...
//   sync.Stop();  // Run returns promptly
//   t.join();
#pragma once

#include <grpcpp/channel.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/client/access_tokens.h"
#include "libs/client/cancellation.h"
#include "libs/client/node_workload_client.h"
#include "libs/common/backoff.h"
#include "services/agent/runtime/runtime.h"

namespace gpuaas::agent {

// What the sync has achieved, for the metrics endpoint. Read without locks.
struct SyncStats {
  std::atomic<bool> connected{false};  // a WatchWorkloads stream is open
  std::atomic<int64_t> sets{0};        // desired sets received
  std::atomic<int64_t> reports{0};     // ReportWorkloads calls that succeeded
  std::atomic<int64_t> workloads{0};   // workloads the runtime knows
};

class WorkloadSync final {
 public:
  struct Options {
    std::string node_id;
    // Where the node's host ports are reached: each port mapping's host.
    std::string address = "127.0.0.1";
    // Where the agent's own gRPC server (WorkloadLogService) is reached, "host:port"; empty
    // when it serves none.
    std::string agent_address;
    // A finished workload that left the set keeps its directory (its logs) this long before
    // the runtime forgets it, so the logs of a failed instance can still be read.
    absl::Duration keep_finished = absl::Hours(1);
    absl::Duration call_timeout = absl::Seconds(5);
    // Until the service's first set says otherwise.
    absl::Duration report_interval = absl::Seconds(10);
    // Runtime changes closer together than this go out in one report.
    absl::Duration debounce = absl::Milliseconds(5);
    Backoff::Options backoff;
  };

  // The highest utilization, in percent, of these GPUs now. Called on the sync's thread.
  using UtilizationFn = std::function<double(const std::vector<std::string>& gpu_uuids)>;

  // `channel` to the instance service; `tokens` (may be null: no token is sent) and `runtime`
  // must outlive the sync. Sets the runtime's OnChange.
  WorkloadSync(std::shared_ptr<grpc::ChannelInterface> channel, client::AccessTokens* tokens,
               Runtime& runtime, UtilizationFn utilization, Options options);
  ~WorkloadSync();

  // Watches, converges and reports until Stop. Blocks.
  void Run();
  // Makes Run return soon. Thread-safe; returns at once.
  void Stop();

  const SyncStats& stats() const { return stats_; }

 private:
  // The stream half: opens WatchWorkloads and hands each set over, until Stop.
  void WatchLoop();
  // One stream from open to end; false when it ended because of Stop.
  bool WatchOnce();
  // The work half, on Run's thread: converge on the newest set, report, sample utilization.
  void WorkLoop();
  void Converge(const instance::v1::WorkloadSet& set);
  // Reports the workloads whose state changed since the last report (all with `complete`).
  // True when the service took it (or there was nothing to say).
  bool Report(bool complete);
  void SampleUtilization(const std::vector<instance::v1::WorkloadStatus>& statuses);
  bool Sleep(absl::Duration d);

  client::NodeWorkloadClient instances_;
  Runtime& runtime_;
  UtilizationFn utilization_;
  const Options options_;
  SyncStats stats_;

  // Run's thread only.
  std::map<std::string, instance::v1::Workload> desired_;  // by workload_id
  std::map<std::string, std::string> reported_;            // workload_id → state+ports reported
  std::map<std::string, double> peak_utilization_;         // since the last complete report
  absl::Time next_complete_ = absl::InfinitePast();

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  client::Cancellation cancel_;  // Stop's: ends the watch in flight
  std::optional<instance::v1::WorkloadSet> pending_set_ ABSL_GUARDED_BY(mu_);
  bool connected_since_report_ ABSL_GUARDED_BY(mu_) = false;  // a complete report is due
  bool changed_ ABSL_GUARDED_BY(mu_) = false;                 // the runtime said something
  absl::Duration report_interval_ ABSL_GUARDED_BY(mu_);
  std::thread watcher_;
};

}  // namespace gpuaas::agent
