// gpuaas_agent_swarm: many simulated node agents against a running stock service, to measure
// what their heartbeats cost it. Registers --agents nodes, opens one Heartbeat stream per agent
// (a thread each: the client's cost is not what is measured), sends one heartbeat per
// --interval on each for --duration, and reports heartbeat round trips and, with --stock-pid,
// the CPU the stock process used over the window (in cores).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/loadgen/latency_recorder.h"
#include "bench/loadgen/node_agent_token.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/common/files.h"

namespace {

namespace pb = ::gpuaas::stock::v1;

struct Flags {
  std::string stock_addr = "127.0.0.1:17052";
  std::string auth_addr = "127.0.0.1:17051";
  std::string user = "admin";
  std::string password_file;
  int agents = 1000;
  int gpus = 8;
  double interval_s = 1;
  double duration_s = 60;
  int stock_pid = 0;
  std::string prefix = "swarm";
};

// utime + stime of a process in seconds, from /proc/<pid>/stat.
double CpuSeconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command, which is in parentheses and may hold spaces.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

pb::Node SimulatedNode(const Flags& f, int i) {
  pb::Node n;
  n.set_node_id(absl::StrCat(f.prefix, "-", i));
  n.set_hostname(n.node_id());
  n.set_cpu("128");
  n.set_memory("1Ti");
  n.set_disk("8Ti");
  n.set_agent_version("swarm");
  for (int g = 0; g < f.gpus; ++g) {
    pb::Gpu* gpu = n.add_gpus();
    gpu->set_uuid(absl::StrCat("GPU-", n.node_id(), "-", g));
    gpu->set_model("A100-80GB");
    gpu->set_memory_mib(81920);
    gpu->set_healthy(true);
  }
  return n;
}

int Run(const Flags& f) {
  auto auth = gpuaas::client::OpenChannel(f.auth_addr, {});
  auto stock = gpuaas::client::OpenChannel(f.stock_addr, {});
  if (!auth.ok() || !stock.ok()) {
    std::cerr << "channels: " << auth.status() << " " << stock.status() << "\n";
    return 2;
  }
  auto password = gpuaas::ReadSecretFile(f.password_file);
  if (!password.ok()) {
    std::cerr << "--password-file: " << password.status() << "\n";
    return 2;
  }
  gpuaas::auth::v1::LoginRequest login;
  login.set_user_name(f.user);
  login.set_password(*password);
  auto token = gpuaas::client::AuthClient(*auth).Login(login);
  if (!token.ok()) {
    std::cerr << "login: " << token.status() << "\n";
    return 1;
  }
  // Each agent with its own key bound to its node, as real agents (issue 22).
  const gpuaas::client::AuthClient auth_client(*auth);
  std::vector<std::string> bearers;
  for (int i = 0; i < f.agents; ++i) {
    auto agent_token = gpuaas::bench::NodeAgentToken(auth_client, token->access_token(),
                                                     SimulatedNode(f, i).node_id());
    if (!agent_token.ok()) {
      std::cerr << "agent key " << i << ": " << agent_token.status() << "\n";
      return 1;
    }
    bearers.push_back("Bearer " + *agent_token);
  }
  auto stub = pb::NodeAgentService::NewStub(*stock);
  for (int i = 0; i < f.agents; ++i) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", bearers[i]);
    pb::RegisterNodeRequest req;
    *req.mutable_node() = SimulatedNode(f, i);
    pb::RegisterNodeResponse resp;
    if (grpc::Status s = stub->RegisterNode(&ctx, req, &resp); !s.ok()) {
      std::cerr << "register " << i << ": " << s.error_message() << "\n";
      return 1;
    }
  }
  std::cerr << "registered " << f.agents << " nodes\n";

  gpuaas::bench::LatencyRecorder recorder;
  std::atomic<bool> measuring{false}, stop{false};
  std::atomic<int64_t> broken{0};
  std::vector<std::thread> agents;
  const absl::Duration interval = absl::Seconds(f.interval_s);
  for (int i = 0; i < f.agents; ++i) {
    agents.emplace_back([&, i] {
      grpc::ClientContext ctx;
      ctx.AddMetadata("authorization", bearers[i]);
      auto stream = stub->Heartbeat(&ctx);
      pb::HeartbeatRequest beat;
      beat.set_node_id(absl::StrCat(f.prefix, "-", i));
      for (int g = 0; g < f.gpus; ++g) {
        pb::GpuMetrics* m = beat.add_gpus();
        m->set_uuid(absl::StrCat("GPU-", beat.node_id(), "-", g));
        m->set_healthy(true);
      }
      // Spread the agents over the interval, as real ones drift apart.
      absl::Time next = absl::Now() + interval * (static_cast<double>(i) / f.agents);
      while (!stop) {
        absl::SleepFor(next - absl::Now());
        next += interval;
        for (pb::GpuMetrics& m : *beat.mutable_gpus()) {
          m.set_utilization_percent(static_cast<double>((i * 7 + absl::ToUnixSeconds(next)) % 100));
          m.set_temperature_celsius(40 + (i % 30));
        }
        const absl::Time start = absl::Now();
        pb::HeartbeatResponse answer;
        if (!stream->Write(beat) || !stream->Read(&answer)) {
          ++broken;
          break;
        }
        if (measuring) recorder.Record(grpc::StatusCode::OK, absl::Now() - start);
      }
      stream->WritesDone();
      (void)stream->Finish();
    });
  }
  absl::SleepFor(absl::Seconds(std::min(5.0, f.interval_s * 3)));  // warm-up
  const double cpu_before = f.stock_pid ? CpuSeconds(f.stock_pid) : 0;
  const absl::Time window_start = absl::Now();
  measuring = true;
  absl::SleepFor(absl::Seconds(f.duration_s));
  measuring = false;
  const double window = absl::ToDoubleSeconds(absl::Now() - window_start);
  const double cpu_after = f.stock_pid ? CpuSeconds(f.stock_pid) : 0;
  stop = true;
  for (std::thread& t : agents) t.join();

  const gpuaas::bench::LatencySummary s = recorder.Summarize();
  std::cout << "agents=" << f.agents << " interval_s=" << f.interval_s << " window_s=" << window
            << " heartbeats=" << s.completed << " per_s=" << s.completed / window
            << " p50_ms=" << s.p50_ms << " p99_ms=" << s.p99_ms << " max_ms=" << s.max_ms
            << " broken_streams=" << broken;
  if (f.stock_pid) std::cout << " stock_cpu_cores=" << (cpu_after - cpu_before) / window;
  std::cout << "\n";
  return broken == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gpuaas_agent_swarm: heartbeats of many simulated agents against gpuaas-stock");
  Flags f;
  app.add_option("--stock-addr", f.stock_addr)->capture_default_str();
  app.add_option("--auth-addr", f.auth_addr)->capture_default_str();
  app.add_option("--user", f.user, "a platform admin or service user")->capture_default_str();
  app.add_option("--password-file", f.password_file)->required()->check(CLI::ExistingFile);
  app.add_option("--agents", f.agents)->check(CLI::Range(1, 20000))->capture_default_str();
  app.add_option("--gpus", f.gpus, "GPUs per simulated node")->capture_default_str();
  app.add_option("--interval", f.interval_s, "seconds between heartbeats")->capture_default_str();
  app.add_option("--duration", f.duration_s, "measured seconds")->capture_default_str();
  app.add_option("--stock-pid", f.stock_pid, "gpuaas-stock's pid, to report its CPU");
  app.add_option("--prefix", f.prefix, "node id prefix")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return Run(f);
}
