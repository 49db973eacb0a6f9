// PostgreSQL failover under the platform's load (issue 25): the whole platform (auth, and the
// real stock, storage, instance (two replicas) and agent binaries with simulated GPUs;
// tests/platform) on tools/pg-ha's Patroni cluster through the multi-host DSN, while instances are
// created, stopped and started (each start claims a stock, each stop releases it), tenants are
// created and S3 objects written; then kill -9 of the primary's postmaster. The standby must be
// promoted, every service must carry on without a restart, every acknowledged write must be there
// afterwards, no stock may be held twice, and every instance must reach its desired state.
// Prints the unavailability window (kill → first acknowledged write) and the requests that
// failed meanwhile; bench/RESULTS.md records them.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libs/testing/eventually.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/s3/testing/raw_client.h"
#include "tests/ha/scoped_pg_ha.h"
#include "tests/ha/write_ledger.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::ha_testing {
namespace {

using ::gpuaas::platform_testing::PlatformOptions;
using ::gpuaas::platform_testing::PlatformStack;
using ::gpuaas::platform_testing::instancepb::DesiredState;
using ::gpuaas::platform_testing::instancepb::Instance;
using ::gpuaas::storage::s3::testing::RawRequest;
using ::gpuaas::storage::s3::testing::TestKey;
using ::gpuaas::testing::Eventually;
namespace instancepb = ::gpuaas::platform_testing::instancepb;
namespace storagepb = ::gpuaas::platform_testing::storagepb;

// Instances cycling over a stock per GPU: a start may take the stock another one just released.
constexpr int kInstances = 3;
constexpr int kGpus = 4;
// As in the HA stack; instance i is driven through replica i % 2.
constexpr int kInstanceReplicas = 2;
// What the load writes (WriteLedger kinds).
const std::set<std::string> kKinds = {"instance", "tenant", "s3"};
constexpr absl::Duration kWarmUp = absl::Seconds(3);
constexpr absl::Duration kAfterRecovery = absl::Seconds(4);
// The issue's goal is under 10 s; the bound leaves room for a loaded CI machine.
constexpr absl::Duration kMaxWindow = absl::Seconds(30);
// How long an instance may take to reach its desired state once the load stops.
constexpr absl::Duration kConverge = absl::Seconds(60);

bool Reached(const Instance& i, DesiredState desired) {
  return desired == instancepb::DESIRED_STATE_RUNNING ? i.state() == instancepb::STATE_RUNNING
                                                      : i.state() == instancepb::STATE_STOPPED;
}

class PlatformFailoverDrillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ScopedPgHa>> ha = ScopedPgHa::Create();
    ASSERT_TRUE(ha.ok()) << ha.status();
    ha_ = std::move(*ha);
    PlatformOptions options;
    options.agents = {{"node-a", absl::StrCat(kGpus, "xA100-80GB")}};
    options.instance_replicas = kInstanceReplicas;
    // Longer than the outage: heartbeats the stock service cannot write meanwhile must not
    // make the node stale (a claim would then fail NO_CAPACITY, a restart's problem, not this).
    options.stock_node_timeout_seconds = 30;
    stack_ = std::make_unique<PlatformStack>(ha_->dsn(), dir_.path(), options);
    token_ = stack_->CreateTenant("drill");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, kGpus);
    stack_->CreateStorage(token_, "drill-data", "16Mi");
    storagepb::CreateAccessorRequest req;
    req.set_storage_id("drill-data");
    storagepb::CreateAccessorResponse accessor;
    grpc::Status s =
        stack_->storage_stub().CreateAccessor(PlatformStack::Ctx(token_).get(), req, &accessor);
    ASSERT_TRUE(s.ok()) << s.error_message();
    s3_key_ = TestKey{accessor.access_key_id(), accessor.secret_access_key()};
    const std::string endpoint = stack_->s3_endpoint();
    s3_port_ = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
  }

  void TearDown() override {
    stack_.reset();
    ha_.reset();
  }

  // Creates instance `id`, then stops and starts it, each step once the last was reached,
  // until `stop`. Every call is retried until acknowledged; desired_[id] is what the last
  // acknowledged one asked for.
  void CycleInstance(const std::string& id, int replica, const std::atomic<bool>& stop) {
    instancepb::InstanceService::Stub& api = stack_->instances(replica);
    instancepb::CreateInstanceRequest create;
    create.set_instance_id(id);
    create.set_spec_name("a100.1x");
    // Ends on SIGTERM at once (a bare `exec sleep` is its PID namespace's init, which ignores
    // it, so each stop would wait out the grace period): many cycles in a short drill.
    create.mutable_template_()->set_cmd("trap 'exit 0' TERM; while :; do sleep 0.2; done");
    DesiredState desired = instancepb::DESIRED_STATE_RUNNING;
    if (!WriteUntilAcknowledged(ledger_, "instance", id + " create", [&] {
          Instance out;
          return FailureOf(api.CreateInstance(PlatformStack::Ctx(token_).get(), create, &out));
        })) {
      return;
    }
    SetDesired(id, desired);
    for (int step = 1; !stop.load(); ++step) {
      if (!WaitReached(id, replica, desired, stop)) return;
      if (stop.load()) return;
      const bool stopping = desired == instancepb::DESIRED_STATE_RUNNING;
      const std::string key = absl::StrCat(id, stopping ? " stop " : " start ", step);
      const bool acknowledged = WriteUntilAcknowledged(ledger_, "instance", key, [&] {
        Instance out;
        if (stopping) {
          instancepb::StopInstanceRequest req;
          req.set_instance_id(id);
          return FailureOf(api.StopInstance(PlatformStack::Ctx(token_).get(), req, &out));
        }
        instancepb::StartInstanceRequest req;
        req.set_instance_id(id);
        return FailureOf(api.StartInstance(PlatformStack::Ctx(token_).get(), req, &out));
      });
      if (!acknowledged) return;
      desired = stopping ? instancepb::DESIRED_STATE_STOPPED : instancepb::DESIRED_STATE_RUNNING;
      SetDesired(id, desired);
    }
  }

  // GetInstance until `id` reaches `desired` (true), `stop`, or kConverge passes (false).
  bool WaitReached(const std::string& id, int replica, DesiredState desired,
                   const std::atomic<bool>& stop) {
    const absl::Time deadline = absl::Now() + kConverge;
    while (!stop.load() && absl::Now() < deadline) {
      if (Reached(Get(id, replica), desired)) return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return stop.load();
  }

  // A failed read goes to the ledger too: the outage as the users saw it.
  Instance Get(const std::string& id, int replica) {
    instancepb::GetInstanceRequest req;
    req.set_instance_id(id);
    Instance out;
    const std::string failure = FailureOf(
        stack_->instances(replica).GetInstance(PlatformStack::Ctx(token_).get(), req, &out));
    if (!failure.empty()) ledger_.Failed("instance read", failure);
    return out;
  }

  // Tenants drill-<n> one after another, each retried with the same request id (idempotent).
  void CreateTenants(const std::atomic<bool>& stop) {
    for (int n = 0; !stop.load(); ++n) {
      const std::string id = absl::StrCat("drill-", n);
      auth::v1::CreateTenantRequest req;
      req.mutable_tenant()->set_tenant_id(id);
      req.set_request_id(id);
      WriteUntilAcknowledged(ledger_, "tenant", id, [&] {
        auth::v1::Tenant out;
        return FailureOf(stack_->auth().stub().CreateTenant(
            PlatformStack::Ctx(stack_->admin_token()).get(), req, &out));
      });
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  // Objects /drill-data/object-<n> holding "object <n>", one after another (a PUT is
  // idempotent: the same body again).
  void PutObjects(const std::atomic<bool>& stop) {
    for (int n = 0; !stop.load(); ++n) {
      RawRequest put;
      put.method = "PUT";
      put.path = absl::StrCat("/drill-data/object-", n);
      put.body = absl::StrCat("object ", n);
      put.key = s3_key_;
      WriteUntilAcknowledged(ledger_, "s3", put.path, [&] {
        put.time = absl::Now();
        const int status = storage::s3::testing::Send(s3_port_, put).status;
        return status == 200 ? "" : absl::StrCat("HTTP ", status);
      });
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  void SetDesired(const std::string& id, DesiredState desired) {
    absl::MutexLock lock(&mu_);
    desired_[id] = desired;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<ScopedPgHa> ha_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
  TestKey s3_key_;
  int s3_port_ = 0;
  WriteLedger ledger_;
  absl::Mutex mu_;
  std::map<std::string, DesiredState> desired_ ABSL_GUARDED_BY(mu_);
};

TEST_F(PlatformFailoverDrillTest, KillingThePrimaryUnderThePlatformsLoadLosesNothing) {
  absl::StatusOr<PgHaMember> primary = ha_->MemberWithRole("leader");
  ASSERT_TRUE(primary.ok()) << primary.status();
  ASSERT_GT(primary->postmaster, 0);

  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int i = 0; i < kInstances; ++i) {
    load.emplace_back(
        [&, i] { CycleInstance(absl::StrCat("drill-", i), i % kInstanceReplicas, stop); });
  }
  load.emplace_back([&] { CreateTenants(stop); });
  load.emplace_back([&] { PutObjects(stop); });
  const auto stop_load = [&] {
    stop = true;
    for (std::thread& t : load) t.join();
  };
  absl::SleepFor(kWarmUp);
  if (!ledger_.Kill([&] { return kill(primary->postmaster, SIGKILL) == 0; })) {
    stop_load();
    FAIL() << "kill -9 " << primary->postmaster << " failed";
  }
  const absl::Time killed_at = ledger_.Summarize().killed_at;
  const absl::StatusOr<absl::Time> promoted = ha_->WaitForNewLeader(primary->name, kMaxWindow);
  EXPECT_TRUE(promoted.ok()) << promoted.status();
  const absl::Time promoted_at = promoted.value_or(absl::InfiniteFuture());
  // Every kind of write succeeds again, then the load goes on a while on the new primary.
  EXPECT_TRUE(Eventually(
      [&] { return ledger_.Summarize().recovered_at_by_kind.size() == kKinds.size(); }, kMaxWindow))
      << "some kind of write never succeeded after the kill";
  absl::SleepFor(kAfterRecovery);
  stop_load();

  const WriteOutcome outcome = ledger_.Summarize();
  const auto acknowledged = [&](const std::string& kind) {
    auto it = outcome.acknowledged.find(kind);
    return it == outcome.acknowledged.end() ? std::vector<std::string>{} : it->second;
  };
  std::vector<std::string> recovered;
  for (const auto& [kind, at] : outcome.recovered_at_by_kind) {
    recovered.push_back(absl::StrCat(kind, " ", absl::FormatDuration(at - killed_at)));
  }
  std::vector<std::string> failed;
  for (const auto& [kind, failures] : outcome.failures_by_kind) {
    failed.push_back(absl::StrCat(kind, ": ", failures));
  }
  std::cout << "platform failover drill: " << outcome.acknowledged_total << " writes acknowledged ("
            << outcome.acknowledged_before_kill << " before the kill; instance "
            << acknowledged("instance").size() << ", tenant " << acknowledged("tenant").size()
            << ", s3 " << acknowledged("s3").size() << "); standby promoted "
            << absl::FormatDuration(promoted_at - killed_at)
            << " after kill -9 of the primary; first acknowledged write "
            << absl::FormatDuration(outcome.window())
            << " after it (by kind: " << absl::StrJoin(recovered, ", ") << "); "
            << outcome.failed_after_kill << " requests failed after the kill ("
            << absl::StrJoin(failed, "; ") << ")" << std::endl;
  // An S3 500 (InternalError) hides its cause from the client: the storage service logs it.
  if (absl::StrContains(
          outcome.failures_by_kind.contains("s3") ? outcome.failures_by_kind.at("s3") : "",
          "HTTP 500")) {
    for (absl::string_view line : absl::StrSplit(stack_->storage().Log(), '\n')) {
      // libs/common/logging.cc's pattern: "<time> E [<logger>] <message>".
      if (absl::StrContains(line, " E [")) std::cout << "storage: " << line << std::endl;
    }
  }
  EXPECT_LT(outcome.window(), kMaxWindow);
  EXPECT_GT(outcome.acknowledged_total, outcome.acknowledged_before_kill)
      << "no write after the failover";

  // The same processes served throughout: each reconnected on its own.
  for (auto* daemon : {&stack_->stock(), &stack_->storage(), &stack_->instance(0),
                       &stack_->instance(1), &stack_->agent("node-a")}) {
    EXPECT_TRUE(daemon->Running()) << daemon->name() << " exited:\n" << daemon->Log();
  }

  // Every instance reaches what was last asked of it.
  std::map<std::string, DesiredState> desired;
  {
    absl::MutexLock lock(&mu_);
    desired = desired_;
  }
  EXPECT_EQ(desired.size(), static_cast<size_t>(kInstances));
  const absl::Time load_stopped = absl::Now();
  for (const auto& [id, want] : desired) {
    stack_->WaitInstance(
        token_, id, [want = want](const Instance& i) { return Reached(i, want); }, kConverge);
  }
  std::cout << "platform failover drill: every instance in its desired state "
            << absl::FormatDuration(absl::Now() - load_stopped) << " after the load stopped"
            << std::endl;

  // No acknowledged write was lost: the tenants, the instances with the desired state last
  // acknowledged, and the objects with their bodies.
  absl::StatusOr<std::set<std::string>> tenants =
      ReadColumn(ha_->dsn(), "SELECT tenant_id FROM auth.tenants");
  ASSERT_TRUE(tenants.ok()) << tenants.status();
  for (const std::string& id : acknowledged("tenant")) {
    EXPECT_TRUE(tenants->contains(id)) << "acknowledged tenant " << id << " lost";
  }
  absl::StatusOr<std::set<std::string>> instances =
      ReadColumn(ha_->dsn(), "SELECT instance_id || ' ' || desired_state FROM instance.instances");
  ASSERT_TRUE(instances.ok()) << instances.status();
  for (const auto& [id, want] : desired) {
    EXPECT_TRUE(instances->contains(absl::StrCat(id, " ", want)))
        << "instance " << id << " lost its acknowledged desired state " << want
        << "; stored: " << absl::StrJoin(*instances, ", ");
  }
  for (const std::string& path : acknowledged("s3")) {
    RawRequest get;
    get.path = path;
    get.key = s3_key_;
    const auto reply = storage::s3::testing::Send(s3_port_, get);
    EXPECT_EQ(reply.status, 200) << "acknowledged object " << path << " lost";
    EXPECT_EQ(reply.body, "object " + path.substr(path.rfind('-') + 1));
  }

  // No stock held twice: each instance's stock is claimed by that instance, no two instances
  // name one stock, and only instances that should run hold one.
  absl::StatusOr<std::set<std::string>> mismatched = ReadColumn(ha_->dsn(), R"sql(
      SELECT i.instance_id FROM instance.instances i
      WHERE i.stock_id <> '' AND NOT EXISTS (
        SELECT 1 FROM stock.stocks s WHERE s.stock_id = i.stock_id AND s.instance_id = i.instance_id)
      UNION ALL
      SELECT stock_id FROM instance.instances WHERE stock_id <> ''
      GROUP BY stock_id HAVING count(*) > 1
      UNION ALL
      SELECT s.stock_id || ' claimed by ' || s.instance_id FROM stock.stocks s
      LEFT JOIN instance.instances i ON i.instance_id = s.instance_id
      WHERE s.instance_id IS NOT NULL AND (i.instance_id IS NULL OR i.desired_state <> 1))sql");
  ASSERT_TRUE(mismatched.ok()) << mismatched.status();
  EXPECT_TRUE(mismatched->empty())
      << "stocks double-booked or leaked: " << absl::StrJoin(*mismatched, ", ");
}

}  // namespace
}  // namespace gpuaas::ha_testing
