#include "services/agent/workload_sync.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/common/logging.h"
#include "libs/common/proto_time.h"

namespace gpuaas::agent {
namespace {

namespace pb = ::gpuaas::instance::v1;

bool Finished(pb::WorkloadState state) {
  return state == pb::WORKLOAD_STATE_EXITED || state == pb::WORKLOAD_STATE_STOPPED ||
         state == pb::WORKLOAD_STATE_FAILED;
}

// What a report says about a workload, to tell whether it changed since.
std::string Fingerprint(const pb::WorkloadStatus& s) {
  std::vector<std::string> ports;
  for (const auto& p : s.ports()) ports.push_back(absl::StrCat(p.port(), ":", p.host_port()));
  return absl::StrCat(s.state(), "/", s.exit_code(), "/", s.reason(), "/",
                      absl::StrJoin(ports, ","));
}

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

}  // namespace

WorkloadSync::WorkloadSync(std::shared_ptr<grpc::ChannelInterface> channel,
                           client::AccessTokens* tokens, Runtime& runtime,
                           UtilizationFn utilization, Options options)
    : instances_(std::move(channel), tokens, options.call_timeout),
      runtime_(runtime),
      utilization_(std::move(utilization)),
      options_(std::move(options)),
      report_interval_(options_.report_interval) {
  runtime_.OnChange([this] {
    absl::MutexLock lock(&mu_);
    changed_ = true;
  });
}

WorkloadSync::~WorkloadSync() {
  Stop();
  if (watcher_.joinable()) watcher_.join();
}

void WorkloadSync::Run() {
  watcher_ = std::thread([this] { WatchLoop(); });
  WorkLoop();
  watcher_.join();
}

void WorkloadSync::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  cancel_.Cancel();
}

bool WorkloadSync::Sleep(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stop_), d);
  return !stop_;
}

void WorkloadSync::WatchLoop() {
  Backoff backoff(options_.backoff);
  auto log = Logger("agent");
  bool quiet = false;  // one line per outage, not one per retry
  for (;;) {
    const absl::Time opened = absl::Now();
    const bool more = WatchOnce();
    stats_.connected = false;
    if (!more) return;
    // A stream that lived a while was a success: start the backoff over.
    if (absl::Now() - opened > absl::Seconds(10)) backoff.Reset();
    if (!quiet) log->info("instance service stream ended; reconnecting");
    quiet = true;
    if (!Sleep(backoff.Next())) return;
    if (stats_.connected) quiet = false;
  }
}

bool WorkloadSync::WatchOnce() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return false;
  }
  pb::WatchWorkloadsRequest req;
  req.set_node_id(options_.node_id);
  req.set_address(options_.address);
  req.set_agent_address(options_.agent_address);
  bool first = true;
  // However the stream ends (the service, the network, no token), the loop reconnects.
  instances_
      .WatchWorkloads(
          req,
          [&](const pb::WorkloadSet& set) {
            stats_.connected = true;
            ++stats_.sets;
            absl::MutexLock lock(&mu_);
            pending_set_ = set;
            // The service may have missed anything before.
            if (first) connected_since_report_ = true;
            first = false;
            return true;
          },
          client::CallContext().set_cancellation(cancel_))
      .IgnoreError();
  absl::MutexLock lock(&mu_);
  return !stop_;
}

void WorkloadSync::WorkLoop() {
  constexpr absl::Duration kSampleEvery = absl::Seconds(1);
  for (;;) {
    std::optional<pb::WorkloadSet> set;
    bool changed = false;
    bool complete_due = false;
    absl::Duration interval;
    {
      absl::MutexLock lock(&mu_);
      const absl::Time now = absl::Now();
      const absl::Duration wait =
          std::clamp(next_complete_ - now, absl::ZeroDuration(), kSampleEvery);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || pending_set_.has_value() || changed_ || connected_since_report_;
      };
      mu_.AwaitWithTimeout(absl::Condition(&woken), wait);
      if (stop_) return;
      set.swap(pending_set_);
      changed = changed_;
      changed_ = false;
      complete_due = connected_since_report_ || absl::Now() >= next_complete_;
      if (set.has_value() && set->has_report_interval()) {
        report_interval_ = std::max(absl::Seconds(1), FromProto(set->report_interval()));
      }
      interval = report_interval_;
    }
    if (set.has_value()) Converge(*set);
    if (changed && !complete_due) {
      // Let a burst of changes (a start, then its probe) settle into one report.
      Sleep(options_.debounce);
      absl::MutexLock lock(&mu_);
      changed_ = false;
    }
    if (complete_due && stats_.connected) {
      if (Report(/*complete=*/true)) {
        absl::MutexLock lock(&mu_);
        connected_since_report_ = false;
        next_complete_ = absl::Now() + interval;
      } else {
        next_complete_ = absl::Now() + absl::Seconds(1);
      }
    } else if ((changed || set.has_value()) && stats_.connected) {
      if (!Report(/*complete=*/false)) {
        // The next complete report (after the reconnect, or in a second) says it all.
        absl::MutexLock lock(&mu_);
        next_complete_ = std::min(next_complete_, absl::Now() + absl::Seconds(1));
      }
    }
    SampleUtilization(runtime_.List());
  }
}

void WorkloadSync::Converge(const pb::WorkloadSet& set) {
  auto log = Logger("agent");
  desired_.clear();
  for (const pb::Workload& w : set.workloads()) desired_[w.workload_id()] = w;
  std::set<std::string> known;
  for (const pb::WorkloadStatus& s : runtime_.List()) {
    known.insert(s.workload_id());
    if (!desired_.count(s.workload_id()) && !Finished(s.state())) {
      log->info("workload {} left the node's set: stopping it", s.workload_id());
      if (absl::Status stopped = runtime_.Stop(s.workload_id()); !stopped.ok()) {
        log->warn("workload {}: stop: {}", s.workload_id(), stopped.ToString());
      }
    }
  }
  stats_.workloads = static_cast<int64_t>(known.size());
  for (const auto& [id, w] : desired_) {
    if (known.count(id)) continue;
    log->info("workload {} (instance {}): starting", id, w.instance_id());
    // A failed start is listed FAILED by the runtime and reported as such.
    if (absl::Status started = runtime_.Start(w); !started.ok()) {
      log->warn("workload {}: start: {}", id, started.ToString());
    }
  }
}

bool WorkloadSync::Report(bool complete) {
  const std::vector<pb::WorkloadStatus> statuses = runtime_.List();
  stats_.workloads = static_cast<int64_t>(statuses.size());
  pb::ReportWorkloadsRequest req;
  req.set_node_id(options_.node_id);
  req.set_complete(complete);
  std::map<std::string, std::string> fingerprints;
  for (pb::WorkloadStatus s : statuses) {
    const std::string fp = Fingerprint(s);
    fingerprints[s.workload_id()] = fp;
    auto it = reported_.find(s.workload_id());
    if (!complete && it != reported_.end() && it->second == fp) continue;
    for (pb::PortMapping& p : *s.mutable_ports()) {
      if (p.host().empty()) p.set_host(options_.address);
    }
    if (auto peak = peak_utilization_.find(s.workload_id()); peak != peak_utilization_.end()) {
      s.set_gpu_utilization_percent(peak->second);
    }
    *req.add_workloads() = std::move(s);
  }
  if (!complete && req.workloads_size() == 0) return true;
  absl::StatusOr<pb::ReportWorkloadsResponse> resp = instances_.ReportWorkloads(req);
  if (!resp.ok()) {
    Logger("agent")->debug("ReportWorkloads: {}", resp.status().ToString());
    return false;
  }
  ++stats_.reports;
  for (const pb::WorkloadStatus& s : req.workloads()) {
    reported_[s.workload_id()] = fingerprints[s.workload_id()];
  }
  if (complete) peak_utilization_.clear();
  // Finished workloads that left the set were reported for the last time: forget them once
  // their logs were kept long enough.
  const absl::Time now = absl::Now();
  for (const pb::WorkloadStatus& s : statuses) {
    if (Finished(s.state()) && !desired_.count(s.workload_id()) &&
        reported_[s.workload_id()] == fingerprints[s.workload_id()] &&
        now - FromProtoTime(s.state_time()) >= options_.keep_finished) {
      if (runtime_.Remove(s.workload_id()).ok()) {
        reported_.erase(s.workload_id());
        peak_utilization_.erase(s.workload_id());
      }
    }
  }
  return true;
}

void WorkloadSync::SampleUtilization(const std::vector<pb::WorkloadStatus>& statuses) {
  for (const pb::WorkloadStatus& s : statuses) {
    if (Finished(s.state())) continue;
    auto it = desired_.find(s.workload_id());
    if (it == desired_.end() || it->second.gpu_uuids().empty()) continue;
    const std::vector<std::string> gpus(it->second.gpu_uuids().begin(),
                                        it->second.gpu_uuids().end());
    double& peak = peak_utilization_[s.workload_id()];
    peak = std::max(peak, utilization_(gpus));
  }
}

}  // namespace gpuaas::agent
