// gpuaas-agent: wiring only. Finds the node's GPUs (NVML, or a simulated inventory), keeps their
// health and gauges current, reports the node to the stock service, and serves grpc.health.v1,
// reflection and Prometheus metrics. Every flag has a GPUAAS_AGENT_* environment fallback.
#include <prometheus/registry.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/node_calls.h"
#include "libs/authz/verifier.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/common/clock.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"
#include "libs/common/periodic_task.h"
#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/metrics_endpoint.h"
#include "libs/rpc/server.h"
#include "libs/service/env_options.h"
#include "libs/service/lifecycle.h"
#include "libs/service/process_flags.h"
#include "services/agent/agent_config.h"
#include "services/agent/agent_metrics.h"
#include "services/agent/ceph_keys.h"
#include "services/agent/container_setup.h"
#include "services/agent/gpu_monitor.h"
#include "services/agent/host_inventory.h"
#include "services/agent/node_messages.h"
#include "services/agent/nvml_source.h"
#include "services/agent/runtime/ceph_mounting_runtime.h"
#include "services/agent/runtime/host_gpu_driver.h"
#include "services/agent/runtime/process_runtime.h"
#include "services/agent/runtime/simulated_gpu_driver.h"
#include "services/agent/simulated_source.h"
#include "services/agent/stock_reporter.h"
#include "services/agent/workload_logs.h"
#include "services/agent/workload_sessions.h"
#include "services/agent/workload_sync.h"

namespace {

namespace agent = gpuaas::agent;
namespace registry = gpuaas::registry;

constexpr gpuaas::service::ServiceIdentity kAgent{
    .name = "agent", .grpc_port = 17061, .metrics_port = 9161};

struct AgentFlags {
  gpuaas::service::ProcessFlags process;
  gpuaas::service::PeerFlags peers;
  std::string node_id;
  std::string labels;
  std::string simulate_gpus;
  std::string fault_file;
  std::string nvml_library = agent::kDefaultNvmlLibrary;
  absl::Duration reprobe_interval = absl::Seconds(30);
  absl::Duration heartbeat_interval;  // zero: what the stock service asks for
  absl::Duration sample_interval = absl::Seconds(1);
  agent::CapacityOverrides capacity;
  std::string disk_path = "/";
  std::string workload_root = "/var/lib/gpuaas-agent/workloads";
  std::string workload_user = "nobody";
  std::string workload_uid_range = "200000-299999";
  std::string workload_gid_range = "300000-399999";
  std::string landlock = "best-effort";
  std::string shim_path;
  std::string advertise_address = "127.0.0.1";
  std::string grpc_advertise_address;
  std::string port_range = "20000-29999";
  std::string runtime = "container";
  std::string image_root = "/var/lib/gpuaas-agent/images";
  std::string image_cache_size = "50Gi";
  std::vector<std::string> allowed_registries;
  std::vector<std::string> insecure_registries;
  absl::Duration pull_timeout = absl::Minutes(30);
  std::string image_unpacker;
  std::string image_unpacker_memory = "2Gi";
  std::string image_layer_max_size = "32Gi";
  std::string image_max_size = "64Gi";
  int64_t image_layer_max_entries = agent::UnpackLimits().max_layer_entries;
  int64_t image_max_entries = agent::UnpackLimits().max_image_entries;
  int64_t image_max_ratio = agent::UnpackLimits().max_ratio;
  std::string image_disk_reserve = "2Gi";
  std::vector<std::string> workload_lan_allow;
  std::vector<std::string> proxy_sources;
  std::string imageless = "container";
  std::string utilization_file;
  absl::Duration keep_finished = absl::Hours(1);
  bool end_workloads = false;
};

void DefineFlags(CLI::App& app, AgentFlags& f) {
  app.description(
      "gpuaas-agent: the node agent. Reports this node's GPUs (NVML, or --simulate-gpus) to the "
      "stock service, runs the instance service's workloads for this node in bubblewrap "
      "sandboxes, and serves health, reflection and DCGM-style GPU metrics");
  f.process.workers = 2;  // health, reflection and log reads only
  gpuaas::service::AddProcessFlags(app, kAgent, gpuaas::service::ServerKind::kGrpc, f.process);
  gpuaas::service::EnvOptions options(app, kAgent.name);
  options.Add("--node-id", f.node_id, "this node's id (default: the hostname)");
  options.Add("--labels", f.labels, "node labels, k=v,k2=v2");
  options.Add("--stock-addr", f.peers.stock_addr, "the stock service");
  options.Add("--auth-addr", f.peers.auth_addr, "the auth service, to exchange the API key");
  options.Add("--storage-addr", f.peers.storage_addr,
              "the storage service, for the keys of Ceph storages' mounts");
  options.Add("--api-key-file", f.peers.api_key_file,
              "file holding this node's API key, <api_key_id>.<secret> (node-agent role); "
              "without it no token is sent");
  options.Add("--simulate-gpus", f.simulate_gpus,
              "simulate GPUs instead of NVML: 8xA100-80GB, 4xT4, 2xA100-80GB,2xT4. A simulated "
              "node has 16 CPU, 128Gi memory and 1Ti disk per GPU unless --cpu/--memory/--disk "
              "say otherwise");
  options.Add("--fault-file", f.fault_file,
              "simulated GPUs raise the XIDs this file lists, one '<gpu uuid or index> <xid>' "
              "per line");
  options.Add("--nvml-library", f.nvml_library, "NVML to dlopen");
  options.Add("--reprobe-interval", f.reprobe_interval,
              "how often an unhealthy GPU is probed to come back");
  options.Add("--heartbeat-interval", f.heartbeat_interval,
              "heartbeat interval; 0 = what the stock service asks for", true);
  options.Add("--sample-interval", f.sample_interval, "how often the GPUs are read");
  options.Add("--cpu", f.capacity.cpu, "CPU to register instead of the measured (e.g. 64)");
  options.Add("--memory", f.capacity.memory, "memory to register instead (e.g. 512Gi)");
  options.Add("--disk", f.capacity.disk, "disk to register instead (e.g. 4Ti)");
  options.Add("--disk-path", f.disk_path, "the file system whose size is the node's disk");
  options.Add("--instance-addr", f.peers.instance_addr,
              "the instance service, whose desired workloads this node runs ('none': run none)");
  options.Add("--workload-root", f.workload_root,
              "one directory per workload (state, home, logs); every directory above it must "
              "let --workload-user through");
  options.Add("--workload-user", f.workload_user,
              "the unprivileged user workloads run as when the agent runs as root and "
              "--workload-uid-range is 'none'");
  options.Add("--workload-uid-range", f.workload_uid_range,
              "when the agent runs as root, each workload runs as a uid of its own from "
              "FIRST-LAST (uids no other user of the host has); 'none': all as --workload-user");
  options.Add("--workload-gid-range", f.workload_gid_range,
              "with --workload-uid-range, each tenant's workloads run in a group of the tenant's "
              "own from FIRST-LAST (gids no group of the host has, apart from the uid range), "
              "which owns the storages they write; 'none': each workload in its uid's group");
  options.Add("--landlock", f.landlock,
              "'required': refuse to start on a kernel without Landlock ABI 6 (workloads' "
              "ports confined, sockets and signals scoped); 'best-effort': warn and run");
  options.Add("--shim-path", f.shim_path, "gpuaas-workload-shim (default: next to this binary)");
  options.Add("--advertise-address", f.advertise_address,
              "where clients reach this node's workload ports (reported with each port)");
  options.Add("--grpc-advertise-address", f.grpc_advertise_address,
              "the host the instance service reaches this agent's gRPC server at (its logs), "
              "with --listen's port (default: --advertise-address)");
  options.Add("--port-range", f.port_range, "host ports handed to workloads, FIRST-LAST");
  options.Add("--runtime", f.runtime,
              "'container': workloads with an image run as OCI containers (runc; those without "
              "one: --image-less); 'process': workloads without an image run in bubblewrap "
              "sandboxes on the node's network, and those with one fail");
  options.Add("--image-less", f.imageless,
              "with --runtime=container, workloads without an image: 'process' runs them in "
              "bubblewrap sandboxes on the node's network, 'container' as containers from this "
              "node's /usr (its own writable layer) and /etc (read-only)");
  options.Add("--image-root", f.image_root, "the node's image cache (layers, blobs)");
  options.Add("--image-cache-size", f.image_cache_size,
              "unused images go, least recently used first, once the cache is larger (a "
              "quantity: 50Gi)");
  options.Add("--pull-timeout", f.pull_timeout,
              "an image pull (or a registry's check of a tenant's access) that takes longer "
              "fails: a registry that answers slowly or not at all holds nothing of the node");
  options.Add("--image-unpacker", f.image_unpacker,
              "gpuaas-image-unpacker, the sandboxed process every manifest, config and layer is "
              "parsed and unpacked in (default: next to this binary)");
  options.Add("--image-unpacker-memory", f.image_unpacker_memory,
              "each unpacker job's address-space limit (a quantity)");
  options.Add("--image-layer-max-size", f.image_layer_max_size,
              "a layer that unpacks to more (its files' declared sizes) fails its pull");
  options.Add("--image-max-size", f.image_max_size,
              "an image whose layers unpack to more fails its pull");
  options.Add("--image-layer-max-entries", f.image_layer_max_entries,
              "a layer with more tar entries fails its pull");
  options.Add("--image-max-entries", f.image_max_entries,
              "an image with more tar entries in all fails its pull");
  options.Add("--image-max-ratio", f.image_max_ratio,
              "a layer that unpacks to more than this many bytes per compressed byte (past its "
              "first 64 MiB) fails its pull: a decompression bomb");
  options.Add("--image-disk-reserve", f.image_disk_reserve,
              "an unpack stops (its pull fails) before the image cache's file system has less "
              "free than this (a quantity)");
  options
      .Add("--allowed-registries", f.allowed_registries,
           "registries (host:port,...) that pulls may reach although they sit on a loopback, "
           "link-local, private (RFC 1918, ULA), CGNAT, multicast or unspecified address (the "
           "instance service's list); every other such address is refused")
      ->delimiter(',');
  options
      .Add("--insecure-registries", f.insecure_registries,
           "registries (host:port,...) pulled from without verifying TLS, or over plain HTTP; "
           "every other registry's certificate is verified")
      ->delimiter(',');
  options.Add("--workload-lan-allow", f.workload_lan_allow,
              "a network (a.b.c.d/n, or an address) in the node's LAN ranges (link-local, "
              "10/8, 172.16/12, 192.168/16, 100.64/10) that workloads with egress may reach, "
              "e.g. an internal package mirror; repeatable. Workloads reach none of the rest");
  options.Add("--proxy-source", f.proxy_sources,
              "an IPv4 address the access proxy connects from, as this node sees it; "
              "repeatable. A workload's private ports (not marked public) accept connections "
              "from these alone, and every port only at --advertise-address (an IPv4 address). "
              "Default: --advertise-address (a proxy on this node)");
  options.Add("--utilization-file", f.utilization_file,
              "simulated GPUs take the utilization this file pins, one '<gpu uuid or index> "
              "<percent>' per line");
  options.Add("--end-workloads", f.end_workloads,
              "end every container under --workload-root at once (runc deletes it; its "
              "network and mounts go) and exit: a node's teardown, once its agent has stopped");
  options.Add("--keep-finished", f.keep_finished,
              "a finished workload that left the node's set keeps its directory (its logs, "
              "for GetInstanceLogs) this long",
              true);
}

// A uid or gid range flag, "FIRST-LAST" or "none" (0-0).
absl::StatusOr<std::pair<unsigned, unsigned>> IdRange(const char* flag, const std::string& value) {
  unsigned first = 0, last = 0;
  if (value != "none" && std::sscanf(value.c_str(), "%u-%u", &first, &last) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", value, "\" is not FIRST-LAST or none"));
  }
  return std::make_pair(first, last);
}

// The process runtime's options from the flags; GPU indices from the discovered GPUs.
absl::StatusOr<agent::ProcessRuntimeOptions> RuntimeOptions(
    const AgentFlags& f, const std::vector<agent::GpuStatus>& gpus) {
  agent::ProcessRuntimeOptions o;
  o.root = f.workload_root;
  o.workload_user = f.workload_user;
  GPUAAS_ASSIGN_OR_RETURN(std::tie(o.first_uid, o.last_uid),
                          IdRange("--workload-uid-range", f.workload_uid_range));
  GPUAAS_ASSIGN_OR_RETURN(std::tie(o.first_gid, o.last_gid),
                          IdRange("--workload-gid-range", f.workload_gid_range));
  if (f.landlock != "required" && f.landlock != "best-effort") {
    return absl::InvalidArgumentError(
        absl::StrCat("--landlock: \"", f.landlock, "\" is not required or best-effort"));
  }
  o.require_landlock = f.landlock == "required";
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

// The container runtime's parts from the flags: the image store, the networks, and the GPUs'
// driver (the node's, or a fake one made for simulated GPUs).
absl::StatusOr<agent::ContainerOptions> ContainerOptions(
    const AgentFlags& f, const std::vector<agent::GpuStatus>& gpus, const agent::GpuSource& source,
    std::shared_ptr<agent::ImageStore>* store) {
  GPUAAS_ASSIGN_OR_RETURN(
      registry::RegistryPolicy registries,
      registry::RegistryPolicy::Create(f.allowed_registries, f.insecure_registries));
  agent::ContainerSetup setup{.image_root = f.image_root,
                              .registries = std::move(registries),
                              .pull_timeout = f.pull_timeout,
                              .lan_allowed = f.workload_lan_allow,
                              .forward_address = f.advertise_address,
                              .proxy_sources = f.proxy_sources.empty()
                                                   ? std::vector<std::string>{f.advertise_address}
                                                   : f.proxy_sources,
                              .workload_root = f.workload_root};
  GPUAAS_ASSIGN_OR_RETURN(setup.image_cache_bytes,
                          gpuaas::ParseBytes("--image-cache-size", f.image_cache_size));
  GPUAAS_ASSIGN_OR_RETURN(setup.unpacker_memory_bytes,
                          gpuaas::ParseBytes("--image-unpacker-memory", f.image_unpacker_memory));
  GPUAAS_ASSIGN_OR_RETURN(setup.unpack_limits.max_layer_bytes,
                          gpuaas::ParseBytes("--image-layer-max-size", f.image_layer_max_size));
  GPUAAS_ASSIGN_OR_RETURN(setup.unpack_limits.max_image_bytes,
                          gpuaas::ParseBytes("--image-max-size", f.image_max_size));
  GPUAAS_ASSIGN_OR_RETURN(setup.unpack_limits.min_free_bytes,
                          gpuaas::ParseBytes("--image-disk-reserve", f.image_disk_reserve));
  setup.unpack_limits.max_layer_entries = f.image_layer_max_entries;
  setup.unpack_limits.max_image_entries = f.image_max_entries;
  setup.unpack_limits.max_ratio = f.image_max_ratio;
  if (f.image_layer_max_entries <= 0 || f.image_max_entries <= 0 || f.image_max_ratio <= 0) {
    return absl::InvalidArgumentError(
        "--image-layer-max-entries, --image-max-entries, --image-max-ratio: must be positive");
  }
  setup.unpacker_path = f.image_unpacker;
  if (setup.unpacker_path.empty()) {
    std::error_code ec;
    setup.unpacker_path = (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() /
                           "gpuaas-image-unpacker")
                              .string();
  }
  std::vector<agent::GpuInfo> infos;
  for (const agent::GpuStatus& g : gpus) {
    infos.push_back(g.info);
    setup.gpu_minor[g.info.uuid] = g.info.minor;
  }
  if (!f.simulate_gpus.empty()) {
    std::error_code ec;
    const std::string exe_dir =
        std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().string();
    GPUAAS_ASSIGN_OR_RETURN(setup.gpu_host,
                            agent::PrepareSimulatedDriver(
                                (std::filesystem::path(f.workload_root) / ".gpu-driver").string(),
                                infos, agent::FakeDriverLibrariesIn(exe_dir)));
    setup.mig = std::make_shared<agent::SimulatedMigResolver>(infos);
  } else if (!gpus.empty()) {
    GPUAAS_ASSIGN_OR_RETURN(setup.gpu_host, agent::FindHostGpuDriver());
    // The NVML source outlives the runtime (both live until Run returns).
    setup.mig =
        std::shared_ptr<const agent::MigResolver>(std::shared_ptr<const agent::MigResolver>{},
                                                  dynamic_cast<const agent::MigResolver*>(&source));
  }
  return agent::MakeContainerOptions(setup, store);
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

// Whether the runtime runs `workload_id` now (started: its probe need not pass for a terminal).
bool Running(const agent::Runtime* runtime, const std::string& workload_id) {
  namespace pb = gpuaas::instance::v1;
  if (runtime == nullptr) return false;
  for (const pb::WorkloadStatus& s : runtime->List()) {
    if (s.workload_id() == workload_id) {
      return s.state() == pb::WORKLOAD_STATE_STARTED || s.state() == pb::WORKLOAD_STATE_RUNNING;
    }
  }
  return false;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') {
    return "localhost";
  }
  return name;
}

int Run(const AgentFlags& f, gpuaas::service::TerminationSignals& signals) {
  auto log = gpuaas::Logger("agent");
  auto fail = [&](const absl::Status& s) {
    log->critical("{}", s.ToString());
    return 2;
  };
  if (f.end_workloads) {
    agent::ForceEndContainers(f.workload_root, agent::ContainerOptions{}.runc_path);
    return 0;
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = agent::ParseLabels(f.labels);
  if (!labels.ok()) {
    return fail(labels.status());
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
  agent::GpuMonitor monitor(*source, *std::move(gpus), clock,
                            {.reprobe_interval = f.reprobe_interval});
  monitor.Poll();

  // Towards auth and stock: TLS when --tls-ca is set, with our certificate for mutual TLS.
  absl::StatusOr<std::shared_ptr<grpc::Channel>> stock_channel =
      gpuaas::service::OpenPeerChannel(f.process, f.peers.stock_addr);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> auth_channel =
      gpuaas::service::OpenPeerChannel(f.process, f.peers.auth_addr);
  if (!stock_channel.ok() || !auth_channel.ok()) {
    return fail(!stock_channel.ok() ? stock_channel.status() : auth_channel.status());
  }
  gpuaas::client::AuthClient auth(*auth_channel);
  std::unique_ptr<gpuaas::client::AccessTokens> tokens;
  if (!f.peers.api_key_file.empty()) {
    absl::StatusOr<std::string> key = gpuaas::service::ReadApiKey(f.peers);
    if (!key.ok()) {
      return fail(key.status());
    }
    tokens = std::make_unique<gpuaas::client::AccessTokens>(auth, *std::move(key), clock);
  } else {
    log->warn("no --api-key-file: calling the stock service without a token");
  }
  agent::StockReporter reporter(
      *stock_channel, tokens.get(),
      [&] { return agent::BuildNode(identity, *capacity, monitor.Snapshot()); },
      [&] { return agent::BuildHeartbeat(identity.node_id, monitor.Snapshot()); },
      {.node_id = identity.node_id, .heartbeat_interval = f.heartbeat_interval});

  // Workloads: run by the process runtime (made before serving: the log service reads it).
  const bool runs_workloads = !f.peers.instance_addr.empty() && f.peers.instance_addr != "none";
  std::unique_ptr<agent::Runtime> runtime;
  std::shared_ptr<agent::ImageStore> images;
  if (runs_workloads) {
    absl::StatusOr<agent::ProcessRuntimeOptions> options = RuntimeOptions(f, monitor.Snapshot());
    if (!options.ok()) {
      return fail(options.status());
    }
    if (f.runtime == "container") {
      absl::StatusOr<agent::ContainerOptions> containers =
          ContainerOptions(f, monitor.Snapshot(), *source, &images);
      if (!containers.ok()) {
        return fail(containers.status());
      }
      options->containers = *std::move(containers);
      if (f.imageless != "process" && f.imageless != "container") {
        return fail(absl::InvalidArgumentError(
            absl::StrCat("--image-less: \"", f.imageless, "\" is not process or container")));
      }
      options->containers.system_image_workloads = f.imageless == "container";
    } else if (f.runtime != "process") {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("--runtime: \"", f.runtime, "\" is not container or process")));
    }
    absl::StatusOr<std::unique_ptr<agent::Runtime>> made =
        agent::NewProcessRuntime(*std::move(options));
    if (!made.ok()) {
      return fail(made.status());
    }
    runtime = *std::move(made);
    // Ceph storages are mounted (ceph-fuse, a key per attachment fetched with this node's
    // token) before the runtime binds them as directories.
    absl::StatusOr<std::shared_ptr<grpc::Channel>> storage_channel =
        gpuaas::service::OpenPeerChannel(f.process, f.peers.storage_addr);
    if (!storage_channel.ok()) {
      return fail(storage_channel.status());
    }
    const std::filesystem::path ceph_dir = std::filesystem::path(f.workload_root) / ".ceph";
    runtime = std::make_unique<agent::CephMountingRuntime>(
        std::move(runtime), agent::StorageCephKeys(*storage_channel, tokens.get()),
        agent::CephFuseMounter((ceph_dir / "keys").string()), (ceph_dir / "mounts").string());
  }

  // The server's own metrics endpoint is off: ours serves the GPU gauges, the process's and the
  // server's registry.
  // Its callers (the instance service, for logs) send a token minted for this node's agent and
  // that call alone (its audience "node:<id>", authz/node_calls.h): any other token, a
  // service's own or another node's, is refused, and what this agent is sent acts nowhere else.
  gpuaas::rpc::ServerOptions server_options = gpuaas::service::ServerOptionsFor(kAgent, f.process);
  server_options.metrics_address = "";
  server_options.cpu_threads = 1;
  gpuaas::rpc::Server server(std::move(server_options),
                             gpuaas::authz::NewJwksAuthenticator(
                                 gpuaas::authz::NewGrpcJwksSource(*auth_channel), clock,
                                 {.audience = gpuaas::authz::NodeAudience(identity.node_id)}));
  agent::WorkloadLogs logs(
      {.node_id = identity.node_id,
       .root = f.workload_root,
       .finished = [&runtime](const std::string& id) { return Finished(runtime.get(), id); }});
  agent::WorkloadLogServiceImpl log_service(logs, server.handler());
  server.AddService(&log_service);
  agent::WorkloadSessionServiceImpl session_service(
      {.node_id = identity.node_id,
       .root = f.workload_root,
       .running = [&runtime](const std::string& id) { return Running(runtime.get(), id); }},
      server.handler());
  server.AddService(&session_service);
  // Beside the GPU gauges, the server's own registry: its calls' series and, with TLS, its
  // certificate's expiry (libs/rpc/cert_expiry.h). Not owned: `server` outlives `metrics`.
  std::shared_ptr<prometheus::Collectable> server_metrics(&server.metrics_registry(),
                                                          [](prometheus::Collectable*) {});
  absl::StatusOr<std::unique_ptr<gpuaas::rpc::MetricsEndpoint>> metrics =
      gpuaas::service::StartMetrics(f.process, {std::make_shared<agent::AgentMetrics>(
                                                    monitor, &reporter.stats(), identity.node_id),
                                                std::move(server_metrics)});
  if (!metrics.ok()) {
    log->critical("metrics: {}", metrics.status().ToString());
    return 1;
  }
  if (!gpuaas::service::StartServing(kAgent, server).ok()) {
    return 1;
  }
  log->info("gpuaas-agent {}: metrics port {}; stock service at {}", agent::kAgentVersion,
            *metrics ? (*metrics)->port() : 0, f.peers.stock_addr);

  // The node's desired set from the instance service, converged on the runtime.
  std::unique_ptr<agent::WorkloadSync> sync;
  if (runs_workloads) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> instance_channel =
        gpuaas::service::OpenPeerChannel(f.process, f.peers.instance_addr);
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
            .keep_finished = f.keep_finished});
  }

  // Until SIGTERM/SIGINT; then the server drains and the loops stop and join, newest first.
  gpuaas::PeriodicTask sampler({.interval = f.sample_interval, .run_immediately = true},
                               [&monitor] { monitor.Poll(); });
  gpuaas::service::LoopThread reporting([&] { reporter.Run(); }, [&] { reporter.Stop(); });
  // The image cache kept under its size: images no workload directory names go first.
  std::optional<gpuaas::PeriodicTask> image_gc;
  if (images) {
    image_gc.emplace(gpuaas::PeriodicTask::Options{.interval = absl::Minutes(10)}, [&] {
      if (absl::Status s = images->CollectGarbage(agent::ImagesInUse(f.workload_root)); !s.ok()) {
        log->warn("image cache: {}", s.ToString());
      }
    });
  }
  std::optional<gpuaas::service::LoopThread> syncing;
  if (sync) {
    syncing.emplace([&] { sync->Run(); }, [&] { sync->Stop(); });
  }
  signals.Wait();
  server.Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return gpuaas::service::RunProcess(argc, argv, kAgent, DefineFlags, Run);
}
