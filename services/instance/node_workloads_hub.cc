#include "services/instance/node_workloads_hub.h"

#include <vector>

#include "absl/time/clock.h"
#include "libs/common/logging.h"

namespace gpuaas::instance {

NodeSetHub::NodeSetHub(NodeWorkloads& workloads, NodeSetHubOptions options)
    : workloads_(workloads), options_(std::move(options)) {}

NodeSetHub::~NodeSetHub() { Stop(); }

void NodeSetHub::Start() {
  if (!options_.listen_dsn.empty()) {
    listener_ = std::make_unique<db::NotifyListener>(
        options_.listen_dsn, std::vector<std::string>{"node_workloads"},
        db::NotifyCallbacks{
            .on_notify = [this](std::string_view,
                                std::string_view node_id) { NodeChanged(std::string(node_id)); },
            // Changes while the connection was down went unheard: every stream gets its set.
            .on_connect = [this] { AllChanged(); }});
    listener_->Start();
  }
  sender_ = std::thread([this] { SendLoop(); });
}

void NodeSetHub::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  stopping_.Stop();
  if (listener_) listener_->Stop();
  if (sender_.joinable()) sender_.join();
}

int64_t NodeSetHub::Subscribe(const std::string& node_id, Writer writer) {
  absl::MutexLock lock(&mu_);
  const int64_t handle = next_handle_++;
  streams_[handle] = Stream{node_id, std::move(writer)};
  dirty_.insert(node_id);
  return handle;
}

void NodeSetHub::Unsubscribe(int64_t handle) {
  absl::MutexLock lock(&mu_);
  streams_.erase(handle);
}

void NodeSetHub::NodeChanged(const std::string& node_id) {
  absl::MutexLock lock(&mu_);
  for (const auto& [handle, stream] : streams_) {
    if (stream.node_id == node_id) {
      dirty_.insert(node_id);
      return;
    }
  }
}

void NodeSetHub::AllChanged() {
  absl::MutexLock lock(&mu_);
  for (const auto& [handle, stream] : streams_) dirty_.insert(stream.node_id);
}

int NodeSetHub::open_streams() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(streams_.size());
}

void NodeSetHub::SendLoop() {
  auto log = Logger("instance");
  absl::Time next_touch = absl::Now();
  while (!stopping_.stopped()) {
    std::string node_id;
    std::vector<std::string> open_nodes;
    {
      absl::MutexLock lock(&mu_);
      const auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !dirty_.empty() || stopped_;
      };
      mu_.AwaitWithDeadline(absl::Condition(&ready), next_touch);
      if (stopped_) return;
      if (!dirty_.empty()) {
        node_id = *dirty_.begin();
        dirty_.erase(dirty_.begin());
      }
      if (absl::Now() >= next_touch) {
        for (const auto& [handle, stream] : streams_) open_nodes.push_back(stream.node_id);
      }
    }
    if (absl::Now() >= next_touch) {
      next_touch = absl::Now() + options_.touch_interval;
      std::sort(open_nodes.begin(), open_nodes.end());
      open_nodes.erase(std::unique(open_nodes.begin(), open_nodes.end()), open_nodes.end());
      if (absl::Status s = workloads_.TouchNodes(open_nodes); !s.ok()) {
        log->warn("marking {} watched nodes seen: {}", open_nodes.size(), s.ToString());
      }
    }
    if (node_id.empty()) continue;
    absl::StatusOr<pb::WorkloadSet> set = workloads_.NodeSet(node_id);
    if (!set.ok()) {
      log->warn("reading the workload set of node {}: {}", node_id, set.status().ToString());
      NodeChanged(node_id);
      stopping_.WaitFor(options_.retry_interval);
      continue;
    }
    std::vector<Writer> writers;
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [handle, stream] : streams_) {
        if (stream.node_id == node_id) writers.push_back(stream.writer);
      }
    }
    for (const Writer& w : writers) w->Send(*set);
  }
}

}  // namespace gpuaas::instance
