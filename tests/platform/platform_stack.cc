#include "tests/platform/platform_stack.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "libs/testing/ceph_test.h"
#include "libs/testing/eventually.h"
#include "libs/testing/service_dsn.h"
#include "services/agent/container_setup.h"
#include "services/agent/runtime/ceph_fuse.h"

namespace gpuaas::platform_testing {

namespace fs = std::filesystem;
using gpuaas::testing::ChildProcess;
using gpuaas::testing::Eventually;
using gpuaas::testing::FreePort;
using gpuaas::testing::WaitServing;

Daemon::Daemon(std::string name, std::vector<std::string> argv, int port, fs::path log,
               int metrics_port)
    : name_(std::move(name)),
      argv_(std::move(argv)),
      port_(port),
      log_(std::move(log)),
      metrics_port_(metrics_port) {}

Daemon::~Daemon() = default;

void Daemon::Start() {
  std::vector<std::string> argv = argv_;
  if (!env_.empty()) {
    // env(1) execs the binary: the pid stays the service's own.
    argv.insert(argv.begin(), env_.begin(), env_.end());
    argv.insert(argv.begin(), "/usr/bin/env");
  }
  process_ = std::make_unique<ChildProcess>(argv, log_.string());
  EXPECT_TRUE(WaitServing(address(), 30000))
      << name_ << " did not start (" << process_->Describe() << "):\n"
      << Log();
}

void Daemon::Kill() {
  if (process_ != nullptr) {
    kill(process_->pid(), SIGKILL);
    process_.reset();  // reaps it
  }
}

bool Daemon::Stop() {
  if (process_ == nullptr) return true;
  const int status = process_->Terminate();
  process_.reset();
  return status == 0;
}

bool Daemon::Running() { return process_ != nullptr && process_->Running(); }

std::string Daemon::Log() const {
  std::ifstream in(log_);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

namespace {

std::vector<std::string> With(std::vector<std::string> argv, const std::vector<std::string>& more) {
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

void WriteKeyFile(const fs::path& path, const std::string& secret) {
  std::ofstream(path) << secret << "\n";
  chmod(path.c_str(), 0600);
}

// The ceph-fuse processes whose mountpoint (their last argument) is under `root`.
std::vector<pid_t> CephFuseUnder(const fs::path& root) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const fs::directory_entry& proc : fs::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(proc.path() / "cmdline", std::ios::binary);
    std::vector<std::string> argv;
    for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(arg);
    if (argv.size() < 2 || fs::path(argv.front()).filename() != "ceph-fuse") continue;
    if (argv.back().rfind(root.string() + "/", 0) == 0) found.push_back(std::stoi(name));
  }
  return found;
}

// The --ceph-* flags of the storage service for the fixture's cluster; none (and a failure)
// without one.
std::vector<std::string> CephFlags() {
  absl::StatusOr<gpuaas::testing::CephCluster> cluster = gpuaas::testing::CephClusterFromFixture();
  if (!cluster.ok()) {
    ADD_FAILURE() << cluster.status().message();
    return {};
  }
  return {"--ceph-conf=" + cluster->conf, "--ceph-keyring=" + cluster->keyring,
          "--ceph-fs=" + cluster->fs};
}

}  // namespace

std::string StorageBackendName(StorageBackend backend) {
  return backend == StorageBackend::kCeph ? "ceph" : "local";
}

PlatformStack::PlatformStack(const std::string& dsn, fs::path dir, PlatformOptions options)
    : dir_(std::move(dir)), options_(std::move(options)) {
  // Workloads run as an unprivileged user and must reach their storage's directory.
  chmod(dir_.c_str(), 0711);
  auth_ = std::make_unique<auth::testing::AuthStack>(dsn);
  admin_token_ = auth_->AdminToken();
  auth_->CreateServiceUser("platform-services");
  const std::string service_token =
      auth_->Login("platform-services", auth::testing::AuthStack::PasswordOf("platform-services"));
  // Each machine its own key (issue 22): the instance service SERVICE, the proxy ACCESS_PROXY,
  // each agent NODE_AGENT bound to its node (StartAgent).
  api_key_file_ = dir_ / "service-api-key";
  WriteKeyFile(api_key_file_,
               auth_->CreateApiKey(service_token, "services", common::v1::ROLE_SERVICE));
  proxy_api_key_file_ = dir_ / "proxy-api-key";
  WriteKeyFile(proxy_api_key_file_,
               auth_->CreateApiKey(admin_token_, "proxy", common::v1::ROLE_ACCESS_PROXY));

  // Each service on its own database role, as in the dev stack.
  const auto common = [&](std::string_view service, int metrics_port = 0) {
    return std::vector<std::string>{absl::StrCat("--metrics-listen=127.0.0.1:", metrics_port),
                                    "--db-dsn=" + gpuaas::testing::ServiceDsn(dsn, service),
                                    "--auth-addr=" + auth_->address()};
  };
  int port = FreePort();
  stock_ = std::make_unique<Daemon>(
      "stock",
      With(With({GPUAAS_STOCK_BINARY, "--listen=127.0.0.1:" + std::to_string(port),
                 "--heartbeat-interval-seconds=1",
                 absl::StrCat("--node-timeout-seconds=", options_.stock_node_timeout_seconds)},
                common("stock")),
           options_.stock_flags),
      port, dir_ / "stock.log");
  stock_->Start();

  std::ofstream(dir_ / "storage.key", std::ios::binary) << std::string(32, 's');
  port = FreePort();
  s3_port_ = FreePort();
  std::vector<std::string> storage_flags = options_.storage_flags;
  if (options_.storage_backend == StorageBackend::kCeph) {
    storage_flags = With(CephFlags(), storage_flags);
  }
  storage_ = std::make_unique<Daemon>(
      "storage",
      With(With({GPUAAS_STORAGE_BINARY, "--listen=127.0.0.1:" + std::to_string(port),
                 "--data-root=" + (dir_ / "storage-data").string(),
                 "--secret-key-file=" + (dir_ / "storage.key").string(),
                 "--s3-listen=127.0.0.1:" + std::to_string(s3_port_), "--sync-writes=false",
                 "--volume-filesystem=" + options_.volume_filesystem},
                common("storage")),
           storage_flags),
      port, dir_ / "storage.log");
  storage_->Start();

  if (!options_.registries.empty()) {
    const std::string list = absl::StrJoin(options_.registries, ",");
    registry_flags_ = {"--allowed-registries=" + list, "--insecure-registries=" + list};
  }
  // Seals images' registry logins; one key for every replica.
  std::ofstream(dir_ / "instance.key", std::ios::binary) << std::string(32, 'i');
  for (int i = 0; i < options_.instance_replicas; ++i) {
    port = FreePort();
    const int metrics_port = FreePort();
    auto replica = std::make_unique<Daemon>(
        absl::StrCat("instance-", i),
        With(With({GPUAAS_INSTANCE_BINARY, "--listen=127.0.0.1:" + std::to_string(port),
                   "--stock-addr=" + stock_->address(), "--storage-addr=" + storage_->address(),
                   "--api-key-file=" + api_key_file_.string(),
                   "--secret-key-file=" + (dir_ / "instance.key").string()},
                  With(common("instance", metrics_port), registry_flags_)),
             options_.instance_flags),
        port, dir_ / absl::StrCat("instance-", i, ".log"), metrics_port);
    replica->Start();
    instance_stubs_.push_back(instancepb::InstanceService::NewStub(Channel(replica->address())));
    instances_.push_back(std::move(replica));
  }
  for (const AgentSpec& spec : options_.agents) {
    StartAgent(spec);
  }
  stock_stub_ = stockpb::StockService::NewStub(Channel(stock_->address()));
  storage_stub_ = storagepb::StorageService::NewStub(Channel(storage_->address()));
  image_stub_ = instancepb::ImageService::NewStub(Channel(instances_.at(0)->address()));
  node_workloads_stub_ =
      instancepb::NodeWorkloadService::NewStub(Channel(instances_.at(0)->address()));
  access_stub_ = instancepb::AccessService::NewStub(Channel(instances_.at(0)->address()));
}

PlatformStack::~PlatformStack() {
  agents_.clear();
  // Workloads outlive their agents by design: end what the test's agents started.
  for (const AgentSpec& spec : options_.agents) {
    const std::string root = workload_root(spec.node_id).string();
    std::system(("pkill -KILL -f 'gpuaas-workload-shim .*" + root + "' 2>/dev/null").c_str());
    agent::ForceEndContainers(root, "/usr/sbin/runc");
    // The ceph-fuse mounts of ceph storages outlive their agent too (<root>/.ceph/mounts/<id>/
    // <n>); one left would hold a session that stops the fixture's cluster from stopping.
    const fs::path mounts = workload_root(spec.node_id) / ".ceph" / "mounts";
    std::error_code ec;
    for (const fs::directory_entry& workload : fs::directory_iterator(mounts, ec)) {
      for (const fs::directory_entry& mount : fs::directory_iterator(workload.path(), ec)) {
        absl::Status unmounted = agent::UnmountCephFuse(mount.path().string());
        EXPECT_TRUE(unmounted.ok()) << unmounted;
      }
    }
    // ceph-fuse says goodbye to the MDS after the unmount, and one still at it when the cluster
    // stops waits forever: wait for them while the cluster is up, then end what is left.
    const bool ended = Eventually([&] { return CephFuseUnder(mounts).empty(); }, absl::Seconds(30));
    EXPECT_TRUE(ended) << "ceph-fuse still runs 30 s after unmounting under " << mounts;
    for (pid_t pid : CephFuseUnder(mounts)) kill(pid, SIGKILL);
  }
  instances_.clear();
  // SIGTERM, so that the storage service unmounts its volumes' file systems; whatever a crashed
  // one left mounted is detached here (its loop devices then clear themselves).
  if (storage_ != nullptr) storage_->Stop();
  storage_.reset();
  std::error_code ec;
  for (const fs::directory_entry& volume :
       fs::directory_iterator(dir_ / "storage-data" / "volumes", ec)) {
    umount2(volume.path().c_str(), MNT_DETACH);
  }
  stock_.reset();
  auth_.reset();
}

std::string PlatformStack::instance_addresses() const {
  std::string out;
  for (const auto& replica : instances_) {
    absl::StrAppend(&out, out.empty() ? "" : ",", replica->address());
  }
  return out;
}

fs::path PlatformStack::workload_root(const std::string& node_id) const {
  return dir_ / "workloads" / node_id;
}

const std::string& PlatformStack::agent_api_key(const std::string& node_id) {
  std::string& secret = agent_keys_[node_id];
  if (secret.empty()) {
    secret = auth_->CreateApiKey(auth_->AdminToken(), "agent " + node_id,
                                 common::v1::ROLE_NODE_AGENT, node_id);
  }
  return secret;
}

void PlatformStack::StartAgent(const AgentSpec& spec) {
  const fs::path key_file = dir_ / ("agent-" + spec.node_id + "-api-key");
  WriteKeyFile(key_file, agent_api_key(spec.node_id));
  const int port = FreePort();
  // Its own hundred host ports for workloads: agents of tests running side by side (and of one
  // stack) must not hand out one free port twice before either workload binds it. Below the
  // dev stack's agents' (20000-22999), the ports FreePort hands out (23000 up) and the kernel's
  // ephemeral range, where an outgoing connection took a port the agent had just handed out
  // ("host port ... is taken").
  const int first = gpuaas::testing::ReservePortBlock(static_cast<int>(agents_.size()));
  const std::string port_range = absl::StrCat(first, "-", first + 99);
  port_ranges_[spec.node_id] = {first, first + 99};
  auto agent = std::make_unique<Daemon>(
      "agent-" + spec.node_id,
      With({GPUAAS_AGENT_BINARY, "--node-id=" + spec.node_id, "--simulate-gpus=" + spec.gpus,
            "--listen=127.0.0.1:" + std::to_string(port), "--metrics-listen=127.0.0.1:0",
            "--stock-addr=" + stock_->address(), "--auth-addr=" + auth_->address(),
            "--storage-addr=" + storage_->address(),
            "--instance-addr=" + (options_.agents_reach_every_instance_replica
                                      ? instance_addresses()
                                      : instances_.at(0)->address()),
            "--api-key-file=" + key_file.string(),
            "--workload-root=" + workload_root(spec.node_id).string(), "--sample-interval=200ms",
            "--port-range=" + port_range,
            "--image-root=" + (dir_ / "images" / spec.node_id).string()},
           With(registry_flags_, options_.agent_flags)),
      port, dir_ / ("agent-" + spec.node_id + ".log"));
  agent->Start();
  agents_[spec.node_id] = std::move(agent);
}

std::unique_ptr<grpc::ClientContext> PlatformStack::Ctx(const std::string& token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

std::string PlatformStack::CreateTenant(const std::string& tenant_id, int64_t max_gpus,
                                        int64_t max_instances, int64_t max_storage_bytes) {
  auth::v1::CreateTenantRequest req;
  req.mutable_tenant()->set_tenant_id(tenant_id);
  req.mutable_tenant()->set_display_name("Tenant " + tenant_id);
  auth::v1::Quota* quota = req.mutable_tenant()->mutable_quota();
  quota->set_max_gpus(max_gpus);
  quota->set_max_instances(max_instances);
  quota->set_max_storage_bytes(max_storage_bytes);
  auth::v1::Tenant tenant;
  grpc::Status s = auth_->stub().CreateTenant(Ctx(admin_token_).get(), req, &tenant);
  EXPECT_TRUE(s.ok()) << s.error_message();
  auth_->CreateUser("member-" + tenant_id, tenant_id, common::v1::ROLE_MEMBER);
  return MemberToken(tenant_id);
}

std::string PlatformStack::MemberToken(const std::string& tenant_id) {
  return auth_->Login("member-" + tenant_id,
                      auth::testing::AuthStack::PasswordOf("member-" + tenant_id), tenant_id);
}

void PlatformStack::CreateSpecWithStocks(const std::string& spec_name, const std::string& gpu_type,
                                         int gpu_num, int share_milli, int stocks,
                                         int64_t micros_per_hour, const std::string& memory,
                                         const std::string& disk) {
  stockpb::CreateSpecRequest spec;
  spec.mutable_spec()->set_spec_name(spec_name);
  spec.mutable_spec()->set_gpu_type(gpu_type);
  spec.mutable_spec()->set_gpu_num(gpu_num);
  spec.mutable_spec()->set_gpu_share_milli(share_milli);
  spec.mutable_spec()->set_cpu("1");
  spec.mutable_spec()->set_memory(memory);
  spec.mutable_spec()->set_disk(disk);
  spec.mutable_spec()->mutable_price()->set_micros_per_hour(micros_per_hour);
  spec.mutable_spec()->mutable_price()->set_currency("USD");
  stockpb::Spec created;
  grpc::Status s = stock_stub_->CreateSpec(Ctx(admin_token_).get(), spec, &created);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // Placement needs every agent's node READY.
  ASSERT_TRUE(Eventually(
      [&] {
        stockpb::ListNodesRequest req;
        stockpb::ListNodesResponse resp;
        if (!stock_stub_->ListNodes(Ctx(admin_token_).get(), req, &resp).ok()) return false;
        int ready = 0;
        for (const auto& node : resp.nodes()) {
          ready += node.state() == stockpb::NODE_STATE_READY ? 1 : 0;
        }
        return ready >= static_cast<int>(options_.agents.size());
      },
      absl::Seconds(30)))
      << "the agents' nodes never became READY";
  stockpb::CreateStocksRequest req;
  req.set_number(stocks);
  req.set_spec_name(spec_name);
  req.set_operation_id("stocks-" + spec_name);
  stockpb::CreateStocksResponse placed;
  s = stock_stub_->CreateStocks(Ctx(admin_token_).get(), req, &placed);
  ASSERT_TRUE(s.ok()) << s.error_message();
}

void PlatformStack::CreateStorage(const std::string& token, const std::string& storage_id,
                                  const std::string& size) {
  // "1Gi" -> standard-1g
  std::string spec_name = "standard-" + absl::AsciiStrToLower(size);
  if (spec_name.back() == 'i') spec_name.pop_back();
  if (storage_specs_.insert(spec_name).second) {
    storagepb::CreateStorageSpecRequest req;
    req.mutable_spec()->set_spec_name(spec_name);
    req.mutable_spec()->set_size(size);
    req.mutable_spec()->set_max_files(10000);
    req.mutable_spec()->set_backend_class(StorageBackendName(options_.storage_backend));
    storagepb::StorageSpec spec;
    grpc::Status s = storage_stub_->CreateStorageSpec(Ctx(admin_token_).get(), req, &spec);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  storagepb::CreateStorageRequest req;
  req.set_storage_id(storage_id);
  req.set_spec_name(spec_name);
  storagepb::Storage storage;
  grpc::Status s = storage_stub_->CreateStorage(Ctx(token).get(), req, &storage);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(Eventually(
      [&] {
        storagepb::GetStorageRequest get;
        get.set_storage_id(storage_id);
        return storage_stub_->GetStorage(Ctx(token).get(), get, &storage).ok() &&
               storage.state() == storagepb::STORAGE_STATE_READY;
      },
      absl::Seconds(20)));
  // A test of the ceph backend that ran on local would prove nothing about it.
  EXPECT_EQ(storage.backend_class(), StorageBackendName(options_.storage_backend)) << storage_id;
}

fs::path PlatformStack::StorageDataPath(const std::string& storage_uid) const {
  if (options_.storage_backend == StorageBackend::kLocal) {
    // A volume with a file system of its own keeps its files in data/ (beside lost+found); a
    // plain directory volume is the directory itself.
    const fs::path volume = dir_ / "storage-data" / "volumes" / storage_uid;
    return fs::is_directory(volume / "data") ? volume / "data" : volume;
  }
  // A subvolume is /volumes/_nogroup/<name>/<uuid> in the file system, which the storage service
  // mounts whole at <data root>/ceph-mount; its files are in data/ (services/storage/ceph).
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(
           dir_ / "storage-data" / "ceph-mount" / "volumes" / "_nogroup" / storage_uid, ec)) {
    if (fs::is_directory(entry.path() / "data", ec)) return entry.path() / "data";
  }
  return {};
}

instancepb::Instance PlatformStack::WaitInstance(
    const std::string& token, const std::string& instance_id,
    const std::function<bool(const instancepb::Instance&)>& done, absl::Duration timeout,
    int replica) {
  instancepb::Instance last;
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    instancepb::GetInstanceRequest req;
    req.set_instance_id(instance_id);
    instancepb::Instance got;
    if (instances(replica).GetInstance(Ctx(token).get(), req, &got).ok()) {
      last = got;
      if (done(got)) return got;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "instance " << instance_id << " did not get there in "
                << absl::FormatDuration(timeout) << "; last seen:\n"
                << last.DebugString();
  return last;
}

std::map<std::string, stockpb::Stock> PlatformStack::ClaimedStocks() {
  std::map<std::string, stockpb::Stock> claimed;
  stockpb::ListStocksRequest req;
  req.set_state(stockpb::STOCK_STATE_CLAIMED);
  req.set_page_size(500);
  for (;;) {
    stockpb::ListStocksResponse resp;
    grpc::Status s = stock_stub_->ListStocks(Ctx(admin_token_).get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    for (const auto& stock : resp.stocks()) claimed[stock.instance_id()] = stock;
    if (!s.ok() || resp.next_page_token().empty()) break;
    req.set_page_token(resp.next_page_token());
  }
  return claimed;
}

}  // namespace gpuaas::platform_testing
