#include "tests/instance/fake_agent.h"

#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/common/proto_time.h"

namespace gpuaas::instance::testing {

FakeAgent::FakeAgent(const std::string& server_address, std::string token, std::string node_id,
                     Options options)
    : token_(std::move(token)), node_id_(std::move(node_id)), options_(std::move(options)) {
  stub_ = pb::NodeWorkloadService::NewStub(*client::OpenChannel(server_address, {}));
  stream_ctx_.AddMetadata("authorization", "Bearer " + token_);
  reader_ = std::thread([this] { ReadLoop(); });
}

FakeAgent::~FakeAgent() { Disconnect(); }

void FakeAgent::Disconnect() {
  if (disconnected_) return;
  disconnected_ = true;
  stream_ctx_.TryCancel();
  reader_.join();
}

int FakeAgent::sets() const {
  absl::MutexLock lock(&mu_);
  return sets_;
}

std::optional<pb::WorkloadSet> FakeAgent::last_set() const {
  absl::MutexLock lock(&mu_);
  return last_set_;
}

std::map<std::string, pb::Workload> FakeAgent::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

std::optional<grpc::Status> FakeAgent::ended() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

grpc::Status FakeAgent::Report(const std::vector<pb::WorkloadStatus>& statuses, bool complete) {
  pb::ReportWorkloadsRequest req;
  req.set_node_id(node_id_);
  req.set_complete(complete);
  for (const pb::WorkloadStatus& s : statuses) *req.add_workloads() = s;
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + token_);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  pb::ReportWorkloadsResponse resp;
  return stub_->ReportWorkloads(&ctx, req, &resp);
}

pb::WorkloadStatus FakeAgent::StatusOf(const pb::Workload& workload, pb::WorkloadState state) {
  pb::WorkloadStatus s;
  s.set_workload_id(workload.workload_id());
  s.set_instance_id(workload.instance_id());
  s.set_state(state);
  *s.mutable_state_time() = ToProtoTime(absl::Now());
  for (int i = 0; i < workload.ports_size(); ++i) {
    pb::PortMapping* m = s.add_ports();
    m->set_port(workload.ports(i).port());
    m->set_host_port(30000 + i);
  }
  return s;
}

void FakeAgent::ReadLoop() {
  pb::WatchWorkloadsRequest req;
  req.set_node_id(node_id_);
  req.set_address(options_.address);
  std::unique_ptr<grpc::ClientReader<pb::WorkloadSet>> reader =
      stub_->WatchWorkloads(&stream_ctx_, req);
  pb::WorkloadSet set;
  while (reader->Read(&set)) {
    {
      absl::MutexLock lock(&mu_);
      ++sets_;
      last_set_ = set;
    }
    if (options_.auto_run) Converge(set);
  }
  grpc::Status status = reader->Finish();
  absl::MutexLock lock(&mu_);
  ended_ = status;
}

void FakeAgent::Converge(const pb::WorkloadSet& set) {
  std::vector<pb::WorkloadStatus> statuses;
  std::map<std::string, pb::Workload> wanted;
  for (const pb::Workload& w : set.workloads()) wanted[w.workload_id()] = w;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = running_.begin(); it != running_.end();) {
      if (wanted.count(it->first) == 0) {
        statuses.push_back(StatusOf(it->second, pb::WORKLOAD_STATE_STOPPED));
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& [id, w] : wanted) {
      if (running_.count(id) == 0) {
        running_[id] = w;
        statuses.push_back(StatusOf(w, pb::WORKLOAD_STATE_STARTED));
        statuses.push_back(StatusOf(w, pb::WORKLOAD_STATE_RUNNING));
      }
    }
  }
  if (!statuses.empty()) (void)Report(statuses);
}

}  // namespace gpuaas::instance::testing
