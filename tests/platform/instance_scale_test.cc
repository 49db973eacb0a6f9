// Many instances at once on the real platform: 4 tenants drive 200 instances (50 each) through
// create → RUNNING → stop → STOPPED → start → RUNNING → delete, concurrently, against two
// instance service replicas; every instance reaches its final state, every stock comes back,
// usage adds up (two closed intervals per instance, none overlapping, none longer than the
// test), and no tenant reaches another's instances through any method.
// GPUAAS_SCALE_INSTANCES overrides the count (the sanitizer run uses fewer).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

using google::protobuf::util::TimeUtil;
using gpuaas::testing::Eventually;

constexpr int kTenants = 4;

int InstanceCount() {
  const char* env = std::getenv("GPUAAS_SCALE_INSTANCES");
  return env != nullptr ? std::max(kTenants, std::atoi(env)) : 200;
}

bool Is(const instancepb::Instance& i, instancepb::State state) { return i.state() == state; }

class InstanceScaleTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.instance_replicas = 2;
    options.agents = {
        {"node-a", "8xA100-80GB"}, {"node-b", "8xA100-80GB"}, {"node-c", "8xA100-80GB"}};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    for (int t = 0; t < kTenants; ++t) {
      tokens_.push_back(stack_->CreateTenant(absl::StrCat("tenant-", t)));
    }
    // A tenth of a GPU each: 24 GPUs hold 240.
    stack_->CreateSpecWithStocks("a100.tenth", "A100-80GB", 1, 100, InstanceCount() + 10);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  // One instance's whole life; false (with a failure recorded) when a step went wrong.
  bool Drive(int n) {
    const int tenant = n % kTenants;
    const std::string& token = tokens_[tenant];
    const std::string id = absl::StrCat("load-", n);
    // Alternate replicas, so each sees instances the other started.
    auto& api = stack_->instances(n % 2);
    auto& other = stack_->instances((n + 1) % 2);
    grpc::Status s;
    instancepb::Instance out;
    {
      instancepb::CreateInstanceRequest req;
      req.set_instance_id(id);
      req.set_spec_name("a100.tenth");
      req.mutable_template_()->set_cmd("exec sleep 3600");
      s = api.CreateInstance(PlatformStack::Ctx(token).get(), req, &out);
      if (!s.ok()) return Fail(id, "create", s);
    }
    auto wait = [&](instancepb::State state, int replica) {
      return Is(stack_->WaitInstance(
                    token, id, [state](const auto& i) { return Is(i, state); }, absl::Seconds(120),
                    replica),
                state);
    };
    if (!wait(instancepb::STATE_RUNNING, n % 2)) return false;
    {
      instancepb::StopInstanceRequest req;
      req.set_instance_id(id);
      s = other.StopInstance(PlatformStack::Ctx(token).get(), req, &out);
      if (!s.ok()) return Fail(id, "stop", s);
    }
    if (!wait(instancepb::STATE_STOPPED, (n + 1) % 2)) return false;
    {
      instancepb::StartInstanceRequest req;
      req.set_instance_id(id);
      s = api.StartInstance(PlatformStack::Ctx(token).get(), req, &out);
      if (!s.ok()) return Fail(id, "start", s);
    }
    if (!wait(instancepb::STATE_RUNNING, n % 2)) return false;
    {
      instancepb::DeleteInstanceRequest req;
      req.set_instance_id(id);
      s = other.DeleteInstance(PlatformStack::Ctx(token).get(), req, &out);
      if (!s.ok()) return Fail(id, "delete", s);
    }
    return Eventually(
        [&] {
          instancepb::GetInstanceRequest req;
          req.set_instance_id(id);
          return api.GetInstance(PlatformStack::Ctx(token).get(), req, &out).error_code() ==
                 grpc::StatusCode::NOT_FOUND;
        },
        absl::Seconds(120));
  }

  bool Fail(const std::string& id, const std::string& step, const grpc::Status& s) {
    ADD_FAILURE() << id << ": " << step << ": " << s.error_message();
    return false;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::vector<std::string> tokens_;
};

TEST_F(InstanceScaleTest, ManyInstancesOfFourTenantsLiveTheirWholeLifeOnTwoReplicas) {
  const int count = InstanceCount();
  const absl::Time began = absl::Now();
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::vector<std::thread> drivers;
  for (int d = 0; d < 16; ++d) {
    drivers.emplace_back([&] {
      for (int n; (n = next.fetch_add(1)) < count;) {
        if (Drive(n)) done.fetch_add(1);
      }
    });
  }
  for (std::thread& t : drivers) t.join();
  const absl::Duration wall = absl::Now() - began;
  EXPECT_EQ(done.load(), count);
  EXPECT_TRUE(stack_->ClaimedStocks().empty()) << "every stock came back";

  // Usage: two closed intervals per instance, never overlapping, each within the test's time;
  // each tenant's total is the sum of its records.
  for (int t = 0; t < kTenants; ++t) {
    instancepb::ListUsageRequest req;
    req.set_page_size(1000);
    instancepb::ListUsageResponse usage;
    grpc::Status s =
        stack_->instances().ListUsage(PlatformStack::Ctx(tokens_[t]).get(), req, &usage);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::map<std::string, std::vector<const instancepb::UsageRecord*>> by_instance;
    int64_t seconds = 0;
    int64_t amount = 0;
    for (const auto& r : usage.records()) {
      EXPECT_EQ(r.tenant_id(), absl::StrCat("tenant-", t));
      EXPECT_TRUE(r.has_end_time()) << r.DebugString();
      EXPECT_LE(r.seconds(), absl::ToInt64Seconds(wall) + 1);
      by_instance[r.instance_id()].push_back(&r);
      seconds += r.seconds();
      amount += r.amount_micros();
    }
    EXPECT_EQ(static_cast<int>(by_instance.size()), count / kTenants + (t < count % kTenants));
    for (const auto& [id, records] : by_instance) {
      ASSERT_EQ(records.size(), 2u) << id;
      EXPECT_LE(TimeUtil::TimestampToNanoseconds(records[0]->end_time()),
                TimeUtil::TimestampToNanoseconds(records[1]->start_time()))
          << id << ": intervals overlap";
    }
    ASSERT_EQ(usage.totals_size(), 1);
    EXPECT_EQ(usage.totals(0).seconds(), seconds);
    EXPECT_EQ(usage.totals(0).amount_micros(), amount);
  }
}

// Every method, called by another tenant with this tenant's instance: NOT_FOUND, and nothing
// changes.
TEST_F(InstanceScaleTest, AnotherTenantsInstanceIsNotFoundOnEveryMethod) {
  instancepb::CreateInstanceRequest create;
  create.set_instance_id("private-1");
  create.set_spec_name("a100.tenth");
  create.mutable_template_()->set_cmd("exec sleep 3600");
  instancepb::Instance owned;
  ASSERT_TRUE(stack_->instances()
                  .CreateInstance(PlatformStack::Ctx(tokens_[0]).get(), create, &owned)
                  .ok());
  stack_->WaitInstance(tokens_[0], "private-1",
                       [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  const std::string& stranger = tokens_[1];
  auto& api = stack_->instances();
  instancepb::Instance out;
  struct Case {
    std::string method;
    std::function<grpc::Status()> call;
  };
  const std::vector<Case> cases = {
      {"GetInstance",
       [&] {
         instancepb::GetInstanceRequest r;
         r.set_instance_id("private-1");
         return api.GetInstance(PlatformStack::Ctx(stranger).get(), r, &out);
       }},
      {"StartInstance",
       [&] {
         instancepb::StartInstanceRequest r;
         r.set_instance_id("private-1");
         return api.StartInstance(PlatformStack::Ctx(stranger).get(), r, &out);
       }},
      {"StopInstance",
       [&] {
         instancepb::StopInstanceRequest r;
         r.set_instance_id("private-1");
         return api.StopInstance(PlatformStack::Ctx(stranger).get(), r, &out);
       }},
      {"DeleteInstance",
       [&] {
         instancepb::DeleteInstanceRequest r;
         r.set_instance_id("private-1");
         return api.DeleteInstance(PlatformStack::Ctx(stranger).get(), r, &out);
       }},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.call().error_code(), grpc::StatusCode::NOT_FOUND) << c.method;
  }
  // Lists, usage and watches answer without it.
  instancepb::ListInstancesRequest list;
  instancepb::ListInstancesResponse listed;
  ASSERT_TRUE(api.ListInstances(PlatformStack::Ctx(stranger).get(), list, &listed).ok());
  EXPECT_EQ(listed.instances_size(), 0);
  instancepb::ListUsageRequest usage_req;
  usage_req.set_instance_id("private-1");
  instancepb::ListUsageResponse usage;
  ASSERT_TRUE(api.ListUsage(PlatformStack::Ctx(stranger).get(), usage_req, &usage).ok());
  EXPECT_EQ(usage.records_size(), 0);
  instancepb::WatchInstancesRequest watch;
  auto ctx = PlatformStack::Ctx(stranger);
  auto reader = api.WatchInstances(ctx.get(), watch);
  instancepb::InstanceChange change;
  ASSERT_TRUE(reader->Read(&change));
  EXPECT_EQ(change.type(), instancepb::InstanceChange::TYPE_SYNCED) << change.DebugString();
  ctx->TryCancel();
  reader->Finish();
  // Creating its id is refused without saying whose it is.
  create.set_instance_id("private-1");
  EXPECT_EQ(api.CreateInstance(PlatformStack::Ctx(stranger).get(), create, &out).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  // And the owner's instance still runs.
  instancepb::Instance still = stack_->WaitInstance(
      tokens_[0], "private-1", [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  EXPECT_EQ(still.desired_state(), instancepb::DESIRED_STATE_RUNNING);
}

}  // namespace
}  // namespace gpuaas::platform_testing
