#include "libs/service/lifecycle.h"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <utility>

#include "libs/common/logging.h"

namespace gpuaas::service {
namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// StartServing, `wait_and_drain`, a log line: 0, or 1 when the server could not start.
int Serve(const ServiceIdentity& id, rpc::Server& server,
          const std::function<void()>& wait_and_drain) {
  if (!StartServing(id, server).ok()) {
    return 1;
  }
  wait_and_drain();
  Logger(std::string(id.name))->info("gpuaas-{} stopped", std::string(id.name));
  return 0;
}

}  // namespace

TerminationSignals::TerminationSignals(std::string process) : process_(std::move(process)) {
  const sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int TerminationSignals::Wait() {
  const sigset_t set = StopSignals();
  int signal = 0;
  while (sigwait(&set, &signal) != 0) {
  }
  Logger(process_)->info("signal {}: stopping", signal);
  // Default action (rpc::Server may have installed its handler), then unblocked here: the
  // only thread without the mask takes the second signal.
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  return signal;
}

LoopThread::LoopThread(std::function<void()> run, std::function<void()> stop)
    : stop_(std::move(stop)), thread_(std::move(run)) {}

LoopThread::~LoopThread() {
  stop_();
  thread_.join();
}

int RunProcess(int argc, char** argv, const ServiceIdentity& id, const ProcessFlags& process,
               const std::function<void(CLI::App&)>& define,
               const std::function<int(TerminationSignals&)>& run) {
  TerminationSignals signals{std::string(id.name)};
  CLI::App app;
  define(app);
  CLI11_PARSE(app, argc, argv);
  SetLogLevel(process.log_level);
  if (absl::Status s = ValidateProcessFlags(process); !s.ok()) {
    Logger(std::string(id.name))->critical("{}", s.ToString());
    return 2;
  }
  return run(signals);
}

absl::Status StartServing(const ServiceIdentity& id, rpc::Server& server) {
  const std::string name(id.name);
  if (absl::Status s = server.Start(); !s.ok()) {
    Logger(name)->critical("server: {}", s.ToString());
    return s;
  }
  Logger(name)->info("gpuaas-{} serving on port {} (metrics port {})", name, server.port(),
                     server.metrics_port());
  return absl::OkStatus();
}

int ServeUntilStopped(const ServiceIdentity& id, rpc::Server& server, TerminationSignals& signals) {
  return Serve(id, server, [&] {
    signals.Wait();
    server.Shutdown();
  });
}

int ServeUntilStopped(const ServiceIdentity& id, rpc::Server& server) {
  return Serve(id, server, [&] { server.Wait(); });
}

}  // namespace gpuaas::service
