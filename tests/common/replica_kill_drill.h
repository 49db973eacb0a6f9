// The replica drills' engine (issue 25), shared by each service's drills: clients call a
// service's replicas through one "a,b" address in a loop while the drill disrupts them, and the
// loop goes on. Two disruptions:
//   - ReplicaKillDrill: after a while the first replica gets SIGKILL.
//   - RollingRestartDrill: each replica in turn gets SIGTERM (it drains: rpc::Server::Shutdown),
//     exits, starts again on the same ports and serves calls of the load, then the next.
// What comes back: every call's outcome and latency around the disruptions, and what each
// replica served (from its /metrics).
//
//   ReplicaKillDrill drill(replicas);  // two running processes
//   DrillResult r = drill.Run(4, [&](int client, int round, const TimedCall& timed) {
//     timed("GetSpec", [&] { return stock.GetSpec(req, call).status(); });
//   });
//   EXPECT_EQ(r.failed, 0) << r.Summary();
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tests/common/child_process.h"

namespace gpuaas::testing {

// One replica: its gRPC address, its metrics port and its process, and how to start it again.
struct ReplicaProcess {
  std::string address;
  int metrics_port = 0;
  std::vector<std::string> argv;
  std::string log_file;
  std::unique_ptr<ChildProcess> process;
};

// Two processes of `binary` with `flags` ("{replica}" in one becomes the replica's number, 0 or
// 1: a directory of its own) and --listen, --metrics-listen on free ports, logs
// "<name>-0.log", "<name>-1.log" in `log_dir`, started one after the other (each SERVING
// before the next starts: a first replica may bootstrap what the second finds). Empty, with a
// test failure, when one does not come up.
std::vector<ReplicaProcess> StartReplicas(const std::string& binary, const std::string& name,
                                          const std::vector<std::string>& flags,
                                          const std::filesystem::path& log_dir);

// "a,b": the one address that lists the replicas.
std::string AddressList(const std::vector<ReplicaProcess>& replicas);

// RPCs the process at `metrics_port` completed (its gpuaas_rpc_requests_total): every method's,
// or only `service`'s ("gpuaas.instance.v1.InstanceService"). Adds a test failure (and returns
// 0) when the scrape fails.
double ServedRpcs(int metrics_port, std::string_view service = "");

// What a drill does to one replica, whoever runs it (a ReplicaProcess, a platform stack's
// daemon). Each blocks until done.
struct DrillReplica {
  int metrics_port = 0;
  // The service the load calls, when the replica serves others too (agents' streams): only its
  // calls show that the load reaches the replica again. Empty: every service's.
  std::string load_service;
  std::function<void()> kill;   // SIGKILL, reaped
  std::function<bool()> stop;   // SIGTERM; true when it exited 0
  std::function<bool()> start;  // again, on the same ports; true once it reports SERVING
};

// The DrillReplicas of processes that must outlive them.
std::vector<DrillReplica> DrillReplicas(std::vector<ReplicaProcess>& replicas);

struct DrillResult {
  int clients = 0;
  int calls = 0;
  std::map<std::string, int> calls_by_method;
  int failed = 0;
  std::vector<std::string> failures;  // the first 20: "Method: CODE: message"
  // Calls running when a replica got its signal (any of them), and started after the first.
  int in_flight_at_signal = 0;
  int started_after_signal = 0;
  // The kill drill: what each served before the kill, and the survivor after it.
  double victim_served_before_kill = 0;
  double survivor_served_before_kill = 0;
  double survivor_served_after_kill = 0;
  // The rolling restart: per replica, SIGTERM to exit, start to SERVING, and the RPCs its new
  // process served before the next replica's turn.
  std::vector<absl::Duration> drain;
  std::vector<absl::Duration> start;
  std::vector<double> served_after_restart;
  absl::Duration max_latency;
  absl::Duration max_latency_around_signal;  // calls running within 1 s of a signal or a start

  // One line of the numbers above, for the log and bench/RESULTS.md.
  std::string Summary() const;
};

// The kill drill passes: no call failed, both replicas served before the kill, and the
// survivor served every call started after it.
void ExpectNoCallLost(const DrillResult& result);

// The rolling restart passes: no call failed, every replica drained and exited 0 (a zero
// drain time marks one that did not), and each served the load again after its restart.
void ExpectNoCallFailedByRestarts(const DrillResult& result);

// Times one call: what(name, call) runs `call` and records its status under `name`.
using TimedCall = std::function<void(const char*, const std::function<absl::Status()>&)>;
// One client's round of calls: one_round(client, round, timed).
using DrillRound = std::function<void(int, int, const TimedCall&)>;

class ReplicaKillDrill final {
 public:
  // `replicas` are running; [0] is killed, [1] survives. Both must outlive the drill.
  explicit ReplicaKillDrill(std::vector<ReplicaProcess>& replicas,
                            absl::Duration before_kill = absl::Seconds(3),
                            absl::Duration after_kill = absl::Seconds(4))
      : ReplicaKillDrill(DrillReplicas(replicas), before_kill, after_kill) {}
  ReplicaKillDrill(std::vector<DrillReplica> replicas, absl::Duration before_kill,
                   absl::Duration after_kill)
      : replicas_(std::move(replicas)), before_kill_(before_kill), after_kill_(after_kill) {}

  // Runs `clients` threads, each calling `one_round(client, round, timed)` for round 0, 1, ...
  // until the end; kills replicas[0] with SIGKILL after `before_kill`; stops `after_kill`
  // later. Blocks for their sum.
  DrillResult Run(int clients, const DrillRound& one_round);

 private:
  std::vector<DrillReplica> replicas_;
  absl::Duration before_kill_;
  absl::Duration after_kill_;
};

class RollingRestartDrill final {
 public:
  // `replicas` are running and must outlive the drill.
  explicit RollingRestartDrill(std::vector<ReplicaProcess>& replicas,
                               absl::Duration settle = absl::Seconds(2))
      : RollingRestartDrill(DrillReplicas(replicas), settle) {}
  RollingRestartDrill(std::vector<DrillReplica> replicas, absl::Duration settle)
      : replicas_(std::move(replicas)), settle_(settle) {}

  // Runs `clients` threads as ReplicaKillDrill does; after `settle`, restarts each replica in
  // turn: SIGTERM, wait for the exit, start again, wait until it has served calls of the load
  // (up to 10 s: the clients' channels reconnect with backoff), then the next; `settle` more,
  // then stops. Blocks until then.
  DrillResult Run(int clients, const DrillRound& one_round);

 private:
  std::vector<DrillReplica> replicas_;
  absl::Duration settle_;
};

}  // namespace gpuaas::testing
