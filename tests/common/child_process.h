// Runs a real binary as a child process for end-to-end tests, and finds free loopback ports.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gpuaas::testing {

// A TCP port on 127.0.0.1 that was free a moment ago, below the kernel's ephemeral range (where
// no outgoing connection can take it before the child listens), and that no other test process
// on the machine has had from FreePort (a lock held for this process's life).
int FreePort();

// The first of 100 host ports for agent `slot` of this process's stack (its --port-range), in
// 10000-19999: a block no other test process on the machine holds (a lock file in /tmp), kept
// for this process's life and handed out again for the same slot (one stack after another).
// Two agents handing out one port (a hash of pids collided) sent a workload's probe to
// another's forward.
int ReservePortBlock(int slot);

class ChildProcess final {
 public:
  // Starts `argv[0]` with `argv`; stdout and stderr go to `log_file` (appended). The child is
  // killed when this test process dies, however it dies (ctest's timeout, a cancelled run):
  // PR_SET_PDEATHSIG, armed from a thread that lives as long as the process, since the kernel
  // sends it when the forking thread ends, not the process.
  ChildProcess(std::vector<std::string> argv, const std::string& log_file);
  // Kills the process if it still runs.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool Running();
  // Why it is not serving, for a failure's message: "still running" or how it ended.
  std::string Describe();
  // Sends SIGTERM and waits up to `timeout_ms`; returns the exit status (or -1 when it had to
  // be killed).
  int Terminate(int timeout_ms = 15000);

 private:
  pid_t pid_ = -1;
  int exit_status_ = -1;
};

// Waits until grpc.health.v1 at `address` reports SERVING; false after `timeout_ms`.
bool WaitServing(const std::string& address, int timeout_ms = 20000);

}  // namespace gpuaas::testing
