// The open WatchWorkloads streams of one process and what feeds them: one LISTEN on
// node_workloads (whoever commits a change of a node's set, in any replica, notifies the
// node's id), fanned out to the streams of that node. A changed node's set is read once and
// sent to each of its streams; all sends happen on the hub's one sender thread, in the order
// the sets were read, so a stream never gets an older set after a newer one. The hub also keeps
// the nodes of open streams seen (instance.nodes.last_seen) while their streams stay open.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/common/stop_signal.h"
#include "libs/db/notify_listener.h"
#include "libs/rpc/server_stream.h"
#include "services/instance/node_workloads.h"

namespace gpuaas::instance {

struct NodeSetHubOptions {
  // The DSN the listener connects to; empty: no listener (sets change on NodeChanged only).
  std::string listen_dsn;
  // How often the nodes of open streams are marked seen.
  absl::Duration touch_interval = absl::Seconds(5);
  // How long a failed set read waits before the next try.
  absl::Duration retry_interval = absl::Milliseconds(500);
};

class NodeSetHub final {
 public:
  using Writer = std::shared_ptr<rpc::StreamWriter<pb::WorkloadSet>>;

  NodeSetHub(NodeWorkloads& workloads, NodeSetHubOptions options);
  // Stop().
  ~NodeSetHub();
  NodeSetHub(const NodeSetHub&) = delete;
  NodeSetHub& operator=(const NodeSetHub&) = delete;

  // Starts the listener and the sender thread. Call once.
  void Start();
  // Ends both; streams stay open (the server ends them). Idempotent.
  void Stop();

  // Adds a stream of `node_id`; its first set (the node's whole set now) follows shortly from
  // the sender thread. Returns a handle for Unsubscribe. Thread-safe, never blocks.
  int64_t Subscribe(const std::string& node_id, Writer writer);
  void Unsubscribe(int64_t handle);

  // The node's set may have changed: send it again to its streams. Thread-safe, never blocks.
  void NodeChanged(const std::string& node_id);

  // Streams open now, for tests and metrics.
  int open_streams() const;

 private:
  struct Stream {
    std::string node_id;
    Writer writer;
  };

  void SendLoop();
  void AllChanged();

  NodeWorkloads& workloads_;
  const NodeSetHubOptions options_;
  std::unique_ptr<db::NotifyListener> listener_;

  mutable absl::Mutex mu_;
  int64_t next_handle_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int64_t, Stream> streams_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  StopSignal stopping_;
  std::thread sender_;
};

}  // namespace gpuaas::instance
