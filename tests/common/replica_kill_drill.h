// The replica kill drill's engine (issue 25), shared by each service's drill: clients call a
// service's replicas through one "a,b" address in a loop; after a while the first replica gets
// SIGKILL; the loop goes on. What comes back: every call's outcome and latency around the
// kill, and what each replica served (from its /metrics).
//
//   ReplicaKillDrill drill(replicas);  // two running processes
//   KillDrillResult r = drill.Run(4, [&](int client, int round, const TimedCall& timed) {
//     timed("GetSpec", [&] { return stock.GetSpec(req, call).status(); });
//   });
//   EXPECT_EQ(r.failed, 0) << r.Summary();
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tests/common/child_process.h"

namespace gpuaas::testing {

// One replica: its gRPC address, its metrics port and its process.
struct ReplicaProcess {
  std::string address;
  int metrics_port = 0;
  std::unique_ptr<ChildProcess> process;
};

// Two processes of `binary` with `flags` and --listen, --metrics-listen on free ports, logs
// "<name>-0.log", "<name>-1.log" in `log_dir`, started one after the other (each SERVING
// before the next starts: a first replica may bootstrap what the second finds). Empty, with a
// test failure, when one does not come up.
std::vector<ReplicaProcess> StartReplicas(const std::string& binary, const std::string& name,
                                          const std::vector<std::string>& flags,
                                          const std::filesystem::path& log_dir);

// "a,b": the one address that lists the replicas.
std::string AddressList(const std::vector<ReplicaProcess>& replicas);

// RPCs the process at `metrics_port` completed (its gpuaas_rpc_requests_total, all methods).
// Adds a test failure (and returns 0) when the scrape fails.
double ServedRpcs(int metrics_port);

struct KillDrillResult {
  int clients = 0;
  int calls = 0;
  int failed = 0;
  std::vector<std::string> failures;  // the first 20: "Method: CODE: message"
  int in_flight_at_kill = 0;
  int started_after_kill = 0;
  double victim_served_before_kill = 0;
  double survivor_served_before_kill = 0;
  double survivor_served_after_kill = 0;
  absl::Duration max_latency;
  absl::Duration max_latency_around_kill;  // calls running within 1 s of the kill

  // One line of the numbers above, for the log and bench/RESULTS.md.
  std::string Summary() const;
};

// The drill passes: no call failed, both replicas served before the kill, and the survivor
// served every call started after it.
void ExpectNoCallLost(const KillDrillResult& result);

// Times one call: what(name, call) runs `call` and records its status under `name`.
using TimedCall = std::function<void(const char*, const std::function<absl::Status()>&)>;

class ReplicaKillDrill final {
 public:
  // `replicas` are running; [0] is killed, [1] survives. Both must outlive the drill.
  explicit ReplicaKillDrill(std::vector<ReplicaProcess>& replicas,
                            absl::Duration before_kill = absl::Seconds(3),
                            absl::Duration after_kill = absl::Seconds(4))
      : replicas_(replicas), before_kill_(before_kill), after_kill_(after_kill) {}

  // Runs `clients` threads, each calling `one_round(client, round, timed)` for round 0, 1, ...
  // until the end; kills replicas[0] with SIGKILL after `before_kill`; stops `after_kill`
  // later. Blocks for their sum.
  KillDrillResult Run(int clients,
                      const std::function<void(int, int, const TimedCall&)>& one_round);

 private:
  std::vector<ReplicaProcess>& replicas_;
  absl::Duration before_kill_;
  absl::Duration after_kill_;
};

}  // namespace gpuaas::testing
