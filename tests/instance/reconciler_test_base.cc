#include "tests/instance/reconciler_test_base.h"

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/channel.h"
#include "libs/common/secret_box.h"
#include "libs/testing/eventually.h"
#include "libs/testing/status_matchers.h"
#include "services/instance/migrations.h"

namespace gpuaas::instance::testing {

using auth::testing::AuthStack;

void ReconcilerTest::SetUp() {
  AuthStackTest::SetUp();
  if (IsSkipped() || HasFatalFailure()) return;
  stack_->CreateTenant("alpha");
  stack_->CreateUser("member", "alpha", common::v1::ROLE_MEMBER);
  member_ = stack_->Login("member", AuthStack::PasswordOf("member"));
  stack_->CreateServiceUser("robot");
  service_ = stack_->Login("robot", AuthStack::PasswordOf("robot"));

  // Stock: nodes, the spec, stocks.
  stock_ = std::make_unique<stock::testing::StockStack>(
      dsn(), stack_->address(),
      stock::testing::StockStackOptions{
          .timings = {.heartbeat_interval = absl::Seconds(1), .node_timeout = absl::Hours(1)}});
  for (int i = 0; i < Nodes(); ++i) {
    stock::v1::RegisterNodeRequest req;
    *req.mutable_node() =
        stock::testing::SimulatedNode("node-" + std::to_string(i), 8, "A100-80GB");
    stock::v1::RegisterNodeResponse out;
    grpc::Status s = stock_->agent_stub().RegisterNode(
        AuthStack::Ctx(stack_->AgentToken(req.node().node_id())).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  {
    stock::v1::CreateSpecRequest req;
    *req.mutable_spec() = stock::testing::MakeSpec(kSpec, "A100-80GB", 1);
    req.mutable_spec()->mutable_price()->set_micros_per_hour(kMicrosPerHour);
    req.mutable_spec()->mutable_price()->set_currency("USD");
    stock::v1::Spec out;
    grpc::Status s = stock_->stub().CreateSpec(AuthStack::Ctx(admin_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  if (Stocks() > 0) {
    stock::v1::CreateStocksRequest req;
    req.set_spec_name(kSpec);
    req.set_number(Stocks());
    stock::v1::CreateStocksResponse out;
    grpc::Status s = stock_->stub().CreateStocks(AuthStack::Ctx(admin_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // Storage: a spec, a quota, the volume "vol" of alpha.
  storage_ = std::make_unique<storage::testing::StorageStack>(
      dsn(), stack_->address(), (dir_.path() / "data").string(),
      std::string(SecretBox::kKeyBytes, '\x5a'));
  {
    auth::v1::UpdateTenantRequest req;
    req.mutable_tenant()->set_tenant_id("alpha");
    req.mutable_tenant()->mutable_quota()->set_max_storage_bytes(int64_t{10} << 30);
    req.mutable_update_mask()->add_paths("quota.max_storage_bytes");
    auth::v1::Tenant out;
    grpc::Status s = stub().UpdateTenant(Ctx(admin_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  {
    storage::v1::CreateStorageSpecRequest req;
    req.mutable_spec()->set_spec_name("standard-1g");
    req.mutable_spec()->set_size("1Gi");
    req.mutable_spec()->set_max_files(1000);
    storage::v1::StorageSpec out;
    grpc::Status s = storage_->stub().CreateStorageSpec(Ctx(admin_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  {
    storage::v1::CreateStorageRequest req;
    req.set_storage_id("vol");
    req.set_spec_name("standard-1g");
    storage::v1::Storage out;
    grpc::Status s = storage_->stub().CreateStorage(Ctx(member_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // The instance service's back half.
  ASSERT_OK_AND_ASSIGN(pool_, MakePool(16));
  ASSERT_OK(db::Migrate(*pool_, "instance", Migrations()));
  auto auth_channel = client::OpenChannel(stack_->address(), {});
  ASSERT_TRUE(auth_channel.ok());
  auth_client_ = std::make_unique<client::AuthClient>(*auth_channel);
  stock_client_ =
      std::make_unique<client::StockClient>(*client::OpenChannel(stock_->address(), {}));
  storage_client_ =
      std::make_unique<client::StorageClient>(*client::OpenChannel(storage_->address(), {}));
  const std::string api_key =
      stack_->CreateApiKey(service_, "instance-service", common::v1::ROLE_SERVICE);
  ASSERT_FALSE(api_key.empty());
  tokens_ = std::make_unique<client::AccessTokens>(*auth_client_, api_key, clock_);

  workloads_ = std::make_unique<NodeWorkloads>(
      *pool_, NodeWorkloadsOptions{.report_interval = absl::Seconds(1),
                                   .stop_grace_period = absl::Seconds(3),
                                   .box = &box_});
  hub_ = std::make_unique<NodeSetHub>(
      *workloads_, NodeSetHubOptions{.listen_dsn = dsn(), .touch_interval = absl::Seconds(1)});
  hub_->Start();
  server_ = std::make_unique<rpc::Server>(
      rpc::ServerOptions{.name = "instance",
                         .listen_address = "127.0.0.1:0",
                         .metrics_address = "",
                         .worker_threads = 8},
      authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*auth_channel), clock_));
  node_service_ = std::make_unique<NodeWorkloadServiceImpl>(*workloads_, *hub_, server_->handler());
  server_->AddService(node_service_.get());
  ASSERT_OK(server_->Start());
}

void ReconcilerTest::TearDown() {
  reconcilers_.clear();
  if (server_) server_->Shutdown();
  if (hub_) hub_->Stop();
  node_service_.reset();
  server_.reset();
  hub_.reset();
  workloads_.reset();
  tokens_.reset();
  pool_.reset();
  storage_.reset();
  stock_.reset();
  AuthStackTest::TearDown();
}

ReconcilerOptions ReconcilerTest::Options() {
  return ReconcilerOptions{.workers = 2,
                           .poll_interval = absl::Milliseconds(200),
                           .call_timeout = absl::Seconds(5),
                           .initial_backoff = absl::Milliseconds(100),
                           .max_backoff = absl::Seconds(1),
                           // About 4 s of retries: time for a test to free a stock.
                           .no_capacity_retries = 8,
                           .node_timeout = absl::Seconds(30),
                           .listen_dsn = dsn()};
}

Reconciler& ReconcilerTest::StartReconciler(StepHook* hook) {
  reconcilers_.push_back(std::make_unique<Reconciler>(ReconcilerDeps{.pool = *pool_,
                                                                     .stock = *stock_client_,
                                                                     .storage = *storage_client_,
                                                                     .auth = *auth_client_,
                                                                     .tokens = *tokens_,
                                                                     .hook = hook},
                                                      Options()));
  reconcilers_.back()->Start();
  return *reconcilers_.back();
}

std::unique_ptr<FakeAgent> ReconcilerTest::Agent(const std::string& node_id,
                                                 FakeAgent::Options options) {
  return std::make_unique<FakeAgent>("127.0.0.1:" + std::to_string(server_->port()),
                                     stack_->AgentToken(node_id), node_id, options);
}

void ReconcilerTest::Insert(const std::string& instance_id, const NewInstance& spec) {
  ASSERT_OK(pool_->RunInTransaction("test.insert", [&](db::Tx& tx) {
    tx.Exec(
        "INSERT INTO instance.instances (instance_id, tenant_id, spec_name, gpu_num, "
        "storage_id, template, idle_timeout_s, max_run_time_s, request_hash, desired_state, "
        "state) VALUES ($1, 'alpha', $2, 1, $3, $4, $5, $6, 'h', 1, 1)",
        instance_id, spec.spec_name, spec.storage_id, db::Bytes{spec.tmpl.SerializeAsString()},
        spec.idle_timeout_s, spec.max_run_time_s);
    return absl::OkStatus();
  }));
}

void ReconcilerTest::SetQuota(const std::string& tenant, int64_t max_gpus, int64_t max_instances) {
  auth::v1::UpdateTenantRequest req;
  req.mutable_tenant()->set_tenant_id(tenant);
  req.mutable_tenant()->mutable_quota()->set_max_gpus(max_gpus);
  req.mutable_tenant()->mutable_quota()->set_max_instances(max_instances);
  req.mutable_update_mask()->add_paths("quota.max_gpus");
  req.mutable_update_mask()->add_paths("quota.max_instances");
  auth::v1::Tenant out;
  grpc::Status s = stub().UpdateTenant(Ctx(admin_).get(), req, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
}

void ReconcilerTest::Start(const std::string& instance_id) {
  ASSERT_OK(pool_->RunInTransaction("test.start", [&](db::Tx& tx) {
    tx.Exec(
        "UPDATE instance.instances SET desired_state = 1, state = 1, run = run + 1, "
        "needs_work = true, next_attempt_time = now() WHERE instance_id = $1",
        instance_id);
    return absl::OkStatus();
  }));
}

void ReconcilerTest::Stop(const std::string& instance_id) {
  ASSERT_OK(pool_->RunInTransaction("test.stop", [&](db::Tx& tx) {
    tx.Exec(
        "UPDATE instance.instances SET desired_state = 2, needs_work = true, "
        "next_attempt_time = now() WHERE instance_id = $1",
        instance_id);
    return absl::OkStatus();
  }));
}

void ReconcilerTest::Delete(const std::string& instance_id) {
  ASSERT_OK(pool_->RunInTransaction("test.delete", [&](db::Tx& tx) {
    tx.Exec(
        "UPDATE instance.instances SET desired_state = 3, needs_work = true, "
        "next_attempt_time = now() WHERE instance_id = $1",
        instance_id);
    return absl::OkStatus();
  }));
}

WorkRow ReconcilerTest::Row(const std::string& instance_id) {
  ReconcileRepository repo;
  absl::StatusOr<WorkRow> row =
      pool_->Read<WorkRow>("test.row", [&](db::Tx& tx) -> absl::StatusOr<WorkRow> {
        std::optional<WorkRow> r = repo.ReadRow(tx, instance_id);
        if (!r) return absl::NotFoundError(instance_id);
        return *r;
      });
  EXPECT_TRUE(row.ok()) << row.status();
  return row.value_or(WorkRow{});
}

bool ReconcilerTest::WaitFor(const std::string& instance_id,
                             const std::function<bool(const WorkRow&)>& pred,
                             absl::Duration timeout) {
  const bool ok = gpuaas::testing::Eventually([&] { return pred(Row(instance_id)); }, timeout);
  if (!ok) {
    const WorkRow r = Row(instance_id);
    ADD_FAILURE() << instance_id << ": desired " << pb::DesiredState_Name(r.desired) << " state "
                  << pb::State_Name(r.state) << " reason " << pb::Reason_Name(r.reason)
                  << " message '" << r.message << "' held_run " << r.held_run << " published "
                  << r.published << " workload " << pb::WorkloadState_Name(r.workload_state)
                  << " next step " << StepName(NextStep(r));
  }
  return ok;
}

bool ReconcilerTest::WaitForState(const std::string& instance_id, pb::State state) {
  return WaitFor(instance_id,
                 [&](const WorkRow& r) { return r.state == state && NextStep(r) == Step::kWait; });
}

int ReconcilerTest::ClaimedStocks() {
  absl::StatusOr<int> n = pool_->Read<int>("test.claimed", [](db::Tx& tx) -> absl::StatusOr<int> {
    return static_cast<int>(
        tx.Exec("SELECT count(*) FROM stock.stocks WHERE instance_id IS NOT NULL")
            .First()
            ->Get<int64_t>(0));
  });
  EXPECT_TRUE(n.ok()) << n.status();
  return n.value_or(-1);
}

std::string ReconcilerTest::StockHolder(const std::string& stock_id) {
  absl::StatusOr<std::string> holder =
      pool_->Read<std::string>("test.holder", [&](db::Tx& tx) -> absl::StatusOr<std::string> {
        std::optional<db::Row> r =
            tx.Exec("SELECT coalesce(instance_id, '') FROM stock.stocks WHERE stock_id = $1",
                    stock_id)
                .First();
        return r ? r->Get<std::string>(0) : "";
      });
  return holder.value_or("");
}

std::vector<std::string> ReconcilerTest::AttachedTo(const std::string& storage_id) {
  storage::v1::GetStorageRequest req;
  req.set_storage_id(storage_id);
  storage::v1::Storage out;
  grpc::Status s = storage_->stub().GetStorage(Ctx(admin_).get(), req, &out);
  EXPECT_TRUE(s.ok()) << s.error_message();
  std::vector<std::string> ids;
  for (const storage::v1::Attachment& a : out.attachments()) ids.push_back(a.instance_id());
  return ids;
}

std::vector<UsageRow> ReconcilerTest::Usage(const std::string& instance_id) {
  absl::StatusOr<std::vector<UsageRow>> rows = pool_->Read<std::vector<UsageRow>>(
      "test.usage", [&](db::Tx& tx) -> absl::StatusOr<std::vector<UsageRow>> {
        return tx
            .Exec("SELECT node_id, micros_per_hour, currency, " GPUAAS_SQL_MICROS(
                      "start_time") ", " GPUAAS_SQL_MICROS("end_time") " FROM instance.usage "
                                                                       "WHERE instance_id = $1 "
                                                                       "ORDER BY start_time",
                  instance_id)
            .Map([](const db::Row& r) {
              return UsageRow{r.Get<std::string>(0), r.Get<int64_t>(1), r.Get<std::string>(2),
                              r.GetTime(3), r.GetOptionalTime(4)};
            });
      });
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.value_or(std::vector<UsageRow>{});
}

void ReconcilerTest::Exec(const std::string& sql) {
  ASSERT_OK(pool_->RunInTransaction("test.exec", [&](db::Tx& tx) {
    tx.ExecScript(sql);
    return absl::OkStatus();
  }));
}

absl::Time ReconcilerTest::DbNow() {
  ReconcileRepository repo;
  return pool_
      ->Read<absl::Time>("test.now",
                         [&](db::Tx& tx) -> absl::StatusOr<absl::Time> { return repo.Now(tx); })
      .value_or(absl::InfinitePast());
}

}  // namespace gpuaas::instance::testing
