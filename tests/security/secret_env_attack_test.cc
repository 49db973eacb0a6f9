// Secret environment values are write-only (issue 32, "Secrets"): a tenant's instance carries a
// secret variable; a viewer of the tenant, the member who made it, the tenant's admin and the
// platform admin read the instance every way the API offers (GetInstance, ListInstances,
// WatchInstances over gRPC; the same through the REST gateway) and see that it is set, never
// its value. The workload does get the value. The real platform: services, agent, sandboxed
// workload, gateway process.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

constexpr absl::string_view kSecret = "s3cr3t-db-password-7f1c2e";

// One HTTP/1.0 request to 127.0.0.1:port with extra header lines; the whole answer, or "".
std::string Http(int port, const std::string& path, const std::string& headers = "") {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{.sin_family = AF_INET, .sin_port = htons(static_cast<uint16_t>(port))};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request =
        absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n", headers, "\r\n");
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) answer.append(buf, n);
    }
  }
  close(fd);
  return answer;
}

class SecretEnvAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    owner_ = stack_->CreateTenant("studio-a");
    auto& auth = stack_->auth();
    auth.CreateUser("watcher", "studio-a", common::v1::ROLE_VIEWER);
    viewer_ = auth.Login("watcher", auth::testing::AuthStack::PasswordOf("watcher"), "studio-a");
    auth.CreateUser("boss", "studio-a", common::v1::ROLE_TENANT_ADMIN);
    tenant_admin_ = auth.Login("boss", auth::testing::AuthStack::PasswordOf("boss"), "studio-a");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 1);
    stack_->CreateStorage(owner_, "studio-a-data");
    gateway_port_ = gpuaas::testing::FreePort();
    gateway_ = std::make_unique<gpuaas::testing::ChildProcess>(
        std::vector<std::string>{GPUAAS_GATEWAY_BINARY,
                                 absl::StrCat("--listen=127.0.0.1:", gateway_port_),
                                 "--metrics-listen=127.0.0.1:0", "--auth-addr=" + auth.address(),
                                 "--stock-addr=" + stack_->stock().address(),
                                 "--storage-addr=" + stack_->storage().address(),
                                 "--instance-addr=" + stack_->instance().address()},
        (dir_.path() / "gateway.log").string());
    ASSERT_TRUE(gpuaas::testing::Eventually(
        [&] { return absl::StrContains(Http(gateway_port_, "/healthz"), "200 OK"); }));
  }
  void TearDown() override {
    gateway_.reset();
    stack_.reset();
    PgTest::TearDown();
  }

  // Everything a caller with `token` reads about the tenant's instances, gRPC and REST.
  std::string EverythingReadBy(const std::string& token) {
    std::string seen;
    instancepb::GetInstanceRequest get;
    get.set_instance_id("db-1");
    instancepb::Instance one;
    grpc::Status s = stack_->instances().GetInstance(PlatformStack::Ctx(token).get(), get, &one);
    EXPECT_TRUE(s.ok()) << s.error_message();
    seen += one.SerializeAsString();
    // The variable is there, marked secret, without its value.
    bool listed = false;
    for (const instancepb::Env& e : one.template_().envs()) {
      if (e.name() == "DB_PASSWORD") {
        listed = true;
        EXPECT_TRUE(e.secret());
        EXPECT_TRUE(e.value().empty());
      }
    }
    EXPECT_TRUE(listed) << one.DebugString();
    instancepb::ListInstancesRequest list;
    list.set_tenant_id("studio-a");
    instancepb::ListInstancesResponse all;
    s = stack_->instances().ListInstances(PlatformStack::Ctx(token).get(), list, &all);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(all.instances_size(), 1);
    seen += all.SerializeAsString();
    instancepb::WatchInstancesRequest watch;
    watch.set_tenant_id("studio-a");
    auto ctx = PlatformStack::Ctx(token);
    auto reader = stack_->instances().WatchInstances(ctx.get(), watch);
    for (instancepb::InstanceChange change; reader->Read(&change);) {
      seen += change.SerializeAsString();
      if (change.type() == instancepb::InstanceChange::TYPE_SYNCED) break;
    }
    ctx->TryCancel();
    reader->Finish();
    const std::string bearer = absl::StrCat("Authorization: Bearer ", token, "\r\n");
    const std::string rest = Http(gateway_port_, "/v1/instances/db-1", bearer);
    EXPECT_TRUE(absl::StrContains(rest, "DB_PASSWORD")) << rest;
    seen += rest;
    seen += Http(gateway_port_, "/v1/instances?tenant_id=studio-a", bearer);
    return seen;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::unique_ptr<gpuaas::testing::ChildProcess> gateway_;
  int gateway_port_ = 0;
  std::string owner_, viewer_, tenant_admin_;
};

TEST_F(SecretEnvAttackTest, NoCallerReadsASecretValueTheWorkloadGets) {
  instancepb::CreateInstanceRequest req;
  req.set_instance_id("db-1");
  req.set_spec_name("a100.1x");
  req.set_storage_id("studio-a-data");
  instancepb::Template* t = req.mutable_template_();
  // The workload shows what it got on its port.
  t->set_cmd(
      "mkdir -p /data/www && printf '%s|%s' \"$DB_PASSWORD\" \"$PLAIN\" > /data/www/env.txt && "
      "cd /data/www && exec python3 -m http.server \"$GPUAAS_PORT_8080\" --bind 0.0.0.0");
  instancepb::Port* port = t->add_ports();
  port->set_port(8080);
  port->set_is_probe(true);
  instancepb::Env* secret = t->add_envs();
  secret->set_name("DB_PASSWORD");
  secret->set_value(std::string(kSecret));
  secret->set_secret(true);
  instancepb::Env* plain = t->add_envs();
  plain->set_name("PLAIN");
  plain->set_value("visible");
  instancepb::Volume* volume = t->add_volumes();
  volume->set_name("data");
  volume->set_mount_path("/data");

  // Even the answer to the create that set it leaves the value out.
  instancepb::Instance created;
  grpc::Status s =
      stack_->instances().CreateInstance(PlatformStack::Ctx(owner_).get(), req, &created);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(absl::StrContains(created.SerializeAsString(), kSecret));

  instancepb::Instance running = stack_->WaitInstance(
      owner_, "db-1", [](const auto& i) { return i.state() == instancepb::STATE_RUNNING; });
  ASSERT_EQ(running.state(), instancepb::STATE_RUNNING) << stack_->instance().Log();
  ASSERT_EQ(running.ports_size(), 1);
  const std::string page = Http(running.ports(0).host_port(), "/env.txt");
  EXPECT_TRUE(absl::StrContains(page, absl::StrCat(kSecret, "|visible"))) << page;

  for (const std::string& token :
       std::vector<std::string>{viewer_, owner_, tenant_admin_, stack_->admin_token()}) {
    const std::string seen = EverythingReadBy(token);
    EXPECT_FALSE(absl::StrContains(seen, kSecret)) << "a reader saw the secret value";
    EXPECT_TRUE(absl::StrContains(seen, "visible")) << "plain values are still answered";
  }

  // A stop and a start (answers of their own) say nothing either.
  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("db-1");
  instancepb::Instance stopping;
  ASSERT_TRUE(
      stack_->instances().StopInstance(PlatformStack::Ctx(owner_).get(), stop, &stopping).ok());
  EXPECT_FALSE(absl::StrContains(stopping.SerializeAsString(), kSecret));
}

}  // namespace
}  // namespace gpuaas::platform_testing
