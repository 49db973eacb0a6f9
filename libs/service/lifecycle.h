// How every gpuaas process starts and stops, whatever it serves (gRPC, or the proxy's HTTP):
//
//   int Run(const AgentFlags& f, service::TerminationSignals& signals) {
//     ... build, start the server ...
//     service::LoopThread reporting([&] { reporter.Run(); }, [&] { reporter.Stop(); });
//     signals.Wait();     // SIGTERM or SIGINT
//     server.Shutdown();  // then the loops stop and join as they go out of scope; exit 0
//   }
//   int main(int argc, char** argv) {
//     return service::RunProcess(argc, argv, kAgent, DefineFlags, Run);
//   }
//
// The signals are blocked, not handled: TerminationSignals blocks them in the calling thread,
// so every thread started after it inherits the mask, and a signal that arrives while the
// process starts waits for Wait() instead of killing it half-built (commit e1e31e8). A mask
// survives exec: a process that starts programs clears it in the child (the agent's runtime
// does, services/agent/runtime/process_runtime.cc), or they never hear their SIGTERM.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "libs/rpc/server.h"
#include "libs/service/process_flags.h"

namespace CLI {
class App;
}

namespace gpuaas::service {

class TerminationSignals final {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread. `process` names the logger Wait logs to.
  explicit TerminationSignals(std::string process);
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

  // Blocks until SIGTERM or SIGINT arrives (one that came earlier is not lost), logs it and
  // returns its number. From then on the signals take their default action again: a second
  // one ends the process at once, for an operator who will not wait for the drain.
  int Wait();

 private:
  std::string process_;
};

// One of a process's loops on its own thread. The destructor calls `stop`, which must make
// `run` return soon, then joins: declare it after what the loop uses, and the loops stop and
// join, newest first, as the process leaves the scope that built them.
class LoopThread final {
 public:
  LoopThread(std::function<void()> run, std::function<void()> stop);
  ~LoopThread();
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

 private:
  std::function<void()> stop_;
  std::thread thread_;
};

// The main() of a gpuaas process: builds its TerminationSignals before anything starts a thread,
// adds the flags (`define`) and parses them (a bad one ends the process with CLI11's message
// and exit code; --help lists them), sets --log-level from `process` (filled by the parse),
// checks it (ValidateProcessFlags; exit code 2 with the error at CRITICAL) and returns `run`'s
// exit code.
int RunProcess(int argc, char** argv, const ServiceIdentity& id, const ProcessFlags& process,
               const std::function<void(CLI::App&)>& define,
               const std::function<int(TerminationSignals&)>& run);

// The same for a process whose flags are a `Flags` with a ProcessFlags member `process`:
//   int main(int argc, char** argv) { return RunProcess(argc, argv, kAgent, DefineFlags, Run); }
template <typename Flags>
int RunProcess(int argc, char** argv, const ServiceIdentity& id, void (*define)(CLI::App&, Flags&),
               int (*run)(const Flags&, TerminationSignals&)) {
  Flags flags;
  return RunProcess(
      argc, argv, id, flags.process, [&](CLI::App& app) { define(app, flags); },
      [&](TerminationSignals& signals) { return run(flags, signals); });
}

// Starts `server` and logs where it serves (or, at CRITICAL, why it could not). Errors: as
// rpc::Server::Start. Does not block beyond binding.
absl::Status StartServing(const ServiceIdentity& id, rpc::Server& server);

// StartServing, then blocks until `signals` reports SIGTERM/SIGINT and the server has drained
// (rpc::Server::Shutdown). Returns the process's exit code: 0 after a clean stop, 1 when it
// could not start.
int ServeUntilStopped(const ServiceIdentity& id, rpc::Server& server, TerminationSignals& signals);

// The same for a process that built no TerminationSignals: rpc::Server handles the signals
// itself (Server::Wait), so one that arrives before Start kills the process.
int ServeUntilStopped(const ServiceIdentity& id, rpc::Server& server);

}  // namespace gpuaas::service
