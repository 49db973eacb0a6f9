// The fixture of the reconciler tests: a database; in-process auth, stock (spec "a100.1x" at
// 1.20 USD/h, stocks on simulated nodes) and storage (storage "vol" of tenant alpha) services;
// the instance service's back half (NodeWorkloadService over a NodeSetHub, and any number of
// Reconcilers, with the service's own API-key credential). Instances are written with SQL as the
// API writes them, agents are FakeAgents.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/common/clock.h"
#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "libs/testing/temp_dir.h"
#include "services/instance/node_workloads.h"
#include "services/instance/node_workloads_grpc.h"
#include "services/instance/node_workloads_hub.h"
#include "services/instance/reconciler.h"
#include "tests/auth/auth_stack.h"
#include "tests/instance/fake_agent.h"
#include "tests/stock/stock_stack.h"
#include "tests/storage/storage_stack.h"

namespace gpuaas::instance::testing {

inline constexpr char kSpec[] = "a100.1x";
inline constexpr int64_t kMicrosPerHour = 1'200'000;

// What the API would have stored for a new instance.
struct NewInstance {
  std::string spec_name = kSpec;
  std::string storage_id;
  pb::Template tmpl;
  int64_t max_run_time_s = 0;
  int64_t idle_timeout_s = 0;
};

struct UsageRow {
  std::string node_id;
  int64_t micros_per_hour = 0;
  std::string currency;
  absl::Time start;
  std::optional<absl::Time> end;
};

class ReconcilerTest : public auth::testing::AuthStackTest {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Options of the reconcilers StartReconciler makes (short polls and backoffs for tests).
  virtual ReconcilerOptions Options();
  // Nodes registered at SetUp ("node-0" ...), 8 GPUs each, and stocks of kSpec on them.
  virtual int Nodes() { return 2; }
  virtual int Stocks() { return 4; }

  Reconciler& StartReconciler(StepHook* hook = nullptr);
  // Destroys every reconciler (a step in flight finishes or its hook returns first).
  void StopReconcilers() { reconcilers_.clear(); }
  std::unique_ptr<FakeAgent> Agent(const std::string& node_id, FakeAgent::Options options = {});

  // An instance of tenant alpha, desired RUNNING, as CreateInstance stores it.
  void Insert(const std::string& instance_id, const NewInstance& spec = {});
  // What StartInstance, StopInstance and DeleteInstance write.
  void Start(const std::string& instance_id);
  void Stop(const std::string& instance_id);
  void Delete(const std::string& instance_id);

  WorkRow Row(const std::string& instance_id);
  // Waits (30 s at most) until `pred` holds for the row; fails the test with the row otherwise.
  bool WaitFor(const std::string& instance_id, const std::function<bool(const WorkRow&)>& pred,
               absl::Duration timeout = absl::Seconds(30));
  bool WaitForState(const std::string& instance_id, pb::State state);

  // Stocks of kSpec claimed now, and by whom.
  int ClaimedStocks();
  std::string StockHolder(const std::string& stock_id);
  // The instances storage "vol" is attached to.
  std::vector<std::string> AttachedTo(const std::string& storage_id = "vol");
  std::vector<UsageRow> Usage(const std::string& instance_id);
  // The tenant's quota, as the platform admin sets it at the auth service.
  void SetQuota(const std::string& tenant, int64_t max_gpus, int64_t max_instances);
  // Runs `sql` (no parameters) on the test database, e.g. to age a node.
  void Exec(const std::string& sql);
  absl::Time DbNow();

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<stock::testing::StockStack> stock_;
  std::unique_ptr<storage::testing::StorageStack> storage_;
  std::string service_;  // a ROLE_SERVICE user's token
  std::string member_;   // a MEMBER of alpha

  SystemClock clock_;
  // The service's --secret-key-file key: it opens instances' registry logins for their
  // workloads.
  const SecretBox box_ = *SecretBox::FromKey(std::string(SecretBox::kKeyBytes, 'i'));
  std::unique_ptr<db::Pool> pool_;
  std::unique_ptr<client::AuthClient> auth_client_;
  std::unique_ptr<client::StockClient> stock_client_;
  std::unique_ptr<client::StorageClient> storage_client_;
  std::unique_ptr<client::AccessTokens> tokens_;
  std::unique_ptr<NodeWorkloads> workloads_;
  std::unique_ptr<NodeSetHub> hub_;
  std::unique_ptr<rpc::Server> server_;
  std::unique_ptr<NodeWorkloadServiceImpl> node_service_;
  std::vector<std::unique_ptr<Reconciler>> reconcilers_;
};

}  // namespace gpuaas::instance::testing
