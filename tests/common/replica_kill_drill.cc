#include "tests/common/replica_kill_drill.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/rpc/metrics_scrape_test_util.h"

namespace gpuaas::testing {
namespace {

constexpr absl::Duration kAroundSignal = absl::Seconds(1);
constexpr size_t kFailuresKept = 20;
// How long a restarted replica may take to get calls again: the clients' channels retry a
// refused connection after about 1 s, then 1.6 s more, ...
constexpr absl::Duration kServeAgainTimeout = absl::Seconds(10);

// The clients' threads and every call they made.
class Load final {
 public:
  Load(int clients, const DrillRound& one_round) {
    result_.clients = clients;
    const TimedCall timed = [this](const char* what, const std::function<absl::Status()>& call) {
      Record(what, call);
    };
    for (int c = 0; c < clients; ++c) {
      threads_.emplace_back([this, c, one_round, timed] {
        for (int round = 0; !stop_; ++round) {
          one_round(c, round, timed);
        }
      });
    }
  }

  // A replica got a signal, or started, now.
  void Mark(bool signal) {
    absl::MutexLock lock(&mu_);
    (signal ? signals_ : starts_).push_back(absl::Now());
  }

  // Stops and joins the clients; the numbers of their calls.
  DrillResult Finish() {
    stop_ = true;
    for (std::thread& t : threads_) {
      t.join();
    }
    absl::MutexLock lock(&mu_);
    DrillResult& r = result_;
    std::vector<absl::Time> marks = signals_;
    marks.insert(marks.end(), starts_.begin(), starts_.end());
    for (const Sample& s : samples_) {
      const absl::Time end = s.start + s.took;
      r.max_latency = std::max(r.max_latency, s.took);
      r.started_after_signal += !signals_.empty() && s.start > signals_.front();
      r.in_flight_at_signal += std::any_of(signals_.begin(), signals_.end(),
                                           [&](absl::Time t) { return s.start < t && end > t; });
      if (std::any_of(marks.begin(), marks.end(), [&](absl::Time t) {
            return end > t - kAroundSignal && s.start < t + kAroundSignal;
          })) {
        r.max_latency_around_signal = std::max(r.max_latency_around_signal, s.took);
      }
    }
    return r;
  }

 private:
  struct Sample {
    absl::Time start;
    absl::Duration took;
  };

  void Record(const char* what, const std::function<absl::Status()>& call) {
    const absl::Time start = absl::Now();
    const absl::Status status = call();
    const absl::Duration took = absl::Now() - start;
    absl::MutexLock lock(&mu_);
    ++result_.calls;
    ++result_.calls_by_method[what];
    samples_.push_back({start, took});
    if (!status.ok()) {
      ++result_.failed;
      if (result_.failures.size() < kFailuresKept) {
        result_.failures.push_back(absl::StrCat(what, ": ", status.ToString()));
      }
    }
  }

  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  DrillResult result_ ABSL_GUARDED_BY(mu_);
  std::vector<Sample> samples_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> signals_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> starts_ ABSL_GUARDED_BY(mu_);
};

std::string Millis(absl::Duration d) {
  return absl::StrFormat("%.0f", absl::ToDoubleMilliseconds(d));
}

}  // namespace

std::vector<ReplicaProcess> StartReplicas(const std::string& binary, const std::string& name,
                                          const std::vector<std::string>& flags,
                                          const std::filesystem::path& log_dir) {
  std::vector<ReplicaProcess> replicas(2);
  for (int i = 0; i < 2; ++i) {
    ReplicaProcess& r = replicas[i];
    r.address = absl::StrCat("127.0.0.1:", FreePort());
    r.metrics_port = FreePort();
    r.argv = {binary, "--listen=" + r.address,
              absl::StrCat("--metrics-listen=127.0.0.1:", r.metrics_port)};
    for (const std::string& flag : flags) {
      r.argv.push_back(absl::StrReplaceAll(flag, {{"{replica}", absl::StrCat(i)}}));
    }
    r.log_file = (log_dir / absl::StrCat(name, "-", i, ".log")).string();
    r.process = std::make_unique<ChildProcess>(r.argv, r.log_file);
    if (!WaitServing(r.address)) {
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

std::vector<DrillReplica> DrillReplicas(std::vector<ReplicaProcess>& replicas) {
  std::vector<DrillReplica> out;
  for (ReplicaProcess& r : replicas) {
    out.push_back({
        .metrics_port = r.metrics_port,
        .kill = [&r] { EXPECT_EQ(kill(r.process->pid(), SIGKILL), 0); },
        .stop = [&r] { return r.process->Terminate() == 0; },
        .start =
            [&r] {
              r.process = std::make_unique<ChildProcess>(r.argv, r.log_file);
              return WaitServing(r.address);
            },
    });
  }
  return out;
}

void ExpectNoCallLost(const DrillResult& result) {
  EXPECT_EQ(result.failed, 0);
  EXPECT_EQ(result.failures, std::vector<std::string>{});
  EXPECT_GT(result.victim_served_before_kill, 0);  // the calls were spread over both
  EXPECT_GT(result.started_after_signal, 0);
  EXPECT_GE(result.survivor_served_after_kill, result.started_after_signal);
}

void ExpectNoCallFailedByRestarts(const DrillResult& result) {
  EXPECT_EQ(result.failed, 0);
  EXPECT_EQ(result.failures, std::vector<std::string>{});
  for (size_t i = 0; i < result.drain.size(); ++i) {
    EXPECT_GT(result.drain[i], absl::ZeroDuration()) << "replica " << i << " did not exit 0";
    EXPECT_GT(result.served_after_restart[i], 0) << "replica " << i << " got no calls again";
  }
}

double ServedRpcs(int metrics_port, std::string_view service) {
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
    const auto label = sample.labels.find("service");
    if (service.empty() || (label != sample.labels.end() && label->second == service)) {
      sum += sample.value;
    }
  }
  return sum;
}

std::string DrillResult::Summary() const {
  std::string restarts;
  for (size_t i = 0; i < drain.size(); ++i) {
    absl::StrAppend(&restarts, "; replica ", i, " drained and exited in ", Millis(drain[i]),
                    " ms, served again ", Millis(start[i]), " ms after its start (",
                    absl::StrFormat("%.0f", served_after_restart[i]),
                    " RPCs by the next one's turn or the end)");
  }
  const std::string kill =
      drain.empty()
          ? absl::StrFormat(
                "; the survivor completed %.0f RPCs after the kill; before it the victim had "
                "served %.0f, the survivor %.0f",
                survivor_served_after_kill, victim_served_before_kill, survivor_served_before_kill)
          : "";
  return absl::StrCat(calls, " calls by ", clients, " clients (",
                      absl::StrJoin(calls_by_method, ", ", absl::PairFormatter(" ")), "); failed ",
                      failed, "; ", in_flight_at_signal, " in flight at a signal; ",
                      started_after_signal, " started after the first", kill, restarts,
                      "; max latency ", Millis(max_latency), " ms, within ",
                      absl::ToDoubleSeconds(kAroundSignal), " s of a signal or start ",
                      Millis(max_latency_around_signal), " ms");
}

DrillResult ReplicaKillDrill::Run(int clients, const DrillRound& one_round) {
  Load load(clients, one_round);
  absl::SleepFor(before_kill_);
  const double victim_before = ServedRpcs(replicas_[0].metrics_port);
  const double survivor_before = ServedRpcs(replicas_[1].metrics_port);
  load.Mark(/*signal=*/true);
  replicas_[0].kill();
  absl::SleepFor(after_kill_);
  DrillResult result = load.Finish();
  result.victim_served_before_kill = victim_before;
  result.survivor_served_before_kill = survivor_before;
  result.survivor_served_after_kill = ServedRpcs(replicas_[1].metrics_port) - survivor_before;
  return result;
}

DrillResult RollingRestartDrill::Run(int clients, const DrillRound& one_round) {
  Load load(clients, one_round);
  std::vector<absl::Duration> drain;
  std::vector<absl::Duration> start;
  std::vector<double> served;
  absl::SleepFor(settle_);
  for (size_t i = 0; i < replicas_.size(); ++i) {
    DrillReplica& replica = replicas_[i];
    if (i > 0) {
      served.push_back(ServedRpcs(replicas_[i - 1].metrics_port, replicas_[i - 1].load_service));
    }
    load.Mark(/*signal=*/true);
    absl::Time t = absl::Now();
    drain.push_back(replica.stop() ? absl::Now() - t : absl::ZeroDuration());
    t = absl::Now();
    load.Mark(/*signal=*/false);
    EXPECT_TRUE(replica.start()) << "replica " << i << " did not serve after its restart";
    // Its counters start again at 0; past the drill's own health checks, what it counts came
    // from the load through the clients' channel.
    const double health_checks = ServedRpcs(replica.metrics_port, replica.load_service);
    while (ServedRpcs(replica.metrics_port, replica.load_service) <= health_checks &&
           absl::Now() - t < kServeAgainTimeout) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    start.push_back(absl::Now() - t);
  }
  absl::SleepFor(settle_);
  served.push_back(ServedRpcs(replicas_.back().metrics_port, replicas_.back().load_service));
  DrillResult result = load.Finish();
  result.drain = std::move(drain);
  result.start = std::move(start);
  result.served_after_restart = std::move(served);
  return result;
}

}  // namespace gpuaas::testing
