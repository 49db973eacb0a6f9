// The replica drills (issue 25) for the instance service: the whole platform with two
// gpuaas-instance replicas, the agent reaching both through one "a,b" address, and tenants'
// client::InstanceClient over "a,b". Four clients of two tenants call steadily (ListInstances
// and GetInstance, which the channel's retry policy repeats; about every second one creates an
// instance, keyed by its id, and stops the one it made before); meanwhile one replica gets
// SIGKILL (the kill drill) or each in turn gets SIGTERM and starts again (the rolling restart).
// No call may fail, and afterwards every instance converges: the last of each client RUNNING
// on a claimed stock, the others STOPPED with their stocks back. Prints the numbers
// bench/RESULTS.md "Replica kill" and "Rolling restart" quote.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/client/instance_client.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/replica_kill_drill.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

using gpuaas::testing::DrillReplica;
using gpuaas::testing::DrillResult;
using gpuaas::testing::DrillRound;
using gpuaas::testing::TimedCall;

constexpr int kClients = 4;
constexpr int kTenants = 2;
constexpr int kCreatesPerClient = 6;
constexpr absl::Duration kCreateEvery = absl::Seconds(1);
constexpr std::string_view kLoadService = "gpuaas.instance.v1.InstanceService";

class InstanceReplicaDrillTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    PlatformOptions options;
    options.instance_replicas = 2;
    options.agents_reach_every_instance_replica = true;
    options.agents = {{"node-a", "8xA100-80GB"}};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    for (int t = 0; t < kTenants; ++t) {
      tokens_.push_back(stack_->CreateTenant(absl::StrCat("tenant-", t)));
    }
    // A tenth of a GPU each: room for every create of the drill.
    stack_->CreateSpecWithStocks("a100.tenth", "A100-80GB", 1, 100, kClients * kCreatesPerClient);
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<grpc::Channel> channel,
                         client::OpenChannel(stack_->instance_addresses(), {}));
    instances_ = std::make_unique<client::InstanceClient>(channel, absl::Seconds(10));
  }

  void TearDown() override {
    instances_.reset();
    stack_.reset();
    PgTest::TearDown();
  }

  std::vector<DrillReplica> Replicas() {
    std::vector<DrillReplica> out;
    for (int i = 0; i < 2; ++i) {
      Daemon& d = stack_->instance(i);
      out.push_back({.metrics_port = d.metrics_port(),
                     .load_service = std::string(kLoadService),
                     .kill = [&d] { d.Kill(); },
                     .stop = [&d] { return d.Stop(); },
                     .start =
                         [&d] {
                           d.Start();
                           return d.Running();
                         }});
    }
    return out;
  }

  // A tenant member's calls: reads, and about every second a create (keyed by its id, so the
  // channel repeats it) and a stop of the client's previous instance (a desired state: repeated
  // too).
  DrillRound Round(const std::string& prefix) {
    return [this, prefix](int client, int round, const TimedCall& timed) {
      const auto call = client::CallContext().set_bearer_token(tokens_[client % kTenants]);
      std::vector<std::string>& mine = created_[client];
      timed("ListInstances", [&] { return instances_->ListInstances({}, call).status(); });
      if (!mine.empty()) {
        timed("GetInstance", [&] {
          instancepb::GetInstanceRequest req;
          req.set_instance_id(mine.back());
          return instances_->GetInstance(req, call).status();
        });
      }
      const absl::Time now = absl::Now();
      if (mine.size() >= kCreatesPerClient || now < next_create_[client]) {
        return;
      }
      next_create_[client] = now + kCreateEvery;
      if (!mine.empty()) {
        timed("StopInstance", [&] {
          instancepb::StopInstanceRequest req;
          req.set_instance_id(mine.back());
          return instances_->StopInstance(req, call).status();
        });
      }
      const std::string id = absl::StrCat(prefix, client, "-", round);
      timed("CreateInstance", [&] {
        instancepb::CreateInstanceRequest req;
        req.set_instance_id(id);
        req.set_spec_name("a100.tenth");
        req.mutable_template_()->set_cmd("exec sleep 3600");
        return instances_->CreateInstance(req, call).status();
      });
      mine.push_back(id);
    };
  }

  // Every client's last instance RUNNING on a claimed stock, the others STOPPED, asked of the
  // second replica (the kill drill's survivor).
  void ExpectConverged() {
    std::set<std::string> running;
    for (int c = 0; c < kClients; ++c) {
      const std::vector<std::string>& mine = created_[c];
      for (size_t n = 0; n < mine.size(); ++n) {
        const auto want =
            n + 1 == mine.size() ? instancepb::STATE_RUNNING : instancepb::STATE_STOPPED;
        const instancepb::Instance got = stack_->WaitInstance(
            tokens_[c % kTenants], mine[n], [&](const auto& i) { return i.state() == want; },
            absl::Seconds(60), /*replica=*/1);
        EXPECT_EQ(got.state(), want) << mine[n];
        if (want == instancepb::STATE_RUNNING) {
          running.insert(mine[n]);
        }
      }
    }
    std::set<std::string> claimed;
    for (const auto& [instance_id, stock] : stack_->ClaimedStocks()) {
      claimed.insert(instance_id);
    }
    EXPECT_EQ(claimed, running);
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::vector<std::string> tokens_;
  std::unique_ptr<client::InstanceClient> instances_;
  // Each client's own: only its thread touches them while the drill runs.
  std::vector<std::string> created_[kClients];
  absl::Time next_create_[kClients] = {};
};

TEST_F(InstanceReplicaDrillTest, KillNineOneReplicaUnderLoadFailsNoCall) {
  const DrillResult r =
      gpuaas::testing::ReplicaKillDrill(Replicas(), absl::Seconds(3), absl::Seconds(4))
          .Run(kClients, Round("kill-"));
  std::printf("instance replica kill drill: %s\n", r.Summary().c_str());
  gpuaas::testing::ExpectNoCallLost(r);
  ExpectConverged();
}

TEST_F(InstanceReplicaDrillTest, RollingRestartUnderLoadFailsNoCall) {
  const DrillResult r = gpuaas::testing::RollingRestartDrill(Replicas(), absl::Seconds(2))
                            .Run(kClients, Round("rolling-"));
  std::printf("instance rolling restart drill: %s\n", r.Summary().c_str());
  gpuaas::testing::ExpectNoCallFailedByRestarts(r);
  ExpectConverged();
}

}  // namespace
}  // namespace gpuaas::platform_testing
