// Reaching a running instance: one-time access links (GetInstanceAccess, redeemed once by the
// proxy's AccessService, only on their own host), the proxy's activity reports, and the GPU
// readings of GetInstanceMetrics, on the real platform with a real sandboxed workload.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/db/db.h"
#include "libs/db/rows.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

bool Running(const instancepb::Instance& i) { return i.state() == instancepb::STATE_RUNNING; }

class InstanceAccessTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.instance_flags = {"--access-domain=apps.example.test:8443", "--access-scheme=https"};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    token_ = stack_->CreateTenant("studio-a");
    other_ = stack_->CreateTenant("studio-b");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 1);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // A running instance serving HTTP on 8080 (base_url /lab) and 9000, its probe on 9000.
  void StartWeb(const std::string& id) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("a100.1x");
    instancepb::Template* t = req.mutable_template_();
    t->set_cmd(
        "python3 -m http.server \"$GPUAAS_PORT_8080\" --bind 0.0.0.0 & "
        "exec python3 -m http.server \"$GPUAAS_PORT_9000\" --bind 0.0.0.0");
    instancepb::Port* lab = t->add_ports();
    lab->set_port(8080);
    lab->set_base_url("/lab");
    instancepb::Port* probe = t->add_ports();
    probe->set_port(9000);
    probe->set_is_probe(true);
    instancepb::Port* raw = t->add_ports();
    raw->set_port(7000);
    raw->set_protocol(instancepb::PROTOCOL_TCP);
    instancepb::Instance out;
    const grpc::Status created =
        stack_->instances().CreateInstance(PlatformStack::Ctx(token_).get(), req, &out);
    ASSERT_TRUE(created.ok()) << created.error_message();
    stack_->WaitInstance(token_, id, Running);
  }

  grpc::Status Open(const std::string& token, const std::string& id, int port,
                    instancepb::InstanceAccess& out) {
    instancepb::GetInstanceAccessRequest r;
    r.set_instance_id(id);
    r.set_port(port);
    return stack_->instances().GetInstanceAccess(PlatformStack::Ctx(token).get(), r, &out);
  }

  grpc::Status Redeem(const std::string& code, const std::string& id, int port,
                      instancepb::AccessGrant& out) {
    instancepb::RedeemAccessCodeRequest r;
    r.set_code(code);
    r.set_instance_id(id);
    r.set_port(port);
    return stack_->access().RedeemAccessCode(PlatformStack::Ctx(stack_->auth().ProxyToken()).get(),
                                             r, &out);
  }

  static std::string CodeOf(const instancepb::InstanceAccess& a) {
    const size_t at = a.url().find("?code=");
    return at == std::string::npos ? "" : a.url().substr(at + 6);
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
  std::string other_;
};

TEST_F(InstanceAccessTest, ALinkOpensItsOwnPortOnceAndNothingElse) {
  StartWeb("nb-1");
  instancepb::InstanceAccess access;
  ASSERT_TRUE(Open(token_, "nb-1", 0, access).ok());
  // Port 0: the probe port.
  EXPECT_EQ(access.port(), 9000);
  EXPECT_EQ(access.access_url(), "https://nb-1-9000.apps.example.test:8443/");
  EXPECT_TRUE(absl::StartsWith(access.url(),
                               "https://nb-1-9000.apps.example.test:8443/.gpuaas/access?code="))
      << access.url();
  EXPECT_TRUE(access.has_expire_time());

  instancepb::InstanceAccess lab;
  ASSERT_TRUE(Open(token_, "nb-1", 8080, lab).ok());
  EXPECT_EQ(lab.access_url(), "https://nb-1-8080.apps.example.test:8443/lab");
  const std::string code = CodeOf(lab);
  ASSERT_FALSE(code.empty());

  // Another host's instance or port: refused, and the code stays good for its own.
  instancepb::AccessGrant grant;
  EXPECT_EQ(Redeem(code, "nb-1", 9000, grant).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Redeem(code, "nb-2", 8080, grant).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Redeem(code + "x", "nb-1", 8080, grant).error_code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(Redeem(code, "nb-1", 8080, grant).ok());
  EXPECT_EQ(grant.instance_id(), "nb-1");
  EXPECT_EQ(grant.tenant_id(), "studio-a");
  EXPECT_EQ(grant.port(), 8080);
  EXPECT_FALSE(grant.user_id().empty());
  // Once.
  EXPECT_EQ(Redeem(code, "nb-1", 8080, grant).error_code(), grpc::StatusCode::NOT_FOUND);

  // A TCP port, a port it does not have, another tenant.
  EXPECT_EQ(Open(token_, "nb-1", 7000, access).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Open(token_, "nb-1", 7001, access).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Open(token_, "nb-1", 70000, access).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Open(other_, "nb-1", 0, access).error_code(), grpc::StatusCode::NOT_FOUND);

  // A stopped instance has nothing to open.
  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("nb-1");
  instancepb::Instance stopped;
  ASSERT_TRUE(
      stack_->instances().StopInstance(PlatformStack::Ctx(token_).get(), stop, &stopped).ok());
  stack_->WaitInstance(token_, "nb-1",
                       [](const auto& i) { return i.state() == instancepb::STATE_STOPPED; });
  EXPECT_EQ(Open(token_, "nb-1", 0, access).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

// A report moves the instance's idle window (last_active_time), which the idle auto-stop reads.
TEST_F(InstanceAccessTest, ReportsMoveTheIdleWindowAndRefuseBadIds) {
  StartWeb("nb-1");
  auto pool = MakePool(1);
  ASSERT_TRUE(pool.ok()) << pool.status();
  const auto last_active = [&] {
    int64_t micros = 0;
    EXPECT_TRUE((*pool)
                    ->RunInTransaction("read",
                                       [&](db::Tx& tx) {
                                         micros = tx.Exec("SELECT " GPUAAS_SQL_MICROS(
                                                              "last_active_time") " FROM "
                                                              "instance.instances WHERE "
                                                              "instance_id = 'nb-1'")
                                                      .First()
                                                      ->Get<int64_t>(0);
                                         return absl::OkStatus();
                                       })
                    .ok());
    return micros;
  };
  const int64_t before = last_active();
  ASSERT_GT(before, 0);
  absl::SleepFor(absl::Milliseconds(50));
  instancepb::ReportAccessRequest r;
  r.add_instance_ids("nb-1");
  r.add_instance_ids("gone-long-ago");
  instancepb::ReportAccessResponse out;
  EXPECT_TRUE(stack_->access()
                  .ReportAccess(PlatformStack::Ctx(stack_->auth().ProxyToken()).get(), r, &out)
                  .ok());
  EXPECT_GT(last_active(), before);

  r.add_instance_ids("Bad_Id");
  const grpc::Status bad =
      stack_->access().ReportAccess(PlatformStack::Ctx(stack_->auth().ProxyToken()).get(), r, &out);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(bad.error_message(), "instance_ids[2]")) << bad.error_message();
}

TEST_F(InstanceAccessTest, MetricsAreTheInstancesGpusAsTheirNodeLastReportedThem) {
  StartWeb("nb-1");
  const instancepb::Instance running = stack_->WaitInstance(token_, "nb-1", Running);
  ASSERT_EQ(running.gpu_uuids_size(), 1);
  instancepb::GetInstanceMetricsRequest r;
  r.set_instance_id("nb-1");
  instancepb::InstanceMetrics m;
  ASSERT_TRUE(stack_->instances().GetInstanceMetrics(PlatformStack::Ctx(token_).get(), r, &m).ok());
  EXPECT_EQ(m.instance_id(), "nb-1");
  EXPECT_EQ(m.node_id(), running.node_id());
  EXPECT_TRUE(m.has_read_time());
  ASSERT_EQ(m.gpus_size(), 1);
  const instancepb::GpuReading& g = m.gpus(0);
  EXPECT_EQ(g.gpu_uuid(), running.gpu_uuids(0));
  EXPECT_EQ(g.model(), "A100-80GB");
  EXPECT_EQ(g.memory_total_mib(), 81920);
  EXPECT_GE(g.utilization_percent(), 0);
  EXPECT_LE(g.utilization_percent(), 100);
  EXPECT_GT(g.temperature_celsius(), 0);
  EXPECT_GT(g.power_watts(), 0);
  EXPECT_EQ(
      stack_->instances().GetInstanceMetrics(PlatformStack::Ctx(other_).get(), r, &m).error_code(),
      grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace gpuaas::platform_testing
