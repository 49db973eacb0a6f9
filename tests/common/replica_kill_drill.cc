#include "tests/common/replica_kill_drill.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/rpc/metrics_scrape_test_util.h"

namespace gpuaas::testing {
namespace {

constexpr absl::Duration kAroundKill = absl::Seconds(1);
constexpr size_t kFailuresKept = 20;

}  // namespace

std::vector<ReplicaProcess> StartReplicas(const std::string& binary, const std::string& name,
                                          const std::vector<std::string>& flags,
                                          const std::filesystem::path& log_dir) {
  std::vector<ReplicaProcess> replicas(2);
  for (int i = 0; i < 2; ++i) {
    replicas[i].address = absl::StrCat("127.0.0.1:", FreePort());
    replicas[i].metrics_port = FreePort();
    std::vector<std::string> argv = {
        binary, "--listen=" + replicas[i].address,
        absl::StrCat("--metrics-listen=127.0.0.1:", replicas[i].metrics_port)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    replicas[i].process = std::make_unique<ChildProcess>(
        argv, (log_dir / absl::StrCat(name, "-", i, ".log")).string());
    if (!WaitServing(replicas[i].address)) {
      ADD_FAILURE() << name << " replica " << i << " did not serve; see " << log_dir;
      return {};
    }
  }
  return replicas;
}

std::string AddressList(const std::vector<ReplicaProcess>& replicas) {
  std::string out;
  for (const ReplicaProcess& r : replicas) {
    absl::StrAppend(&out, out.empty() ? "" : ",", r.address);
  }
  return out;
}

void ExpectNoCallLost(const KillDrillResult& result) {
  EXPECT_EQ(result.failed, 0);
  EXPECT_EQ(result.failures, std::vector<std::string>{});
  EXPECT_GT(result.victim_served_before_kill, 0);  // the calls were spread over both
  EXPECT_GT(result.started_after_kill, 0);
  EXPECT_GE(result.survivor_served_after_kill, result.started_after_kill);
}

double ServedRpcs(int metrics_port) {
  absl::StatusOr<std::string> text = rpc::test::ScrapeMetrics(metrics_port);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) {
    return 0;
  }
  absl::StatusOr<rpc::test::Exposition> parsed = rpc::test::Exposition::Parse(*text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) {
    return 0;
  }
  double sum = 0;
  for (const auto& sample : parsed->All("gpuaas_rpc_requests_total")) {
    sum += sample.value;
  }
  return sum;
}

std::string KillDrillResult::Summary() const {
  return absl::StrFormat(
      "%d calls by %d clients; failed %d; %d in flight at the kill; %d calls started after the "
      "kill, the survivor completed %.0f RPCs after it; before the kill the victim had served "
      "%.0f, the survivor %.0f; max latency %.0f ms, within %.0f s of the kill %.0f ms",
      calls, clients, failed, in_flight_at_kill, started_after_kill, survivor_served_after_kill,
      victim_served_before_kill, survivor_served_before_kill,
      absl::ToDoubleMilliseconds(max_latency), absl::ToDoubleSeconds(kAroundKill),
      absl::ToDoubleMilliseconds(max_latency_around_kill));
}

KillDrillResult ReplicaKillDrill::Run(
    int clients, const std::function<void(int, int, const TimedCall&)>& one_round) {
  absl::Mutex mu;
  KillDrillResult result;
  result.clients = clients;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> kill_ns{std::numeric_limits<int64_t>::max()};
  const TimedCall timed = [&](const char* what, const std::function<absl::Status()>& call) {
    const absl::Time start = absl::Now();
    const absl::Status status = call();
    const absl::Duration took = absl::Now() - start;
    const absl::Time kill_time = absl::FromUnixNanos(kill_ns.load());
    absl::MutexLock lock(&mu);
    ++result.calls;
    result.started_after_kill += start > kill_time;
    result.in_flight_at_kill += start < kill_time && start + took > kill_time;
    result.max_latency = std::max(result.max_latency, took);
    if (start + took > kill_time - kAroundKill && start < kill_time + kAroundKill) {
      result.max_latency_around_kill = std::max(result.max_latency_around_kill, took);
    }
    if (!status.ok()) {
      ++result.failed;
      if (result.failures.size() < kFailuresKept) {
        result.failures.push_back(absl::StrCat(what, ": ", status.ToString()));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (int round = 0; !stop; ++round) {
        one_round(c, round, timed);
      }
    });
  }
  absl::SleepFor(before_kill_);
  const double victim_before = ServedRpcs(replicas_[0].metrics_port);
  const double survivor_before = ServedRpcs(replicas_[1].metrics_port);
  kill_ns = absl::ToUnixNanos(absl::Now());
  EXPECT_EQ(kill(replicas_[0].process->pid(), SIGKILL), 0);
  absl::SleepFor(after_kill_);
  stop = true;
  for (std::thread& t : threads) {
    t.join();
  }
  absl::MutexLock lock(&mu);
  result.victim_served_before_kill = victim_before;
  result.survivor_served_before_kill = survivor_before;
  result.survivor_served_after_kill = ServedRpcs(replicas_[1].metrics_port) - survivor_before;
  return result;
}

}  // namespace gpuaas::testing
