// The whole platform for end-to-end tests: an in-process auth service, and the real
// gpuaas-stock, gpuaas-storage, gpuaas-instance (one or more replicas) and gpuaas-agent
// (simulated GPUs, real sandboxed workloads) binaries as child processes on one test database,
// each on a port of its own that survives a restart, so a test can kill -9 any of them and
// start it again where it was.
#pragma once

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "tests/auth/auth_stack.h"
#include "tests/common/child_process.h"

namespace gpuaas::platform_testing {

namespace instancepb = ::gpuaas::instance::v1;
namespace stockpb = ::gpuaas::stock::v1;
namespace storagepb = ::gpuaas::storage::v1;

// A child process on a fixed loopback port that a test may kill and start again.
class Daemon final {
 public:
  // `metrics_port`: the port its argv's --metrics-listen names, when the test reads its metrics
  // (0: a free port of its choosing).
  Daemon(std::string name, std::vector<std::string> argv, int port, std::filesystem::path log,
         int metrics_port = 0);
  ~Daemon();

  // Starts it and waits until it reports SERVING (the test fails otherwise).
  void Start();
  // NAME=value settings for the next Starts (crash drills' pause hooks); {} for none.
  void set_env(std::vector<std::string> env) { env_ = std::move(env); }
  // kill -9, reaped.
  void Kill();
  // SIGTERM; true when it exited 0 within the grace period.
  bool Stop();
  bool Running();

  const std::string& name() const { return name_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int metrics_port() const { return metrics_port_; }
  // Its log so far, for failure messages.
  std::string Log() const;

 private:
  std::string name_;
  std::vector<std::string> argv_;
  std::vector<std::string> env_;
  int port_;
  std::filesystem::path log_;
  int metrics_port_;
  std::unique_ptr<testing::ChildProcess> process_;
};

struct AgentSpec {
  std::string node_id;
  std::string gpus;  // --simulate-gpus
};

// Which backend holds the storages a test makes.
enum class StorageBackend { kLocal, kCeph };
// "local", "ceph": for parameterized tests' names.
std::string StorageBackendName(StorageBackend backend);

struct PlatformOptions {
  int instance_replicas = 1;
  // The agents reach every instance replica through one "a,b" address (the replica drills);
  // otherwise the first only.
  bool agents_reach_every_instance_replica = false;
  std::vector<AgentSpec> agents = {{"node-a", "2xA100-80GB"}};
  // The stock service's --node-timeout-seconds: heartbeats older than this make a node
  // NOT_READY, and nothing is placed on it until its agent reports again.
  int stock_node_timeout_seconds = 5;
  std::vector<std::string> stock_flags;
  // The storage service's --volume-filesystem: plain directories unless a test needs the size
  // enforced by the kernel ("loop-ext4").
  std::string volume_filesystem = "directory";
  // Where CreateStorage puts tenants' storages: kLocal (the storage service's --data-root) or
  // kCeph (CephFS subvolumes on the ctest fixture `ceph`'s cluster, GPUAAS_TEST_CEPH_DIR; the
  // stack fails the test without one), which the agents mount with ceph-fuse.
  StorageBackend storage_backend = StorageBackend::kLocal;
  std::vector<std::string> storage_flags;
  std::vector<std::string> instance_flags;
  std::vector<std::string> agent_flags;
  // Registries ("127.0.0.1:PORT") the operator allows although they sit on the loopback, spoken
  // to over plain HTTP (--allowed-registries and --insecure-registries of the instance service
  // and the agents). Every other loopback registry is refused, as in production.
  std::vector<std::string> registries;
};

class PlatformStack final {
 public:
  // Starts everything on `dsn`'s database with its files under `dir`.
  PlatformStack(const std::string& dsn, std::filesystem::path dir, PlatformOptions options = {});
  ~PlatformStack();

  auth::testing::AuthStack& auth() { return *auth_; }
  Daemon& stock() { return *stock_; }
  Daemon& storage() { return *storage_; }
  // The storage service's S3 endpoint, "http://127.0.0.1:PORT".
  std::string s3_endpoint() const { return "http://127.0.0.1:" + std::to_string(s3_port_); }
  // The instance service's replicas, each with its metrics on a port of its own.
  Daemon& instance(int replica = 0) { return *instances_.at(replica); }
  // "a,b": every instance replica's address.
  std::string instance_addresses() const;
  Daemon& agent(const std::string& node_id) { return *agents_.at(node_id); }
  const std::filesystem::path& dir() const { return dir_; }
  // The agent's workload directory (its --workload-root).
  std::filesystem::path workload_root(const std::string& node_id) const;
  // The host ports the agent hands to workloads (its --port-range), [first, last].
  std::pair<int, int> port_range(const std::string& node_id) const {
    return port_ranges_.at(node_id);
  }

  stockpb::StockService::Stub& stock_stub() { return *stock_stub_; }
  storagepb::StorageService::Stub& storage_stub() { return *storage_stub_; }
  instancepb::InstanceService::Stub& instances(int replica = 0) {
    return *instance_stubs_.at(replica);
  }
  instancepb::ImageService::Stub& images() { return *image_stub_; }
  instancepb::NodeWorkloadService::Stub& node_workloads() { return *node_workloads_stub_; }
  instancepb::AccessService::Stub& access() { return *access_stub_; }

  const std::string& admin_token() const { return admin_token_; }
  // The machines' own API keys (issue 22): the access proxy's ACCESS_PROXY key file, and the
  // NODE_AGENT key bound to `node_id` that its agent runs with (made on first use).
  const std::filesystem::path& proxy_api_key_file() const { return proxy_api_key_file_; }
  const std::string& agent_api_key(const std::string& node_id);
  // A context with a 20 s deadline and the bearer token.
  static std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token);

  // A tenant with these quotas and a MEMBER in it; returns the member's token.
  std::string CreateTenant(const std::string& tenant_id, int64_t max_gpus = 64,
                           int64_t max_instances = 1000, int64_t max_storage_bytes = 1LL << 40);
  // A token of the same tenant's member again (tokens live 15 minutes).
  std::string MemberToken(const std::string& tenant_id);
  // A GPU spec (whole GPUs of `gpu_type`, or a share) priced `micros_per_hour`, and `stocks`
  // stocks of it once every agent's node is READY; `memory` and `disk` are each workload's
  // limits (tests of the limits pick small ones). Fails the test on error.
  void CreateSpecWithStocks(const std::string& spec_name, const std::string& gpu_type, int gpu_num,
                            int share_milli, int stocks, int64_t micros_per_hour = 1200000,
                            const std::string& memory = "1Gi", const std::string& disk = "1Gi");
  // A READY storage of `size` ("1Gi", "16Mi") of the tenant whose member holds `token`, on
  // the options' storage_backend.
  void CreateStorage(const std::string& token, const std::string& storage_id,
                     const std::string& size = "1Gi");
  // Where the storage `storage_uid`'s files (what a workload sees at its mount) are on this
  // host: under the data root, or in the storage service's own ceph-fuse mount of the cluster.
  // Empty when there is no such storage.
  std::filesystem::path StorageDataPath(const std::string& storage_uid) const;

  // GetInstance until `done` holds (then returns it) or `timeout` passes (fails the test and
  // returns the last answer).
  instancepb::Instance WaitInstance(const std::string& token, const std::string& instance_id,
                                    const std::function<bool(const instancepb::Instance&)>& done,
                                    absl::Duration timeout = absl::Seconds(60), int replica = 0);

  // Stocks CLAIMED, by instance id, as the stock service reports them.
  std::map<std::string, stockpb::Stock> ClaimedStocks();

 private:
  void StartAgent(const AgentSpec& spec);

  std::filesystem::path dir_;
  PlatformOptions options_;
  // --allowed-registries and --insecure-registries of options_.registries.
  std::vector<std::string> registry_flags_;
  std::unique_ptr<auth::testing::AuthStack> auth_;
  std::string admin_token_;
  std::filesystem::path api_key_file_;
  std::filesystem::path proxy_api_key_file_;
  std::map<std::string, std::string> agent_keys_;  // node id -> its agent's key
  std::unique_ptr<Daemon> stock_;
  std::unique_ptr<Daemon> storage_;
  std::vector<std::unique_ptr<Daemon>> instances_;
  std::map<std::string, std::unique_ptr<Daemon>> agents_;
  std::map<std::string, std::pair<int, int>> port_ranges_;
  std::unique_ptr<stockpb::StockService::Stub> stock_stub_;
  std::unique_ptr<storagepb::StorageService::Stub> storage_stub_;
  std::vector<std::unique_ptr<instancepb::InstanceService::Stub>> instance_stubs_;
  std::unique_ptr<instancepb::ImageService::Stub> image_stub_;
  std::unique_ptr<instancepb::NodeWorkloadService::Stub> node_workloads_stub_;
  std::unique_ptr<instancepb::AccessService::Stub> access_stub_;
  std::set<std::string> storage_specs_;  // the storage specs made so far
  int s3_port_ = 0;
};

}  // namespace gpuaas::platform_testing
