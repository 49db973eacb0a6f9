// PostgreSQL failover under load (issue 25): the real gpuaas-auth binary on tools/pg-ha's
// Patroni cluster through the multi-host DSN, writers creating tenants with idempotency keys,
// and kill -9 of the primary's postmaster. The standby must be promoted, the service must carry
// on without a restart, and every acknowledged write must be there afterwards (synchronous
// commit). Prints the unavailability window (kill → first acknowledged write) and the requests
// that failed meanwhile; bench/RESULTS.md records them.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/db/db.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/service_dsn.h"
#include "tests/common/child_process.h"
#include "tests/ha/scoped_pg_ha.h"

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

// What the writers saw: every acknowledged tenant, every failed call, and when.
struct Ledger {
  struct Ack {
    std::string tenant_id;
    absl::Time sent;
    absl::Time acknowledged;
  };
  absl::Mutex mu;
  std::vector<Ack> acks ABSL_GUARDED_BY(mu);
  std::map<absl::StatusCode, int> failures ABSL_GUARDED_BY(mu);
  int failed_after_kill ABSL_GUARDED_BY(mu) = 0;
  absl::Time killed_at ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
  // When the first call after the kill failed: the outage as the clients saw it began.
  absl::Time first_failure_after_kill ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
};

// Creates tenants drill-<writer>-<n> one after another, each retried with the same request id
// until acknowledged: a retry of a write that did commit is answered from the idempotency
// record, so it is neither lost nor made twice.
void Write(pb::AuthService::Stub& stub, const std::string& token, int writer,
           const std::atomic<bool>& stop, Ledger& ledger) {
  for (int n = 0; !stop.load(); ++n) {
    const std::string id = absl::StrCat("drill-", writer, "-", n);
    pb::CreateTenantRequest req;
    req.mutable_tenant()->set_tenant_id(id);
    req.set_request_id(id);
    const absl::Time give_up = absl::Now() + absl::Seconds(90);
    while (absl::Now() < give_up) {
      pb::Tenant tenant;
      const absl::Time sent = absl::Now();
      grpc::Status s = stub.CreateTenant(Ctx(token).get(), req, &tenant);
      {
        absl::MutexLock lock(&ledger.mu);
        const absl::Time now = absl::Now();
        if (s.ok()) {
          ledger.acks.push_back({id, sent, now});
        } else {
          ++ledger.failures[static_cast<absl::StatusCode>(s.error_code())];
          if (now >= ledger.killed_at) {
            ++ledger.failed_after_kill;
            ledger.first_failure_after_kill = std::min(ledger.first_failure_after_kill, now);
          }
        }
      }
      if (s.ok()) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
}

// The ledger without its lock.
struct Outcome {
  std::vector<std::string> acknowledged;
  // The first write acknowledged once the outage began: of a call sent after the first failed
  // one, or after the kill when none failed (calls in flight at the kill may still commit on
  // the old primary, and say nothing about when the new one takes writes). Infinite until then.
  absl::Time recovered_at = absl::InfiniteFuture();
  int failed_after_kill = 0;
  std::string failures;  // "N UNAVAILABLE, ..."
};

Outcome Summarize(Ledger& ledger) {
  absl::MutexLock lock(&ledger.mu);
  Outcome out{.failed_after_kill = ledger.failed_after_kill};
  const absl::Time outage = ledger.first_failure_after_kill != absl::InfiniteFuture()
                                ? ledger.first_failure_after_kill
                                : ledger.killed_at;
  for (const Ledger::Ack& ack : ledger.acks) {
    out.acknowledged.push_back(ack.tenant_id);
    if (ack.sent > outage) out.recovered_at = std::min(out.recovered_at, ack.acknowledged);
  }
  for (const auto& [code, count] : ledger.failures) {
    absl::StrAppend(&out.failures, out.failures.empty() ? "" : ", ", count, " ",
                    absl::StatusCodeToString(code));
  }
  return out;
}

class PgFailoverDrillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ScopedPgHa>> ha = ScopedPgHa::Create();
    ASSERT_TRUE(ha.ok()) << ha.status();
    ha_ = std::move(*ha);
    ASSERT_TRUE(db::ExecWithoutTransaction(ha_->dsn(), "CREATE DATABASE gpuaas").ok());
    admin_dsn_ = gpuaas::testing::DsnForDatabase(ha_->dsn(), "gpuaas");
    dir_ =
        fs::path(ha_->dir()).parent_path() / (fs::path(ha_->dir()).filename().string() + "-auth");
    fs::create_directories(dir_);
    std::ofstream(dir_ / "admin-password") << kAdminPassword << "\n";
    port_ = gpuaas::testing::FreePort();
    auth_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_AUTH_BINARY, absl::StrCat("--listen=127.0.0.1:", port_),
            "--metrics-listen=127.0.0.1:0",
            "--db-dsn=" + gpuaas::testing::ServiceDsn(admin_dsn_, "auth"),
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
    std::set<std::string> out;
    absl::StatusOr<std::unique_ptr<db::Pool>> pool = db::Pool::Create({.dsn = admin_dsn_});
    EXPECT_TRUE(pool.ok()) << pool.status();
    if (!pool.ok()) return out;
    absl::Status s = (*pool)->RunInTransaction("stored", [&](db::Tx& tx) {
      out.clear();
      for (const db::Row& row :
           tx.Exec("SELECT tenant_id FROM auth.tenants WHERE tenant_id LIKE 'drill-%'")) {
        out.insert(row.Get<std::string>(0));
      }
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  std::unique_ptr<ScopedPgHa> ha_;
  std::string admin_dsn_;
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

  Ledger ledger;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] { Write(*stub_, token_, w, stop, ledger); });
  }
  absl::SleepFor(kWarmUp);
  size_t acked_before_kill;
  absl::Time killed_at;
  int killed;
  {
    absl::MutexLock lock(&ledger.mu);
    acked_before_kill = ledger.acks.size();
    killed = kill(primary->postmaster, SIGKILL);
    killed_at = ledger.killed_at = absl::Now();
  }
  if (killed != 0) {
    stop = true;
    for (std::thread& t : writers) t.join();
    FAIL() << "kill -9 " << primary->postmaster << " failed";
  }

  // Promotion: the other node leads.
  absl::Time promoted_at = absl::InfiniteFuture();
  EXPECT_TRUE(Eventually(
      [&] {
        absl::StatusOr<PgHaMember> leader = ha_->MemberWithRole("leader");
        if (!leader.ok() || leader->name == primary->name || leader->state != "running") {
          return false;
        }
        promoted_at = absl::Now();
        return true;
      },
      kMaxWindow));
  // Writes succeed again, then go on a while longer on the new primary.
  EXPECT_TRUE(Eventually([&] { return Summarize(ledger).recovered_at != absl::InfiniteFuture(); },
                         kMaxWindow));
  absl::SleepFor(kAfterRecovery);
  stop = true;
  for (std::thread& t : writers) t.join();

  const Outcome outcome = Summarize(ledger);
  const absl::Duration window = outcome.recovered_at - killed_at;
  std::cout << "pg failover drill: " << kWriters << " writers, " << outcome.acknowledged.size()
            << " tenants acknowledged (" << acked_before_kill << " before the kill); "
            << "standby promoted " << absl::FormatDuration(promoted_at - killed_at)
            << " after kill -9 of the primary; first acknowledged write "
            << absl::FormatDuration(window) << " after it; " << outcome.failed_after_kill
            << " requests failed after the kill ("
            << (outcome.failures.empty() ? "none" : outcome.failures) << ")" << std::endl;
  EXPECT_LT(window, kMaxWindow);
  EXPECT_GT(outcome.acknowledged.size(), acked_before_kill) << "no write after the failover";

  // The same service process served throughout: it reconnected on its own.
  EXPECT_TRUE(auth_->Running()) << Log();
  EXPECT_EQ(auth_->pid(), service_pid);

  // No acknowledged write was lost (tenant ids are the primary key, so none was made twice).
  const std::set<std::string> stored = StoredTenants();
  std::vector<std::string> lost;
  for (const std::string& id : outcome.acknowledged) {
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
