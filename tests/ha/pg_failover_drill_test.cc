// PostgreSQL failover under load (issue 25): the real gpuaas-auth binary on tools/pg-ha's
// Patroni cluster through the multi-host DSN, writers creating tenants with idempotency keys,
// and kill -9 of the primary's postmaster. The standby must be promoted, the service must carry
// on without a restart, and every acknowledged write must be there afterwards (synchronous
// commit). Prints the unavailability window (kill → first acknowledged write) and the requests
// that failed meanwhile; bench/RESULTS.md records them.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/testing/eventually.h"
#include "libs/testing/service_dsn.h"
#include "tests/common/child_process.h"
#include "tests/ha/scoped_pg_ha.h"
#include "tests/ha/write_ledger.h"

namespace gpuaas::ha_testing {
namespace {

namespace pb = ::gpuaas::auth::v1;
namespace fs = std::filesystem;
using ::gpuaas::testing::ChildProcess;
using ::gpuaas::testing::Eventually;

constexpr std::string_view kAdminPassword = "failover-drill-admin-password";
constexpr int kWriters = 4;
// Load before the kill, and how long to keep writing once writes succeed again.
constexpr absl::Duration kWarmUp = absl::Seconds(2);
constexpr absl::Duration kAfterRecovery = absl::Seconds(3);
// The goal is under 10 s; the bound leaves room for a loaded CI machine.
constexpr absl::Duration kMaxWindow = absl::Seconds(30);

std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

// Creates tenants drill-<writer>-<n> one after another, each retried with the same request id
// until acknowledged: a retry of a write that did commit is answered from the idempotency
// record, so it is neither lost nor made twice.
void Write(pb::AuthService::Stub& stub, const std::string& token, int writer,
           const std::atomic<bool>& stop, WriteLedger& ledger) {
  for (int n = 0; !stop.load(); ++n) {
    const std::string id = absl::StrCat("drill-", writer, "-", n);
    pb::CreateTenantRequest req;
    req.mutable_tenant()->set_tenant_id(id);
    req.set_request_id(id);
    WriteUntilAcknowledged(ledger, "tenant", id, [&] {
      pb::Tenant tenant;
      return FailureOf(stub.CreateTenant(Ctx(token).get(), req, &tenant));
    });
  }
}

class PgFailoverDrillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ScopedPgHa>> ha = ScopedPgHa::Create();
    ASSERT_TRUE(ha.ok()) << ha.status();
    ha_ = std::move(*ha);
    dir_ =
        fs::path(ha_->dir()).parent_path() / (fs::path(ha_->dir()).filename().string() + "-auth");
    fs::create_directories(dir_);
    std::ofstream(dir_ / "admin-password") << kAdminPassword << "\n";
    port_ = gpuaas::testing::FreePort();
    auth_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_AUTH_BINARY, absl::StrCat("--listen=127.0.0.1:", port_),
            "--metrics-listen=127.0.0.1:0",
            "--db-dsn=" + gpuaas::testing::ServiceDsn(ha_->dsn(), "auth"),
            "--bootstrap-admin-password-file=" + (dir_ / "admin-password").string()},
        (dir_ / "auth.log").string());
    ASSERT_TRUE(gpuaas::testing::WaitServing(address())) << Log();
    stub_ = pb::AuthService::NewStub(
        grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
    pb::LoginRequest login;
    login.set_user_name("admin");
    login.set_password(std::string(kAdminPassword));
    pb::LoginResponse tokens;
    grpc::Status s = stub_->Login(Ctx("").get(), login, &tokens);
    ASSERT_TRUE(s.ok()) << s.error_message();
    token_ = tokens.access_token();
  }

  void TearDown() override {
    auth_.reset();
    ha_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  std::string Log() const {
    std::ifstream in(dir_ / "auth.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // The drill tenants in the database, read on whichever node is the primary now.
  std::set<std::string> StoredTenants() {
    absl::StatusOr<std::set<std::string>> ids =
        ReadColumn(ha_->dsn(), "SELECT tenant_id FROM auth.tenants WHERE tenant_id LIKE 'drill-%'");
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : std::set<std::string>{};
  }

  std::unique_ptr<ScopedPgHa> ha_;
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> auth_;
  std::unique_ptr<pb::AuthService::Stub> stub_;
  std::string token_;
};

TEST_F(PgFailoverDrillTest, KillingThePrimaryLosesNoAcknowledgedWrite) {
  absl::StatusOr<PgHaMember> primary = ha_->MemberWithRole("leader");
  ASSERT_TRUE(primary.ok()) << primary.status();
  ASSERT_GT(primary->postmaster, 0);
  const pid_t service_pid = auth_->pid();

  WriteLedger ledger;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] { Write(*stub_, token_, w, stop, ledger); });
  }
  absl::SleepFor(kWarmUp);
  if (!ledger.Kill([&] { return kill(primary->postmaster, SIGKILL) == 0; })) {
    stop = true;
    for (std::thread& t : writers) t.join();
    FAIL() << "kill -9 " << primary->postmaster << " failed";
  }
  const absl::Time killed_at = ledger.Summarize().killed_at;

  // Promotion: the other node leads.
  const absl::StatusOr<absl::Time> promoted = ha_->WaitForNewLeader(primary->name, kMaxWindow);
  EXPECT_TRUE(promoted.ok()) << promoted.status();
  const absl::Time promoted_at = promoted.value_or(absl::InfiniteFuture());
  // Writes succeed again, then go on a while longer on the new primary.
  EXPECT_TRUE(Eventually([&] { return ledger.Summarize().recovered_at != absl::InfiniteFuture(); },
                         kMaxWindow));
  absl::SleepFor(kAfterRecovery);
  stop = true;
  for (std::thread& t : writers) t.join();

  const WriteOutcome outcome = ledger.Summarize();
  const absl::Duration window = outcome.window();
  std::cout << "pg failover drill: " << kWriters << " writers, " << outcome.acknowledged_total
            << " tenants acknowledged (" << outcome.acknowledged_before_kill
            << " before the kill); "
            << "standby promoted " << absl::FormatDuration(promoted_at - killed_at)
            << " after kill -9 of the primary; first acknowledged write "
            << absl::FormatDuration(window) << " after it; " << outcome.failed_after_kill
            << " requests failed after the kill ("
            << (outcome.failures.empty() ? "none" : outcome.failures) << ")" << std::endl;
  EXPECT_LT(window, kMaxWindow);
  EXPECT_GT(outcome.acknowledged_total, outcome.acknowledged_before_kill)
      << "no write after the failover";

  // The same service process served throughout: it reconnected on its own.
  EXPECT_TRUE(auth_->Running()) << Log();
  EXPECT_EQ(auth_->pid(), service_pid);

  // No acknowledged write was lost (tenant ids are the primary key, so none was made twice).
  const std::set<std::string> stored = StoredTenants();
  std::vector<std::string> lost;
  for (const std::string& id : outcome.acknowledged.at("tenant")) {
    if (!stored.contains(id)) lost.push_back(id);
  }
  EXPECT_TRUE(lost.empty()) << lost.size() << " acknowledged writes lost, e.g. " << lost.front();

  // The old primary comes back as a replica of the new one (pg_rewind): the cluster heals.
  EXPECT_TRUE(Eventually(
      [&] {
        absl::StatusOr<std::vector<PgHaMember>> members = ha_->Members();
        if (!members.ok()) return false;
        for (const PgHaMember& m : *members) {
          if (m.name == primary->name) {
            return m.role != "leader" && (m.state == "running" || m.state == "streaming");
          }
        }
        return false;
      },
      absl::Seconds(60)));
}

}  // namespace
}  // namespace gpuaas::ha_testing
