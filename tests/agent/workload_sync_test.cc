// The agent's WorkloadSync over real gRPC on loopback, against a NodeWorkloadService written
// here (the real one runs in tests/platform) and a runtime that records what it is asked: sets
// start and stop workloads, every change is reported, complete reports follow each connect,
// finished workloads that left the set are forgotten once reported, a restarted service gets
// the node converged again, and utilization is the peak since the last complete report.
#include "services/agent/workload_sync.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "libs/testing/eventually.h"
#include "tests/common/child_process.h"

namespace gpuaas::agent {
namespace {

namespace pb = ::gpuaas::instance::v1;
using gpuaas::testing::Eventually;

// A runtime that runs nothing: Start lists a workload STARTED, Stop turns it STOPPED; tests
// move states by hand.
class RecordingRuntime final : public Runtime {
 public:
  absl::Status Start(const pb::Workload& w) override {
    {
      absl::MutexLock lock(&mu_);
      if (workloads_.count(w.workload_id())) return absl::OkStatus();
      ++starts_[w.workload_id()];
      pb::WorkloadStatus& s = workloads_[w.workload_id()];
      s.set_workload_id(w.workload_id());
      s.set_instance_id(w.instance_id());
      s.set_state(pb::WORKLOAD_STATE_STARTED);
      for (const auto& p : w.ports()) {
        pb::PortMapping* m = s.add_ports();
        m->set_port(p.port());
        m->set_host_port(20000 + p.port());
      }
    }
    Changed();
    return absl::OkStatus();
  }
  absl::Status Stop(std::string_view id) override {
    Set(std::string(id), pb::WORKLOAD_STATE_STOPPED);
    return absl::OkStatus();
  }
  absl::Status Remove(std::string_view id) override {
    absl::MutexLock lock(&mu_);
    workloads_.erase(std::string(id));
    removed_.push_back(std::string(id));
    return absl::OkStatus();
  }
  std::vector<pb::WorkloadStatus> List() const override {
    absl::MutexLock lock(&mu_);
    std::vector<pb::WorkloadStatus> out;
    for (const auto& [id, s] : workloads_) out.push_back(s);
    return out;
  }
  void OnChange(std::function<void()> changed) override {
    absl::MutexLock lock(&mu_);
    changed_ = std::move(changed);
  }

  void Set(const std::string& id, pb::WorkloadState state) {
    {
      absl::MutexLock lock(&mu_);
      auto it = workloads_.find(id);
      if (it == workloads_.end()) return;
      it->second.set_state(state);
    }
    Changed();
  }
  std::map<std::string, int> starts() const {
    absl::MutexLock lock(&mu_);
    return starts_;
  }
  std::vector<std::string> removed() const {
    absl::MutexLock lock(&mu_);
    return removed_;
  }
  std::optional<pb::WorkloadState> StateOf(const std::string& id) const {
    absl::MutexLock lock(&mu_);
    auto it = workloads_.find(id);
    if (it == workloads_.end()) return std::nullopt;
    return it->second.state();
  }

 private:
  void Changed() {
    std::function<void()> f;
    {
      absl::MutexLock lock(&mu_);
      f = changed_;
    }
    if (f) f();
  }
  mutable absl::Mutex mu_;
  std::map<std::string, pb::WorkloadStatus> workloads_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> starts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> removed_ ABSL_GUARDED_BY(mu_);
  std::function<void()> changed_ ABSL_GUARDED_BY(mu_);
};

// The service side: pushes the set the test gives it to every open stream, and keeps every
// report.
class TestNodeService final : public pb::NodeWorkloadService::Service {
 public:
  grpc::Status WatchWorkloads(grpc::ServerContext* ctx, const pb::WatchWorkloadsRequest* req,
                              grpc::ServerWriter<pb::WorkloadSet>* writer) override {
    int64_t sent = -1;
    absl::MutexLock lock(&mu_);
    ++streams_;
    while (!ctx->IsCancelled() && !closing_) {
      if (sent != version_) {
        pb::WorkloadSet set = set_;
        set.set_node_id(req->node_id());
        sent = version_;
        mu_.Unlock();
        const bool ok = writer->Write(set);
        mu_.Lock();
        if (!ok) break;
      }
      mu_.AwaitWithTimeout(absl::Condition(&closing_), absl::Milliseconds(10));
    }
    return grpc::Status::OK;
  }
  grpc::Status ReportWorkloads(grpc::ServerContext*, const pb::ReportWorkloadsRequest* req,
                               pb::ReportWorkloadsResponse*) override {
    absl::MutexLock lock(&mu_);
    reports_.push_back(*req);
    return grpc::Status::OK;
  }

  void SetWorkloads(std::vector<pb::Workload> workloads) {
    absl::MutexLock lock(&mu_);
    set_.clear_workloads();
    for (auto& w : workloads) *set_.add_workloads() = std::move(w);
    set_.mutable_report_interval()->set_seconds(1);
    ++version_;
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  std::vector<pb::ReportWorkloadsRequest> reports() const {
    absl::MutexLock lock(&mu_);
    return reports_;
  }
  int streams() const {
    absl::MutexLock lock(&mu_);
    return streams_;
  }
  // The newest state reported for `id`, from any report.
  std::optional<pb::WorkloadStatus> LastReported(const std::string& id) const {
    absl::MutexLock lock(&mu_);
    for (auto it = reports_.rbegin(); it != reports_.rend(); ++it) {
      for (const auto& s : it->workloads()) {
        if (s.workload_id() == id) return s;
      }
    }
    return std::nullopt;
  }

 private:
  mutable absl::Mutex mu_;
  pb::WorkloadSet set_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  int streams_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<pb::ReportWorkloadsRequest> reports_ ABSL_GUARDED_BY(mu_);
};

pb::Workload MakeWorkload(const std::string& id, std::vector<std::string> gpus = {"GPU-0"}) {
  pb::Workload w;
  w.set_workload_id(id);
  w.set_instance_id(id.substr(0, id.find('.')));
  w.set_cmd("sleep 1");
  w.add_ports()->set_port(8080);
  for (auto& g : gpus) w.add_gpu_uuids(g);
  return w;
}

class WorkloadSyncTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(); }
  void TearDown() override {
    if (sync_) sync_->Stop();
    if (thread_.joinable()) thread_.join();
    StopServer();
  }

  void StartServer() {
    service_ = std::make_unique<TestNodeService>();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port_),
                             grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void StopServer() {
    if (!server_) return;
    service_->Close();
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server_.reset();
  }

  void StartSync() {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                       grpc::InsecureChannelCredentials());
    sync_ = std::make_unique<WorkloadSync>(
        channel, nullptr, runtime_,
        [this](const std::vector<std::string>& gpus) {
          absl::MutexLock lock(&mu_);
          return utilization_;
        },
        WorkloadSync::Options{
            .node_id = "node-1",
            .address = "10.0.0.7",
            .backoff = {.initial = absl::Milliseconds(50), .max = absl::Milliseconds(200)}});
    thread_ = std::thread([this] { sync_->Run(); });
  }

  int port_ = 0;
  std::unique_ptr<TestNodeService> service_;
  std::unique_ptr<grpc::Server> server_;
  RecordingRuntime runtime_;
  std::unique_ptr<WorkloadSync> sync_;
  std::thread thread_;
  absl::Mutex mu_;
  double utilization_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(WorkloadSyncTest, StartsTheSetStopsWhatLeavesItAndReportsEachChange) {
  service_->SetWorkloads({MakeWorkload("a.1"), MakeWorkload("b.1")});
  StartSync();
  ASSERT_TRUE(Eventually([&] { return runtime_.starts().size() == 2; }, absl::Seconds(10)));
  ASSERT_TRUE(
      Eventually([&] { return service_->LastReported("a.1").has_value(); }, absl::Seconds(10)));
  const pb::WorkloadStatus a = *service_->LastReported("a.1");
  EXPECT_EQ(a.state(), pb::WORKLOAD_STATE_STARTED);
  ASSERT_EQ(a.ports_size(), 1);
  EXPECT_EQ(a.ports(0).host(), "10.0.0.7");
  EXPECT_EQ(a.ports(0).host_port(), 28080);

  // The probe passes: reported at once, not at the next complete report.
  runtime_.Set("a.1", pb::WORKLOAD_STATE_RUNNING);
  EXPECT_TRUE(Eventually(
      [&] { return service_->LastReported("a.1")->state() == pb::WORKLOAD_STATE_RUNNING; },
      absl::Milliseconds(900)));

  // b leaves the set: stopped, reported STOPPED, then forgotten.
  service_->SetWorkloads({MakeWorkload("a.1")});
  EXPECT_TRUE(Eventually(
      [&] {
        auto b = service_->LastReported("b.1");
        return b && b->state() == pb::WORKLOAD_STATE_STOPPED;
      },
      absl::Seconds(10)));
  EXPECT_TRUE(Eventually([&] { return !runtime_.StateOf("b.1").has_value(); }, absl::Seconds(10)));
  EXPECT_EQ(runtime_.starts().at("a.1"), 1) << "a set again is not a second start";
}

TEST_F(WorkloadSyncTest, CompleteReportsFollowEachConnectAndTheServiceRestartConverges) {
  service_->SetWorkloads({MakeWorkload("a.1")});
  StartSync();
  ASSERT_TRUE(Eventually(
      [&] {
        for (const auto& r : service_->reports()) {
          if (r.complete() && r.workloads_size() == 1) return true;
        }
        return false;
      },
      absl::Seconds(10)));
  // The service goes away and comes back with another set (on the same port).
  StopServer();
  StartServer();
  service_->SetWorkloads({MakeWorkload("c.1")});
  ASSERT_TRUE(Eventually([&] { return runtime_.starts().count("c.1") == 1; }, absl::Seconds(10)));
  EXPECT_TRUE(Eventually(
      [&] { return runtime_.StateOf("a.1") != std::optional(pb::WORKLOAD_STATE_STARTED); },
      absl::Seconds(10)))
      << "a left the set while the service was away";
  EXPECT_TRUE(Eventually(
      [&] {
        for (const auto& r : service_->reports()) {
          if (r.complete()) return true;
        }
        return false;
      },
      absl::Seconds(10)))
      << "a complete report after the reconnect";
}

TEST_F(WorkloadSyncTest, UtilizationIsThePeakSinceTheLastCompleteReport) {
  service_->SetWorkloads({MakeWorkload("a.1")});
  {
    absl::MutexLock lock(&mu_);
    utilization_ = 80;
  }
  StartSync();
  ASSERT_TRUE(Eventually([&] { return runtime_.starts().size() == 1; }, absl::Seconds(10)));
  absl::SleepFor(absl::Milliseconds(1200));  // at least one sample at 80
  {
    absl::MutexLock lock(&mu_);
    utilization_ = 3;
  }
  EXPECT_TRUE(Eventually(
      [&] {
        for (const auto& r : service_->reports()) {
          for (const auto& s : r.workloads()) {
            if (r.complete() && s.gpu_utilization_percent() == 80) return true;
          }
        }
        return false;
      },
      absl::Seconds(10)));
  // Later complete reports see only the low readings.
  EXPECT_TRUE(Eventually(
      [&] {
        auto reports = service_->reports();
        const auto& last = reports.back();
        return last.complete() && last.workloads_size() == 1 &&
               last.workloads(0).gpu_utilization_percent() == 3;
      },
      absl::Seconds(10)));
}

}  // namespace
}  // namespace gpuaas::agent
