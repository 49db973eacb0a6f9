// gpuaas-agent: wiring only. Finds the node's GPUs (NVML, or a simulated inventory), keeps their
// health and gauges current, reports the node to the stock service, and serves grpc.health.v1,
// reflection and Prometheus metrics. Every flag has a GPUAAS_AGENT_* environment fallback.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/common/clock.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"
#include "libs/common/quantity.h"
#include "libs/rpc/metrics_endpoint.h"
#include "libs/rpc/process_metrics.h"
#include "libs/rpc/server.h"
#include "services/agent/agent_config.h"
#include "services/agent/agent_metrics.h"
#include "services/agent/gpu_monitor.h"
#include "services/agent/host_inventory.h"
#include "services/agent/node_messages.h"
#include "services/agent/nvml_source.h"
#include "services/agent/runtime/process_runtime.h"
#include "services/agent/simulated_source.h"
#include "services/agent/stock_reporter.h"
#include "services/agent/workload_logs.h"
#include "services/agent/workload_sync.h"

namespace {

namespace agent = gpuaas::agent;

struct AgentFlags {
  std::string node_id;
  std::string labels;
  std::string stock_addr = "127.0.0.1:17052";
  std::string auth_addr = "127.0.0.1:17051";
  std::string api_key_file;
  std::string listen = "0.0.0.0:17061";
  std::string metrics_listen = "0.0.0.0:9161";
  std::string simulate_gpus;
  std::string fault_file;
  std::string nvml_library = agent::kDefaultNvmlLibrary;
  std::string reprobe_interval = "30s";
  std::string heartbeat_interval = "0";
  std::string sample_interval = "1s";
  agent::CapacityOverrides capacity;
  std::string disk_path = "/";
  std::string instance_addr = "127.0.0.1:17054";
  std::string workload_root = "/var/lib/gpuaas-agent/workloads";
  std::string workload_user = "nobody";
  std::string shim_path;
  std::string advertise_address = "127.0.0.1";
  std::string grpc_advertise_address;
  std::string port_range = "20000-29999";
  std::string utilization_file;
  std::string keep_finished = "1h";
  std::string log_level = "info";
  gpuaas::rpc::TlsOptions tls;
};

std::string Env(const char* flag) { return std::string("GPUAAS_AGENT_") + flag; }

void DefineFlags(CLI::App& app, AgentFlags& f) {
  app.add_option("--node-id", f.node_id, "this node's id (default: the hostname)")
      ->envname(Env("NODE_ID"));
  app.add_option("--labels", f.labels, "node labels, k=v,k2=v2")->envname(Env("LABELS"));
  app.add_option("--stock-addr", f.stock_addr, "the stock service")
      ->envname(Env("STOCK_ADDR"))
      ->capture_default_str();
  app.add_option("--auth-addr", f.auth_addr, "the auth service, to exchange the API key")
      ->envname(Env("AUTH_ADDR"))
      ->capture_default_str();
  app.add_option("--api-key-file", f.api_key_file,
                 "file holding the agents' API key, <api_key_id>.<secret> (service role); "
                 "without it no token is sent")
      ->envname(Env("API_KEY_FILE"));
  app.add_option("--listen,--listen-address", f.listen,
                 "gRPC listen address (health, reflection); port 0 picks a free one")
      ->envname(Env("LISTEN"))
      ->capture_default_str();
  app.add_option("--metrics-listen,--metrics-address", f.metrics_listen,
                 "Prometheus /metrics address ('' = off)")
      ->envname(Env("METRICS_LISTEN"))
      ->capture_default_str();
  app.add_option("--simulate-gpus", f.simulate_gpus,
                 "simulate GPUs instead of NVML: 8xA100-80GB, 4xT4, 2xA100-80GB,2xT4. A simulated "
                 "node has 16 CPU, 128Gi memory and 1Ti disk per GPU unless --cpu/--memory/--disk "
                 "say otherwise")
      ->envname(Env("SIMULATE_GPUS"));
  app.add_option("--fault-file", f.fault_file,
                 "simulated GPUs raise the XIDs this file lists, one '<gpu uuid or index> <xid>' "
                 "per line")
      ->envname(Env("FAULT_FILE"));
  app.add_option("--nvml-library", f.nvml_library, "NVML to dlopen")
      ->envname(Env("NVML_LIBRARY"))
      ->capture_default_str();
  app.add_option("--reprobe-interval", f.reprobe_interval,
                 "how often an unhealthy GPU is probed to come back")
      ->envname(Env("REPROBE_INTERVAL"))
      ->capture_default_str();
  app.add_option("--heartbeat-interval", f.heartbeat_interval,
                 "heartbeat interval; 0 = what the stock service asks for")
      ->envname(Env("HEARTBEAT_INTERVAL"))
      ->capture_default_str();
  app.add_option("--sample-interval", f.sample_interval, "how often the GPUs are read")
      ->envname(Env("SAMPLE_INTERVAL"))
      ->capture_default_str();
  app.add_option("--cpu", f.capacity.cpu, "CPU to register instead of the measured (e.g. 64)")
      ->envname(Env("CPU"));
  app.add_option("--memory", f.capacity.memory, "memory to register instead (e.g. 512Gi)")
      ->envname(Env("MEMORY"));
  app.add_option("--disk", f.capacity.disk, "disk to register instead (e.g. 4Ti)")
      ->envname(Env("DISK"));
  app.add_option("--disk-path", f.disk_path, "the file system whose size is the node's disk")
      ->envname(Env("DISK_PATH"))
      ->capture_default_str();
  app.add_option("--instance-addr", f.instance_addr,
                 "the instance service, whose desired workloads this node runs ('none': run none)")
      ->envname(Env("INSTANCE_ADDR"))
      ->capture_default_str();
  app.add_option("--workload-root", f.workload_root,
                 "one directory per workload (state, home, logs); every directory above it must "
                 "let --workload-user through")
      ->envname(Env("WORKLOAD_ROOT"))
      ->capture_default_str();
  app.add_option("--workload-user", f.workload_user,
                 "the unprivileged user workloads run as when the agent runs as root")
      ->envname(Env("WORKLOAD_USER"))
      ->capture_default_str();
  app.add_option("--shim-path", f.shim_path, "gpuaas-workload-shim (default: next to this binary)")
      ->envname(Env("SHIM_PATH"));
  app.add_option("--advertise-address", f.advertise_address,
                 "where clients reach this node's workload ports (reported with each port)")
      ->envname(Env("ADVERTISE_ADDRESS"))
      ->capture_default_str();
  app.add_option("--grpc-advertise-address", f.grpc_advertise_address,
                 "the host the instance service reaches this agent's gRPC server at (its logs), "
                 "with --listen's port (default: --advertise-address)")
      ->envname(Env("GRPC_ADVERTISE_ADDRESS"));
  app.add_option("--port-range", f.port_range, "host ports handed to workloads, FIRST-LAST")
      ->envname(Env("PORT_RANGE"))
      ->capture_default_str();
  app.add_option("--utilization-file", f.utilization_file,
                 "simulated GPUs take the utilization this file pins, one '<gpu uuid or index> "
                 "<percent>' per line")
      ->envname(Env("UTILIZATION_FILE"));
  app.add_option("--keep-finished", f.keep_finished,
                 "a finished workload that left the node's set keeps its directory (its logs, "
                 "for GetInstanceLogs) this long")
      ->envname(Env("KEEP_FINISHED"))
      ->capture_default_str();
  app.add_option("--log-level", f.log_level)
      ->envname(Env("LOG_LEVEL"))
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--tls-cert", f.tls.cert_file,
                 "certificate (PEM): served, and presented to auth and stock with --tls-ca")
      ->envname(Env("TLS_CERT"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", f.tls.key_file, "private key (PEM) of --tls-cert")
      ->envname(Env("TLS_KEY"))
      ->check(CLI::ExistingFile);
  app.add_option("--tls-ca", f.tls.ca_file,
                 "CA (PEM): verifies auth and stock (TLS towards them) and client certificates")
      ->envname(Env("TLS_CA"))
      ->check(CLI::ExistingFile);
  app.add_flag("--tls-require-client-cert", f.tls.require_client_cert)
      ->envname(Env("TLS_REQUIRE_CLIENT_CERT"));
}

// The process runtime's options from the flags; GPU indices from the discovered GPUs.
agent::ProcessRuntimeOptions RuntimeOptions(const AgentFlags& f,
                                            const std::vector<agent::GpuStatus>& gpus) {
  agent::ProcessRuntimeOptions o;
  o.root = f.workload_root;
  o.workload_user = f.workload_user;
  o.shim_path = f.shim_path;
  if (o.shim_path.empty()) {
    std::error_code ec;
    o.shim_path =
        (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "gpuaas-workload-shim")
            .string();
  }
  // "FIRST-LAST"; NewProcessRuntime refuses a bad range.
  std::sscanf(f.port_range.c_str(), "%d-%d", &o.first_port, &o.last_port);
  for (const agent::GpuStatus& g : gpus) o.gpu_minor[g.info.uuid] = g.info.minor;
  return o;
}

// Whether the workload has finished, as the runtime knows it; one it does not know (removed,
// or no runtime at all) has nothing more to write.
bool Finished(const agent::Runtime* runtime, const std::string& workload_id) {
  namespace pb = gpuaas::instance::v1;
  if (runtime == nullptr) return true;
  for (const pb::WorkloadStatus& s : runtime->List()) {
    if (s.workload_id() == workload_id) {
      return s.state() == pb::WORKLOAD_STATE_EXITED || s.state() == pb::WORKLOAD_STATE_STOPPED ||
             s.state() == pb::WORKLOAD_STATE_FAILED;
    }
  }
  return true;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') {
    return "localhost";
  }
  return name;
}

int Run(const AgentFlags& f) {
  auto log = gpuaas::Logger("agent");
  auto fail = [&](const absl::Status& s) {
    log->critical("{}", s.ToString());
    return 2;
  };
  if (f.tls.cert_file.empty() != f.tls.key_file.empty()) {
    return fail(absl::InvalidArgumentError("--tls-cert and --tls-key go together"));
  }
  if (f.tls.require_client_cert && f.tls.ca_file.empty()) {
    return fail(absl::InvalidArgumentError("--tls-require-client-cert needs --tls-ca"));
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = agent::ParseLabels(f.labels);
  absl::StatusOr<absl::Duration> reprobe =
      agent::ParseDurationFlag("--reprobe-interval", f.reprobe_interval);
  absl::StatusOr<absl::Duration> heartbeat =
      agent::ParseDurationFlag("--heartbeat-interval", f.heartbeat_interval, true);
  absl::StatusOr<absl::Duration> sample =
      agent::ParseDurationFlag("--sample-interval", f.sample_interval);
  absl::StatusOr<absl::Duration> keep_finished =
      agent::ParseDurationFlag("--keep-finished", f.keep_finished, true);
  for (const absl::Status& s : {labels.status(), reprobe.status(), heartbeat.status(),
                                sample.status(), keep_finished.status()}) {
    if (!s.ok()) {
      return fail(s);
    }
  }
  const agent::NodeIdentity identity{.node_id = f.node_id.empty() ? Hostname() : f.node_id,
                                     .hostname = Hostname(),
                                     .labels = *labels,
                                     .agent_version = agent::kAgentVersion};

  // The GPUs: simulated, or NVML (a missing library is a clear error, not a crash).
  agent::GpuSourcePtr source;
  absl::StatusOr<agent::HostCapacity> capacity;
  if (!f.simulate_gpus.empty()) {
    absl::StatusOr<std::vector<agent::GpuInfo>> gpus =
        agent::ParseSimulatedGpus(f.simulate_gpus, identity.node_id);
    if (!gpus.ok()) {
      return fail(gpus.status());
    }
    capacity = agent::SimulatedCapacity(static_cast<int>(gpus->size()));
    source = std::make_unique<agent::SimulatedGpuSource>(*std::move(gpus), f.fault_file,
                                                         f.utilization_file);
  } else {
    absl::StatusOr<std::unique_ptr<agent::NvmlGpuSource>> nvml =
        agent::NvmlGpuSource::Open(f.nvml_library);
    if (!nvml.ok()) {
      log->critical("{}", nvml.status().ToString());
      return 1;
    }
    source = *std::move(nvml);
    capacity = agent::MeasureHost(f.disk_path);
  }
  if (!capacity.ok()) {
    log->critical("{}", capacity.status().ToString());
    return 1;
  }
  capacity = agent::ApplyOverrides(*capacity, f.capacity);
  if (!capacity.ok()) {
    return fail(capacity.status());
  }
  absl::StatusOr<std::vector<agent::GpuInfo>> gpus = source->Discover();
  if (!gpus.ok()) {
    log->critical("{}", gpus.status().ToString());
    return 1;
  }
  log->info("node {}: {} GPUs{}, cpu {}, memory {}, disk {}", identity.node_id, gpus->size(),
            f.simulate_gpus.empty() ? "" : " (simulated)",
            gpuaas::FormatCpuMillis(capacity->cpu_millis),
            gpuaas::FormatBytes(capacity->memory_bytes), gpuaas::FormatBytes(capacity->disk_bytes));
  gpuaas::SystemClock clock;
  agent::GpuMonitor monitor(*source, *std::move(gpus), clock, {.reprobe_interval = *reprobe});
  monitor.Poll();

  // Towards auth and stock: TLS when --tls-ca is set, with our certificate for mutual TLS.
  const gpuaas::client::TlsOptions client_tls{
      .ca_file = f.tls.ca_file,
      .cert_file = f.tls.ca_file.empty() ? "" : f.tls.cert_file,
      .key_file = f.tls.ca_file.empty() ? "" : f.tls.key_file};
  absl::StatusOr<std::shared_ptr<grpc::Channel>> stock_channel =
      gpuaas::client::OpenChannel(f.stock_addr, client_tls);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> auth_channel =
      gpuaas::client::OpenChannel(f.auth_addr, client_tls);
  if (!stock_channel.ok() || !auth_channel.ok()) {
    return fail(!stock_channel.ok() ? stock_channel.status() : auth_channel.status());
  }
  gpuaas::client::AuthClient auth(*auth_channel);
  std::unique_ptr<gpuaas::client::AccessTokens> tokens;
  if (!f.api_key_file.empty()) {
    absl::StatusOr<std::string> key = gpuaas::ReadSecretFile(f.api_key_file);
    if (!key.ok()) {
      return fail(
          absl::InvalidArgumentError(absl::StrCat("--api-key-file: ", key.status().message())));
    }
    tokens = std::make_unique<gpuaas::client::AccessTokens>(auth, *std::move(key), clock);
  } else {
    log->warn("no --api-key-file: calling the stock service without a token");
  }
  agent::StockReporter reporter(
      *stock_channel, tokens.get(),
      [&] { return agent::BuildNode(identity, *capacity, monitor.Snapshot()); },
      [&] { return agent::BuildHeartbeat(identity.node_id, monitor.Snapshot()); },
      {.node_id = identity.node_id, .heartbeat_interval = *heartbeat});

  // Workloads: run by the process runtime (made before serving: the log service reads it).
  const bool runs_workloads = !f.instance_addr.empty() && f.instance_addr != "none";
  std::unique_ptr<agent::Runtime> runtime;
  if (runs_workloads) {
    absl::StatusOr<std::unique_ptr<agent::Runtime>> made =
        agent::NewProcessRuntime(RuntimeOptions(f, monitor.Snapshot()));
    if (!made.ok()) {
      return fail(made.status());
    }
    runtime = *std::move(made);
  }

  // The server's own metrics endpoint is off: ours serves the GPU gauges and the process's.
  // Its callers (the instance service, for logs) prove a service role with a token checked
  // against the auth service's keys, as every service checks its callers.
  gpuaas::rpc::Server server(
      {.name = "agent",
       .listen_address = f.listen,
       .metrics_address = "",
       .tls = f.tls,
       .worker_threads = 2,
       .cpu_threads = 1},
      gpuaas::authz::NewJwksAuthenticator(gpuaas::authz::NewGrpcJwksSource(*auth_channel), clock));
  agent::WorkloadLogs logs({.root = f.workload_root, .finished = [&runtime](const std::string& id) {
                              return Finished(runtime.get(), id);
                            }});
  agent::WorkloadLogServiceImpl log_service(logs, server.handler());
  server.AddService(&log_service);
  std::unique_ptr<gpuaas::rpc::MetricsEndpoint> metrics;
  if (!f.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<gpuaas::rpc::MetricsEndpoint>> endpoint =
        gpuaas::rpc::MetricsEndpoint::Start(
            f.metrics_listen,
            {std::make_shared<agent::AgentMetrics>(monitor, &reporter.stats(), identity.node_id),
             std::make_shared<gpuaas::rpc::ProcessMetrics>()});
    if (!endpoint.ok()) {
      log->critical("metrics: {}", endpoint.status().ToString());
      return 1;
    }
    metrics = *std::move(endpoint);
  }
  if (absl::Status s = server.Start(); !s.ok()) {
    log->critical("server: {}", s.ToString());
    return 1;
  }
  log->info("gpuaas-agent {} serving on port {} (metrics port {}); stock service at {}",
            agent::kAgentVersion, server.port(), metrics ? metrics->port() : 0, f.stock_addr);

  // The node's desired set from the instance service, converged on the runtime.
  std::unique_ptr<agent::WorkloadSync> sync;
  if (runs_workloads) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> instance_channel =
        gpuaas::client::OpenChannel(f.instance_addr, client_tls);
    if (!instance_channel.ok()) {
      return fail(instance_channel.status());
    }
    sync = std::make_unique<agent::WorkloadSync>(
        *instance_channel, tokens.get(), *runtime,
        [&monitor](const std::vector<std::string>& uuids) {
          return agent::PeakUtilization(monitor.Snapshot(), uuids);
        },
        agent::WorkloadSync::Options{
            .node_id = identity.node_id,
            .address = f.advertise_address,
            .agent_address = agent::JoinHostPort(
                f.grpc_advertise_address.empty() ? f.advertise_address : f.grpc_advertise_address,
                server.port()),
            .keep_finished = *keep_finished});
  }

  std::thread sampler([&] { monitor.Run(*sample); });
  std::thread reporting([&] { reporter.Run(); });
  std::thread syncing([&] {
    if (sync) sync->Run();
  });
  server.Wait();
  reporter.Stop();
  if (sync) sync->Stop();
  monitor.Stop();
  reporting.join();
  syncing.join();
  sampler.join();
  metrics.reset();
  log->info("gpuaas-agent stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "gpuaas-agent: the node agent. Reports this node's GPUs (NVML, or --simulate-gpus) to the "
      "stock service, runs the instance service's workloads for this node in bubblewrap "
      "sandboxes, and serves health, reflection and DCGM-style GPU metrics");
  AgentFlags flags;
  DefineFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  gpuaas::SetLogLevel(flags.log_level);
  return Run(flags);
}
