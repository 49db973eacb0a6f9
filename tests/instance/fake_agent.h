// A node agent played by a gRPC client of NodeWorkloadService: it keeps a WatchWorkloads stream
// open and, in auto mode, "runs" every workload of the node's set by reporting STARTED and
// RUNNING for each new one and STOPPED for each that left the set, as the real agent would.
// Tests can also report by hand (exits, failures, utilization).
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"

namespace gpuaas::instance::testing {

namespace pb = ::gpuaas::instance::v1;

class FakeAgent final {
 public:
  struct Options {
    // Report STARTED + RUNNING for new workloads and STOPPED for removed ones.
    bool auto_run = true;
    // The address workloads' ports are reached at.
    std::string address = "127.0.0.1";
  };

  // Connects at once.
  FakeAgent(const std::string& server_address, std::string token, std::string node_id,
            Options options);
  FakeAgent(const std::string& server_address, std::string token, std::string node_id)
      : FakeAgent(server_address, std::move(token), std::move(node_id), Options{}) {}
  // Disconnect().
  ~FakeAgent();

  // Ends the stream (the agent went away). Idempotent.
  void Disconnect();

  // The sets received so far, and the latest.
  int sets() const;
  std::optional<pb::WorkloadSet> last_set() const;
  // The workloads it "runs", by workload id.
  std::map<std::string, pb::Workload> running() const;
  // How the stream ended (once it did).
  std::optional<grpc::Status> ended() const;

  grpc::Status Report(const std::vector<pb::WorkloadStatus>& statuses, bool complete = false);
  // A status of `workload` in `state` now.
  static pb::WorkloadStatus StatusOf(const pb::Workload& workload, pb::WorkloadState state);

 private:
  void ReadLoop();
  void Converge(const pb::WorkloadSet& set);

  const std::string token_;
  const std::string node_id_;
  const Options options_;
  std::unique_ptr<pb::NodeWorkloadService::Stub> stub_;
  grpc::ClientContext stream_ctx_;

  mutable absl::Mutex mu_;
  int sets_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<pb::WorkloadSet> last_set_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, pb::Workload> running_ ABSL_GUARDED_BY(mu_);
  std::optional<grpc::Status> ended_ ABSL_GUARDED_BY(mu_);
  bool disconnected_ = false;
  std::thread reader_;
};

}  // namespace gpuaas::instance::testing
