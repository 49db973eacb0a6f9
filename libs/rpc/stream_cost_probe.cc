// What open unauthenticated streams cost a server built on rpc::Server: a child process serves
// (the echo service and what every service has: health, reflection), this one opens Health/Watch
// and reflection streams over several connections and reads the child's threads and resident
// memory from /proc. Built, not run by ctest:
//   build/libs/rpc/rpc_stream_cost_probe [watch streams] [reflection streams] [connections]
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/held_streams_test_util.h"
#include "libs/rpc/server.h"

namespace gpuaas::rpc::test {
namespace {

int Serve(int port_pipe) {
  Server server({.name = "probe", .listen_address = "127.0.0.1:0", .metrics_address = ""},
                std::make_unique<FakeAuthenticator>());
  EchoService echo(server.handler());
  server.AddService(&echo);
  if (!server.Start().ok()) {
    return 1;
  }
  int port = server.port();
  if (write(port_pipe, &port, sizeof port) != sizeof port) {
    return 1;
  }
  server.Wait();
  return 0;
}

std::string ProcStatus(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field + ":")) {
      return line.substr(field.size() + 1);
    }
  }
  return "?";
}

void Report(pid_t pid, const std::string& when) {
  std::printf("%-44s threads %5s  rss %s\n", when.c_str(), ProcStatus(pid, "Threads").c_str(),
              ProcStatus(pid, "VmRSS").c_str());
  std::fflush(stdout);
}

// Streams spread over `connections` channels (a channel argument keeps them from sharing one).
std::vector<std::unique_ptr<HeldStreams>> OpenSpread(int port, int connections) {
  std::vector<std::unique_ptr<HeldStreams>> held;
  for (int i = 0; i < connections; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("probe.connection", i);
    held.push_back(std::make_unique<HeldStreams>(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), args)));
  }
  return held;
}

int Probe(int watches, int reflections, int connections) {
  int fds[2];
  if (pipe(fds) != 0) {
    return 1;
  }
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    close(fds[0]);
    _exit(Serve(fds[1]));
  }
  close(fds[1]);
  int port = 0;
  if (read(fds[0], &port, sizeof port) != sizeof port) {
    return 1;
  }
  absl::SleepFor(absl::Milliseconds(500));
  Report(child, "serving, no streams");
  {
    std::vector<std::unique_ptr<HeldStreams>> held = OpenSpread(port, connections);
    for (int i = 0; i < watches; ++i) {
      held[i % connections]->Open(kHealthWatchMethod, 1, "");
    }
    size_t ended = 0;
    for (auto& h : held) {
      ended += h->Ended(absl::Seconds(2) / connections).size();
    }
    Report(child, absl::StrCat(watches, " Health/Watch open (", ended, " ended)"));
    for (int i = 0; i < reflections; ++i) {
      held[i % connections]->Open(kReflectionInfoMethod, 1);
    }
    size_t ended_all = 0;
    for (auto& h : held) {
      ended_all += h->Ended(absl::Seconds(2) / connections).size();
    }
    Report(child,
           absl::StrCat("+ ", reflections, " reflection open (", ended_all - ended, " ended)"));
    for (auto& h : held) {
      for (const grpc::Status& s : h->Ended(absl::ZeroDuration())) {
        if (!s.ok()) {
          std::printf("  one ended: %d %s\n", s.error_code(), s.error_message().c_str());
          break;
        }
      }
    }
  }
  absl::SleepFor(absl::Seconds(1));
  Report(child, "all closed");
  kill(child, SIGTERM);
  int status = 0;
  waitpid(child, &status, 0);
  return 0;
}

}  // namespace
}  // namespace gpuaas::rpc::test

int main(int argc, char** argv) {
  int watches = argc > 1 ? std::atoi(argv[1]) : 2000;
  int reflections = argc > 2 ? std::atoi(argv[2]) : 200;
  int connections = argc > 3 ? std::atoi(argv[3]) : 20;
  return gpuaas::rpc::test::Probe(watches, reflections, connections);
}
