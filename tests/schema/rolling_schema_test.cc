// The previous release's binaries on the schema this build migrates (services/README.md "Schema
// changes"): this build's four services migrate a fresh database and stop; the previous
// release's (tools/build-previous) then serve a tenant's whole journey alone; then both run side
// by side on that database, as in the middle of a rolling upgrade, and journeys mix them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/container_setup.h"
#include "tests/common/child_process.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::schema_testing {
namespace {

namespace fs = std::filesystem;
namespace authpb = ::gpuaas::auth::v1;
namespace commonpb = ::gpuaas::common::v1;
using platform_testing::Daemon;
using platform_testing::PlatformStack;
using platform_testing::instancepb::Instance;
using platform_testing::stockpb::NODE_STATE_READY;
using testing::Eventually;
using testing::FreePort;
namespace instancepb = platform_testing::instancepb;
namespace stockpb = platform_testing::stockpb;
namespace storagepb = platform_testing::storagepb;

constexpr std::string_view kAdminPassword = "rolling-schema-admin-password";
constexpr std::string_view kNode = "node-roll";

// One release's service binaries.
struct Release {
  std::string name;
  std::map<std::string, fs::path> binaries;  // by service: auth, stock, storage, instance
};

Release ThisBuild() {
  return {"new",
          {{"auth", GPUAAS_AUTH_BINARY},
           {"stock", GPUAAS_STOCK_BINARY},
           {"storage", GPUAAS_STORAGE_BINARY},
           {"instance", GPUAAS_INSTANCE_BINARY}}};
}

Release Previous() {
  const fs::path build = GPUAAS_PREVIOUS_DIR "/src/build/services";
  Release release{"previous", {}};
  for (const char* service : {"auth", "stock", "storage", "instance"}) {
    release.binaries[service] = build / service / absl::StrCat("gpuaas-", service);
  }
  return release;
}

std::string ReadFirstLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The stubs a journey goes through: each service of either release.
struct Stubs {
  std::unique_ptr<authpb::AuthService::Stub> auth;
  std::unique_ptr<stockpb::StockService::Stub> stock;
  std::unique_ptr<storagepb::StorageService::Stub> storage;
  std::unique_ptr<instancepb::InstanceService::Stub> instance;
};

std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

const auto Ctx = PlatformStack::Ctx;

class RollingSchemaTest : public testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    const std::string commit = ReadFirstLine(GPUAAS_PREVIOUS_DIR "/commit");
    ASSERT_FALSE(commit.empty())
        << "the previous release's binaries are not built: ctest's fixture "
           "schema_previous_binaries runs tools/build-previous "
        << GPUAAS_PREVIOUS_DIR << " (it fails in a shallow clone; see its output)";
    for (const auto& [service, binary] : Previous().binaries) {
      ASSERT_TRUE(fs::exists(binary)) << binary << " is missing (tools/build-previous)";
    }
    std::cout << "previous release: " << commit << "\n";
    chmod(dir_.path().c_str(), 0711);  // workloads run unprivileged and reach their storage
    std::ofstream(dir_.path() / "admin-password") << kAdminPassword << "\n";
    std::ofstream(dir_.path() / "storage.key", std::ios::binary) << std::string(32, 's');
    std::ofstream(dir_.path() / "instance.key", std::ios::binary) << std::string(32, 'i');
  }

  void TearDown() override {
    agent_.reset();
    // Workloads outlive their agent by design: end what this test's agent started.
    const std::string root = (dir_.path() / "workloads").string();
    std::system(("pkill -KILL -f 'gpuaas-workload-shim .*" + root + "' 2>/dev/null").c_str());
    agent::ForceEndContainers(root, "/usr/sbin/runc");
    for (auto& [name, daemon] : daemons_) daemon->Stop();
    daemons_.clear();
    PgTest::TearDown();
  }

  // Starts `release`'s `service` as "<release>-<service>". Its settings go in the environment
  // (GPUAAS_<SERVICE>_<FLAG>, libs/service/env_options.h): a release that lacks a setting
  // ignores it, where an unknown flag would stop it. `port` 0 picks a free one.
  Daemon& StartService(const Release& release, const std::string& service,
                       std::map<std::string, std::string> settings, int port = 0) {
    if (port == 0) port = FreePort();
    const std::string name = release.name + "-" + service;
    settings["listen"] = absl::StrCat("127.0.0.1:", port);
    settings["metrics-listen"] = "127.0.0.1:0";
    settings["db-dsn"] = testing::ServiceDsn(dsn(), service);
    std::vector<std::string> env;
    for (const auto& [flag, value] : settings) {
      std::string var = absl::StrCat("GPUAAS_", service, "_", flag);
      for (char& c : var) c = c == '-' ? '_' : static_cast<char>(std::toupper(c));
      env.push_back(var + "=" + value);
    }
    auto daemon =
        std::make_unique<Daemon>(name, std::vector<std::string>{release.binaries.at(service)}, port,
                                 dir_.path() / (name + ".log"));
    daemon->set_env(std::move(env));
    daemon->Start();
    Daemon& started = *daemon;
    daemons_[name] = std::move(daemon);
    return started;
  }

  // `release`'s four services; the storage service on `storage_port` when given (one storage
  // process holds a data root, so a rolling upgrade replaces it where it was, never doubles it).
  Stubs StartRelease(const Release& release, int storage_port = 0) {
    const std::string auth =
        StartService(release, "auth",
                     {{"bootstrap-admin-password-file", (dir_.path() / "admin-password").string()}})
            .address();
    const std::string stock = StartService(release, "stock",
                                           {{"auth-addr", auth},
                                            {"heartbeat-interval-seconds", "1"},
                                            {"node-timeout-seconds", "30"}})
                                  .address();
    const std::string storage_addr =
        StartService(release, "storage",
                     {{"auth-addr", auth},
                      {"data-root", (dir_.path() / "storage-data").string()},
                      {"secret-key-file", (dir_.path() / "storage.key").string()},
                      {"s3-listen", absl::StrCat("127.0.0.1:", FreePort())},
                      {"sync-writes", "false"},
                      {"volume-filesystem", "directory"}},
                     storage_port)
            .address();
    Stubs stubs{authpb::AuthService::NewStub(Channel(auth)),
                stockpb::StockService::NewStub(Channel(stock)),
                storagepb::StorageService::NewStub(Channel(storage_addr)), nullptr};
    if (service_key_file_.empty()) MakeMachineKeys(*stubs.auth);
    const std::string instance =
        StartService(release, "instance",
                     {{"auth-addr", auth},
                      {"stock-addr", stock},
                      {"storage-addr", storage_addr},
                      {"api-key-file", service_key_file_.string()},
                      {"secret-key-file", (dir_.path() / "instance.key").string()}})
            .address();
    stubs.instance = instancepb::InstanceService::NewStub(Channel(instance));
    return stubs;
  }

  void StopRelease(const Release& release) {
    for (auto it = daemons_.begin(); it != daemons_.end();) {
      if (it->first.starts_with(release.name + "-")) {
        EXPECT_TRUE(it->second->Stop()) << it->first << " did not stop cleanly:\n"
                                        << it->second->Log();
        it = daemons_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::string Login(authpb::AuthService::Stub& auth, const std::string& user,
                    const std::string& password, const std::string& tenant = "") {
    authpb::LoginRequest req;
    req.set_user_name(user);
    req.set_password(password);
    req.set_tenant_id(tenant);
    authpb::LoginResponse resp;
    grpc::Status s = auth.Login(Ctx("").get(), req, &resp);
    EXPECT_TRUE(s.ok()) << user << ": " << s.error_message();
    return resp.access_token();
  }

  std::string CreateApiKey(authpb::AuthService::Stub& auth, const std::string& token,
                           commonpb::Role role, const std::string& node_id = "") {
    authpb::CreateApiKeyRequest req;
    req.set_name(absl::StrCat("key-", role, node_id));
    req.set_role(role);
    req.set_node_id(node_id);
    authpb::CreateApiKeyResponse resp;
    grpc::Status s = auth.CreateApiKey(Ctx(token).get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.secret();
  }

  // The instance service's SERVICE key and the agent's NODE_AGENT key, as `tools/gpuaas up`
  // makes them.
  void MakeMachineKeys(authpb::AuthService::Stub& auth) {
    const std::string admin = Login(auth, "admin", std::string(kAdminPassword));
    authpb::CreateUserRequest user;
    user.mutable_user()->set_user_name("platform-services");
    user.mutable_user()->set_global_role(commonpb::ROLE_SERVICE);
    user.set_password("password-platform-services");
    authpb::User created;
    grpc::Status s = auth.CreateUser(Ctx(admin).get(), user, &created);
    ASSERT_TRUE(s.ok()) << s.error_message();
    const std::string service = Login(auth, "platform-services", "password-platform-services");
    service_key_file_ = dir_.path() / "service-api-key";
    std::ofstream(service_key_file_) << CreateApiKey(auth, service, commonpb::ROLE_SERVICE);
    agent_key_file_ = dir_.path() / "agent-api-key";
    std::ofstream(agent_key_file_)
        << CreateApiKey(auth, admin, commonpb::ROLE_NODE_AGENT, std::string(kNode));
    chmod(service_key_file_.c_str(), 0600);
    chmod(agent_key_file_.c_str(), 0600);
  }

  // This build's agent (agents hold no schema), on the given services' addresses.
  void StartAgent(const std::string& auth, const std::string& stock, const std::string& instance) {
    const int port = FreePort();
    const int first = testing::ReservePortBlock(0);
    agent_ = std::make_unique<Daemon>(
        "agent",
        std::vector<std::string>{
            GPUAAS_AGENT_BINARY, "--node-id=" + std::string(kNode), "--simulate-gpus=4xA100-80GB",
            absl::StrCat("--listen=127.0.0.1:", port), "--metrics-listen=127.0.0.1:0",
            "--stock-addr=" + stock, "--auth-addr=" + auth, "--instance-addr=" + instance,
            "--api-key-file=" + agent_key_file_.string(),
            "--workload-root=" + (dir_.path() / "workloads").string(), "--sample-interval=200ms",
            absl::StrCat("--port-range=", first, "-", first + 99),
            "--image-root=" + (dir_.path() / "images").string()},
        port, dir_.path() / "agent.log");
    agent_->Start();
  }

  // A tenant's journey through `stubs`: a tenant and its member, a spec and a stock, a storage,
  // an instance that runs on the node and stops again, giving its stock back. `tag` names all.
  void Journey(Stubs& stubs, const std::string& tag) {
    SCOPED_TRACE("journey " + tag);
    const std::string admin = Login(*stubs.auth, "admin", std::string(kAdminPassword));
    const std::string tenant = "t-" + tag;
    authpb::CreateTenantRequest new_tenant;
    new_tenant.mutable_tenant()->set_tenant_id(tenant);
    new_tenant.mutable_tenant()->mutable_quota()->set_max_gpus(4);
    new_tenant.mutable_tenant()->mutable_quota()->set_max_instances(10);
    new_tenant.mutable_tenant()->mutable_quota()->set_max_storage_bytes(1LL << 30);
    authpb::Tenant created_tenant;
    grpc::Status s = stubs.auth->CreateTenant(Ctx(admin).get(), new_tenant, &created_tenant);
    ASSERT_TRUE(s.ok()) << "CreateTenant: " << s.error_message();
    authpb::CreateUserRequest member;
    member.mutable_user()->set_user_name("member-" + tag);
    member.set_password("password-member-" + tag);
    member.set_tenant_id(tenant);
    member.set_role(commonpb::ROLE_MEMBER);
    authpb::User user;
    s = stubs.auth->CreateUser(Ctx(admin).get(), member, &user);
    ASSERT_TRUE(s.ok()) << "CreateUser: " << s.error_message();
    const std::string token = Login(*stubs.auth, "member-" + tag, "password-member-" + tag, tenant);
    ASSERT_FALSE(token.empty());

    stockpb::CreateSpecRequest spec;
    spec.mutable_spec()->set_spec_name("a100-" + tag);
    spec.mutable_spec()->set_gpu_type("A100-80GB");
    spec.mutable_spec()->set_gpu_num(1);
    spec.mutable_spec()->set_cpu("1");
    spec.mutable_spec()->set_memory("1Gi");
    spec.mutable_spec()->set_disk("1Gi");
    spec.mutable_spec()->mutable_price()->set_micros_per_hour(3600000000);
    spec.mutable_spec()->mutable_price()->set_currency("USD");
    stockpb::Spec created_spec;
    s = stubs.stock->CreateSpec(Ctx(admin).get(), spec, &created_spec);
    ASSERT_TRUE(s.ok()) << "CreateSpec: " << s.error_message();
    ASSERT_TRUE(Eventually(
        [&] {
          stockpb::ListNodesRequest list;
          stockpb::ListNodesResponse nodes;
          if (!stubs.stock->ListNodes(Ctx(admin).get(), list, &nodes).ok()) return false;
          return nodes.nodes_size() == 1 && nodes.nodes(0).state() == NODE_STATE_READY;
        },
        absl::Seconds(30)))
        << "the agent's node never became READY:\n"
        << agent_->Log();
    stockpb::CreateStocksRequest stocks;
    stocks.set_spec_name("a100-" + tag);
    stocks.set_number(1);
    stocks.set_operation_id("stocks-" + tag);
    stockpb::CreateStocksResponse placed;
    s = stubs.stock->CreateStocks(Ctx(admin).get(), stocks, &placed);
    ASSERT_TRUE(s.ok()) << "CreateStocks: " << s.error_message();

    storagepb::CreateStorageSpecRequest storage_spec;
    storage_spec.mutable_spec()->set_spec_name("small-" + tag);
    storage_spec.mutable_spec()->set_size("16Mi");
    storage_spec.mutable_spec()->set_max_files(1000);
    storage_spec.mutable_spec()->set_backend_class("local");
    storagepb::StorageSpec created_storage_spec;
    s = stubs.storage->CreateStorageSpec(Ctx(admin).get(), storage_spec, &created_storage_spec);
    ASSERT_TRUE(s.ok()) << "CreateStorageSpec: " << s.error_message();
    storagepb::CreateStorageRequest storage;
    storage.set_storage_id("data-" + tag);
    storage.set_spec_name("small-" + tag);
    storagepb::Storage created_storage;
    s = stubs.storage->CreateStorage(Ctx(token).get(), storage, &created_storage);
    ASSERT_TRUE(s.ok()) << "CreateStorage: " << s.error_message();
    ASSERT_TRUE(Eventually(
        [&] {
          storagepb::GetStorageRequest get;
          get.set_storage_id("data-" + tag);
          return stubs.storage->GetStorage(Ctx(token).get(), get, &created_storage).ok() &&
                 created_storage.state() == storagepb::STORAGE_STATE_READY;
        },
        absl::Seconds(20)))
        << "storage data-" << tag << " never became READY";

    instancepb::CreateInstanceRequest create;
    create.set_instance_id("job-" + tag);
    create.set_spec_name("a100-" + tag);
    create.set_storage_id("data-" + tag);
    // Ends at once on SIGTERM (a shell that waits in `sleep 600` would sit out the grace period).
    create.mutable_template_()->set_cmd("echo " + tag +
                                        " > /data/hello; trap 'exit 0' TERM; "
                                        "while :; do sleep 0.1; done");
    instancepb::Volume* volume = create.mutable_template_()->add_volumes();
    volume->set_name("data");
    volume->set_mount_path("/data");
    Instance instance;
    s = stubs.instance->CreateInstance(Ctx(token).get(), create, &instance);
    ASSERT_TRUE(s.ok()) << "CreateInstance: " << s.error_message();
    instance = WaitState(*stubs.instance, token, "job-" + tag, instancepb::STATE_RUNNING);
    ASSERT_EQ(instance.state(), instancepb::STATE_RUNNING) << instance.DebugString() << Logs();
    EXPECT_EQ(instance.node_id(), kNode);

    instancepb::StopInstanceRequest stop;
    stop.set_instance_id("job-" + tag);
    s = stubs.instance->StopInstance(Ctx(token).get(), stop, &instance);
    ASSERT_TRUE(s.ok()) << "StopInstance: " << s.error_message();
    instance = WaitState(*stubs.instance, token, "job-" + tag, instancepb::STATE_STOPPED);
    ASSERT_EQ(instance.state(), instancepb::STATE_STOPPED) << instance.DebugString() << Logs();
    tokens_[tag] = token;
  }

  Instance WaitState(instancepb::InstanceService::Stub& instances, const std::string& token,
                     const std::string& instance_id, instancepb::State state) {
    Instance last;
    Eventually(
        [&] {
          instancepb::GetInstanceRequest get;
          get.set_instance_id(instance_id);
          return instances.GetInstance(Ctx(token).get(), get, &last).ok() && last.state() == state;
        },
        absl::Seconds(60));
    return last;
  }

  // Every log so far, for a failure's message.
  std::string Logs() {
    std::string all;
    for (const auto& [name, daemon] : daemons_) {
      absl::StrAppend(&all, "\n--- ", name, " ---\n", daemon->Log());
    }
    if (agent_ != nullptr) absl::StrAppend(&all, "\n--- agent ---\n", agent_->Log());
    return all;
  }

  testing::TempDir dir_;
  std::map<std::string, std::unique_ptr<Daemon>> daemons_;  // by "<release>-<service>"
  std::unique_ptr<Daemon> agent_;
  fs::path service_key_file_;
  fs::path agent_key_file_;
  std::map<std::string, std::string> tokens_;  // each journey's member token, by tag
};

TEST_F(RollingSchemaTest, PreviousReleaseServesOnTheNewSchemaAloneAndBesideTheNew) {
  const Release current = ThisBuild();
  const Release previous = Previous();

  // This build migrates every schema (and makes the machines' keys), then stops.
  StartRelease(current);
  StopRelease(current);
  ASSERT_FALSE(HasFailure()) << Logs();

  // The previous release alone on the new schema.
  Stubs old = StartRelease(previous);
  StartAgent(daemons_.at("previous-auth")->address(), daemons_.at("previous-stock")->address(),
             daemons_.at("previous-instance")->address());
  Journey(old, "old");
  ASSERT_FALSE(HasFailure()) << Logs();

  // A rolling upgrade's middle: the storage service is replaced (one process per data root),
  // the others run in both releases at once. Journeys cross them both ways, and each release
  // reads what the other wrote.
  const std::string storage = daemons_.at("previous-storage")->address();
  ASSERT_TRUE(daemons_.at("previous-storage")->Stop()) << Logs();
  daemons_.erase("previous-storage");
  Stubs next = StartRelease(current, std::stoi(storage.substr(storage.rfind(':') + 1)));
  Stubs old_with_new{std::move(old.auth), std::move(next.stock), std::move(old.storage),
                     std::move(old.instance)};
  Journey(old_with_new, "mixed-a");
  Stubs new_with_old{authpb::AuthService::NewStub(Channel(daemons_.at("new-auth")->address())),
                     std::move(old.stock), std::move(next.storage), std::move(next.instance)};
  Journey(new_with_old, "mixed-b");
  for (const auto& [tag, token] : tokens_) {
    for (Stubs* stubs : {&old_with_new, &new_with_old}) {
      instancepb::GetInstanceRequest get;
      get.set_instance_id("job-" + tag);
      Instance got;
      grpc::Status s = stubs->instance->GetInstance(Ctx(token).get(), get, &got);
      EXPECT_TRUE(s.ok()) << "job-" << tag << ": " << s.error_message();
      EXPECT_EQ(got.state(), instancepb::STATE_STOPPED) << got.DebugString();
    }
  }
  // The previous release's instance, started again by this build and stopped by the previous.
  const std::string& token = tokens_.at("old");
  instancepb::StartInstanceRequest start;
  start.set_instance_id("job-old");
  Instance instance;
  grpc::Status s = new_with_old.instance->StartInstance(Ctx(token).get(), start, &instance);
  ASSERT_TRUE(s.ok()) << "StartInstance: " << s.error_message();
  instance = WaitState(*new_with_old.instance, token, "job-old", instancepb::STATE_RUNNING);
  ASSERT_EQ(instance.state(), instancepb::STATE_RUNNING) << instance.DebugString() << Logs();
  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("job-old");
  s = old_with_new.instance->StopInstance(Ctx(token).get(), stop, &instance);
  ASSERT_TRUE(s.ok()) << "StopInstance: " << s.error_message();
  instance = WaitState(*old_with_new.instance, token, "job-old", instancepb::STATE_STOPPED);
  EXPECT_EQ(instance.state(), instancepb::STATE_STOPPED) << instance.DebugString() << Logs();
  EXPECT_FALSE(HasFailure()) << Logs();
}

}  // namespace
}  // namespace gpuaas::schema_testing
