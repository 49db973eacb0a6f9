// CreateInstance against the real auth, stock and storage services (loopback gRPC) and
// PostgreSQL: retries and taken ids, lookups that fail naming the field, quotas, the lookups
// running at once, and the per-replica cache of specs and quotas (on a fake clock): what it may
// serve, to whom, and for how long.
#include <gtest/gtest.h>

#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/channel.h"
#include "libs/testing/eventually.h"
#include "libs/testing/status_matchers.h"
#include "services/instance/instances.h"
#include "tests/instance/reconciler_test_base.h"

namespace gpuaas::instance::testing {
namespace {

using ::gpuaas::testing::Eventually;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

constexpr absl::Duration kCacheTtl = absl::Seconds(2);

class InstanceCreateTest : public ReconcilerTest {
 protected:
  // No reconciler runs: created instances stay PENDING, which is all a create decides.
  int Stocks() override { return 0; }

  void SetUp() override {
    ReconcilerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SetQuota("alpha", /*max_gpus=*/8, /*max_instances=*/100);
    auto channel = client::OpenChannel(stack_->address(), {});
    ASSERT_OK(channel);
    authenticator_ = authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*channel), clock_);
    pins_ = std::make_unique<ImagePinQueue>(*pool_, *pinner_, &box_, ImagePinQueueOptions{});
    images_ = std::make_unique<Images>(*pool_, *pins_, &box_);
    instances_ = std::make_unique<Instances>(
        *pool_, Peers{*auth_client_, *stock_client_, *storage_client_}, *images_, nullptr,
        InstancesOptions{.lookup_cache_ttl = kCacheTtl, .clock = &cache_clock_});
  }
  void TearDown() override {
    instances_.reset();
    images_.reset();
    pins_.reset();
    ReconcilerTest::TearDown();
  }

  static pb::CreateInstanceRequest Request(const std::string& instance_id,
                                           const std::string& storage_id = "") {
    pb::CreateInstanceRequest req;
    req.set_instance_id(instance_id);
    req.set_spec_name(kSpec);
    req.set_storage_id(storage_id);
    req.mutable_template_()->set_cmd("exec sleep 3600");
    return req;
  }

  // The token's principal, as the service's handler would verify it.
  authz::Principal PrincipalOf(const std::string& token) {
    absl::StatusOr<authz::Principal> p = authenticator_->Authenticate("Bearer " + token);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.value_or(authz::Principal{});
  }
  static client::CallerCredentials CallerOf(const std::string& token) {
    return client::CallerCredentials{.authorization = "Bearer " + token,
                                     .deadline = absl::Now() + absl::Seconds(20)};
  }

  absl::StatusOr<pb::Instance> Create(const std::string& token,
                                      const pb::CreateInstanceRequest& req) {
    pb::Instance out;
    absl::Status s = instances_->CreateInstance(PrincipalOf(token), CallerOf(token), req, out);
    if (!s.ok()) return s;
    return out;
  }
  absl::Status StartById(const std::string& token, const std::string& instance_id) {
    pb::StartInstanceRequest req;
    req.set_instance_id(instance_id);
    pb::Instance out;
    return instances_->StartInstance(PrincipalOf(token), CallerOf(token), req, out);
  }
  absl::Status StopById(const std::string& token, const std::string& instance_id) {
    pb::StopInstanceRequest req;
    req.set_instance_id(instance_id);
    pb::Instance out;
    return instances_->StopInstance(PrincipalOf(token), req, out);
  }
  absl::StatusOr<pb::Instance> Get(const std::string& token, const std::string& instance_id) {
    pb::GetInstanceRequest req;
    req.set_instance_id(instance_id);
    pb::Instance out;
    absl::Status s = instances_->GetInstance(PrincipalOf(token), req, out);
    if (!s.ok()) return s;
    return out;
  }

  // As the platform admin, at the stock service.
  void SetDeprecated(bool deprecated) {
    stock::v1::UpdateSpecRequest req;
    req.mutable_spec()->set_spec_name(kSpec);
    req.mutable_spec()->set_deprecated(deprecated);
    req.mutable_update_mask()->add_paths("deprecated");
    stock::v1::Spec out;
    grpc::Status s = stock_->stub().UpdateSpec(Ctx(admin_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // Tenant beta, its member's token, and its storage "beta-vol".
  std::string AddTenantBeta() {
    stack_->CreateTenant("beta");
    SetQuota("beta", 8, 100);
    auth::v1::UpdateTenantRequest req;
    req.mutable_tenant()->set_tenant_id("beta");
    req.mutable_tenant()->mutable_quota()->set_max_storage_bytes(int64_t{10} << 30);
    req.mutable_update_mask()->add_paths("quota.max_storage_bytes");
    auth::v1::Tenant tenant;
    EXPECT_TRUE(stub().UpdateTenant(Ctx(admin_).get(), req, &tenant).ok());
    stack_->CreateUser("bmember", "beta", common::v1::ROLE_MEMBER);
    const std::string token =
        stack_->Login("bmember", auth::testing::AuthStack::PasswordOf("bmember"));
    storage::v1::CreateStorageRequest storage_req;
    storage_req.set_storage_id("beta-vol");
    storage_req.set_spec_name("standard-1g");
    storage::v1::Storage storage;
    grpc::Status s = storage_->stub().CreateStorage(Ctx(token).get(), storage_req, &storage);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return token;
  }

  // Relations with a lock request waiting, among `tables`.
  int TablesWaitedOn(const std::vector<std::string>& tables) {
    int n = 0;
    EXPECT_OK(pool_->RunInTransaction("test.waits", [&](db::Tx& tx) {
      n = 0;
      for (const std::string& table : tables) {
        n += tx.Exec(
                   "SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND relation = "
                   "to_regclass($1)",
                   table)
                 .First()
                 ->Get<bool>(0);
      }
      return absl::OkStatus();
    }));
    return n;
  }

  int AdvisoryLockWaiters() {
    int n = 0;
    EXPECT_OK(pool_->RunInTransaction("test.waits", [&](db::Tx& tx) {
      n = static_cast<int>(
          tx.Exec("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
              .First()
              ->Get<int64_t>(0));
      return absl::OkStatus();
    }));
    return n;
  }

  FakeClock cache_clock_;
  std::unique_ptr<authz::Authenticator> authenticator_;
  // No test here names an OCI reference: no registry is asked, and the queue never starts.
  ImagePinnerPtr pinner_ = NewRegistryPinner({});
  std::unique_ptr<ImagePinQueue> pins_;
  std::unique_ptr<Images> images_;
  std::unique_ptr<Instances> instances_;
};

// Runs `statements` (lock takers) in a transaction of its own that stays open from construction
// until destruction, so whoever needs those locks waits meanwhile.
class LocksHeld final {
 public:
  LocksHeld(db::Pool& pool, std::vector<std::string> statements) {
    holder_ = std::thread([&pool, statements = std::move(statements), this] {
      absl::Status s = pool.RunInTransaction("test.hold_locks", [&](db::Tx& tx) {
        for (const std::string& statement : statements) tx.ExecScript(statement);
        locked_.Notify();
        release_.WaitForNotification();
        return absl::OkStatus();
      });
      EXPECT_OK(s);
      if (!locked_.HasBeenNotified()) locked_.Notify();
    });
    locked_.WaitForNotification();
  }
  ~LocksHeld() {
    release_.Notify();
    holder_.join();
  }

 private:
  absl::Notification locked_;
  absl::Notification release_;
  std::thread holder_;
};

// Every statement that reads `tables` waits while this lives.
std::vector<std::string> LockTables(const std::vector<std::string>& tables) {
  std::vector<std::string> statements;
  for (const std::string& t : tables) {
    statements.push_back("LOCK TABLE " + t + " IN ACCESS EXCLUSIVE MODE");
  }
  return statements;
}

TEST_F(InstanceCreateTest, ARetryAnswersTheFirstInstanceAndATakenIdIsAlreadyExists) {
  ASSERT_OK_AND_ASSIGN(pb::Instance created, Create(member_, Request("web-1", "vol")));
  EXPECT_EQ(created.tenant_id(), "alpha");
  EXPECT_EQ(created.state(), pb::STATE_PENDING);
  EXPECT_EQ(created.desired_state(), pb::DESIRED_STATE_RUNNING);
  EXPECT_EQ(created.gpu_num(), 1) << "the spec's";
  EXPECT_GT(created.revision(), 0);
  EXPECT_TRUE(created.has_create_time());
  // The answer is the row as stored.
  ASSERT_OK_AND_ASSIGN(pb::Instance stored, Get(member_, "web-1"));
  stored.clear_events();
  EXPECT_EQ(created.SerializeAsString(), stored.SerializeAsString());

  ASSERT_OK_AND_ASSIGN(pb::Instance again, Create(member_, Request("web-1", "vol")));
  EXPECT_EQ(again.SerializeAsString(), created.SerializeAsString());

  pb::CreateInstanceRequest other = Request("web-1", "vol");
  other.set_name("another");
  EXPECT_THAT(Create(member_, other),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("instance_id: web-1 is taken")));
  // Ids are one namespace across tenants.
  const std::string beta = AddTenantBeta();
  EXPECT_THAT(Create(beta, Request("web-1")),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("instance_id: web-1")));
}

// Retries racing each other all get the one instance: held at the tenant's quota lock together,
// the second and later find the first's row once they have the lock, instead of failing on the
// primary key.
TEST_F(InstanceCreateTest, ConcurrentRetriesAllGetTheOneInstance) {
  ASSERT_OK(Create(member_, Request("warm-up")));  // JWKS and caches, so the racers race
  constexpr int kRacers = 4;
  std::vector<absl::StatusOr<pb::Instance>> answers(kRacers, absl::UnknownError("not run"));
  std::vector<std::thread> racers;
  {
    // The tenant's quota lock (repository_instances.cc, LockTenant).
    LocksHeld quota_lock(
        *pool_, {"SELECT pg_advisory_xact_lock(hashtextextended('instance.quota/alpha', 0))"});
    for (int i = 0; i < kRacers; ++i) {
      racers.emplace_back([&, i] { answers[i] = Create(member_, Request("raced")); });
    }
    EXPECT_TRUE(Eventually([&] { return AdvisoryLockWaiters() == kRacers; }, absl::Seconds(10)));
  }
  for (std::thread& t : racers) t.join();
  for (const auto& answer : answers) {
    ASSERT_OK(answer);
    EXPECT_EQ(answer->revision(), answers[0]->revision());
  }
}

TEST_F(InstanceCreateTest, LookupsThatFindNothingAreNotFoundNamingTheField) {
  pb::CreateInstanceRequest no_spec = Request("a-1");
  no_spec.set_spec_name("nope.1x");
  EXPECT_THAT(Create(member_, no_spec),
              StatusIs(absl::StatusCode::kNotFound, "spec_name: nope.1x not found"));
  EXPECT_THAT(Create(member_, Request("a-2", "missing")),
              StatusIs(absl::StatusCode::kNotFound, "storage_id: missing not found"));
  // Another tenant's storage does not exist, for its members and for the global roles acting
  // in alpha.
  AddTenantBeta();
  EXPECT_THAT(Create(member_, Request("a-3", "beta-vol")),
              StatusIs(absl::StatusCode::kNotFound, "storage_id: beta-vol not found"));
  pb::CreateInstanceRequest as_admin = Request("a-4", "beta-vol");
  as_admin.set_tenant_id("alpha");
  EXPECT_THAT(Create(admin_, as_admin),
              StatusIs(absl::StatusCode::kNotFound, "storage_id: beta-vol not found"));
  // Nothing was stored; a good create still goes through.
  ASSERT_OK(Create(member_, Request("a-5", "vol")));
}

// The instance is bound to its storage's identity, which every start attaches.
TEST_F(InstanceCreateTest, CreateBindsTheStoragesIdentity) {
  storage::v1::GetStorageRequest get;
  get.set_storage_id("vol");
  storage::v1::Storage vol;
  ASSERT_TRUE(storage_->stub().GetStorage(Ctx(member_).get(), get, &vol).ok());
  ASSERT_OK_AND_ASSIGN(pb::Instance created, Create(member_, Request("bound", "vol")));
  EXPECT_EQ(created.storage_uid(), vol.storage_uid());
  EXPECT_FALSE(created.storage_uid().empty());
  ASSERT_OK_AND_ASSIGN(pb::Instance none, Create(member_, Request("unbound")));
  EXPECT_EQ(none.storage_uid(), "");
}

TEST_F(InstanceCreateTest, QuotasRefuseNamingTheQuota) {
  SetQuota("alpha", 1, 2);
  ASSERT_OK(Create(member_, Request("q-1")));
  EXPECT_THAT(Create(member_, Request("q-2")),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("quota max_gpus")));
  ASSERT_OK(StopById(member_, "q-1"));
  ASSERT_OK(Create(member_, Request("q-2"))) << "a stopped instance holds no GPU";
  EXPECT_THAT(Create(member_, Request("q-3")),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("quota max_instances")));
  EXPECT_THAT(StartById(member_, "q-1"),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("quota max_gpus")));
}

// The cache's bargain: a lowered quota binds creates once the ttl has passed; a raised one at
// once, because a refusal is always checked against a fresh quota; starts always read afresh.
TEST_F(InstanceCreateTest, ALoweredQuotaBindsWithinTheTtlARaisedOneAtOnce) {
  SetQuota("alpha", 3, 100);
  ASSERT_OK(Create(member_, Request("q-1")));  // reads 3 GPUs
  SetQuota("alpha", 1, 100);
  ASSERT_OK(Create(member_, Request("q-2"))) << "within the ttl the quota read last binds";
  cache_clock_.Advance(kCacheTtl);
  EXPECT_THAT(Create(member_, Request("q-3")),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("quota max_gpus")));
  SetQuota("alpha", 3, 100);
  ASSERT_OK(Create(member_, Request("q-3"))) << "a raised quota binds at once";

  ASSERT_OK(StopById(member_, "q-3"));
  SetQuota("alpha", 2, 100);
  EXPECT_THAT(StartById(member_, "q-3"),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("quota max_gpus")))
      << "a start reads the quota afresh";
}

// Quotas are kept by tenant: one tenant's never stands in for another's.
TEST_F(InstanceCreateTest, EachTenantIsHeldToItsOwnQuota) {
  const std::string beta = AddTenantBeta();
  SetQuota("alpha", 1, 100);
  ASSERT_OK(Create(member_, Request("alpha-1")));
  EXPECT_THAT(Create(member_, Request("alpha-2")),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("tenant alpha")));
  ASSERT_OK(Create(beta, Request("beta-1")));
  ASSERT_OK(Create(beta, Request("beta-2"))) << "beta's quota, not alpha's";
  // A global role naming the tenant gets that tenant's.
  pb::CreateInstanceRequest as_admin = Request("alpha-3");
  as_admin.set_tenant_id("alpha");
  EXPECT_THAT(Create(admin_, as_admin),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("tenant alpha")));
  as_admin.set_tenant_id("beta");
  ASSERT_OK(Create(admin_, as_admin));
}

// A deprecated spec is refused on a fresh answer every time, so undeprecating it takes effect at
// once; a spec deprecated after it was read is refused once the ttl has passed.
TEST_F(InstanceCreateTest, ADeprecatedSpecIsRefusedOnAFreshAnswer) {
  SetDeprecated(true);
  EXPECT_THAT(Create(member_, Request("d-1")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "spec_name: a100.1x is deprecated; pick another spec"));
  SetDeprecated(false);
  ASSERT_OK(Create(member_, Request("d-1")));
  SetDeprecated(true);
  ASSERT_OK(Create(member_, Request("d-2"))) << "within the ttl the spec read last serves";
  cache_clock_.Advance(kCacheTtl);
  EXPECT_THAT(Create(member_, Request("d-3")), StatusIs(absl::StatusCode::kFailedPrecondition));
}

// With every lookup's table locked, the spec, storage and tenant lookups all wait at their
// services at the same time; one after another, only the first would.
TEST_F(InstanceCreateTest, TheLookupsRunAtOnce) {
  const std::vector<std::string> tables = {"stock.specs", "storage.storages", "auth.tenants"};
  std::optional<absl::StatusOr<pb::Instance>> answer;
  std::thread create;
  {
    LocksHeld locks(*pool_, LockTables(tables));
    create = std::thread([&] { answer = Create(member_, Request("c-1", "vol")); });
    EXPECT_TRUE(Eventually([&] { return TablesWaitedOn(tables) == 3; }, absl::Seconds(4)))
        << "lookups waiting at once: " << TablesWaitedOn(tables) << " of 3";
  }
  create.join();
  ASSERT_TRUE(answer.has_value());
  ASSERT_OK(*answer);
}

// The first lookup to fail answers the create; the calls still in flight are cancelled, not
// waited for.
TEST_F(InstanceCreateTest, AFailedLookupDoesNotWaitForTheOthers) {
  absl::Duration took;
  {
    LocksHeld locks(*pool_, LockTables({"storage.storages", "auth.tenants"}));
    pb::CreateInstanceRequest req = Request("e-1", "vol");
    req.set_spec_name("nope.1x");
    const absl::Time start = absl::Now();
    EXPECT_THAT(Create(member_, req),
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("spec_name")));
    took = absl::Now() - start;
  }
  EXPECT_LT(took, absl::Seconds(2)) << "waited for the blocked lookups";
}

}  // namespace
}  // namespace gpuaas::instance::testing
