// RequestLog against real PostgreSQL: first call creates, a retry of the same request gets the
// first id, a different request under the same id is refused.
#include "libs/service/request_log.h"

#include <gtest/gtest.h>

#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::service {
namespace {

using ::gpuaas::testing::StatusIs;

constexpr std::string_view kSchema =
    "CREATE SCHEMA svc; "
    "CREATE TABLE svc.requests (method text NOT NULL, caller text NOT NULL, "
    "request_id text NOT NULL, request_hash text NOT NULL DEFAULT '', result_id text NOT NULL, "
    "create_time timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (method, caller, request_id))";

class RequestLogTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    ASSERT_OK_AND_ASSIGN(pool_, MakePool());
    ASSERT_OK(pool_->RunInTransaction("schema", [](db::Tx& tx) {
      tx.ExecScript(kSchema);
      return absl::OkStatus();
    }));
  }

  // Runs one create of `tenant_id` under `request_id`; `created` counts real creations.
  absl::StatusOr<CreateOutcome> Create(std::string_view request_id, const std::string& tenant_id) {
    auth::v1::CreateTenantRequest req;
    req.mutable_tenant()->set_tenant_id(tenant_id);
    absl::StatusOr<CreateOutcome> out = absl::InternalError("not run");
    absl::Status s = pool_->RunInTransaction(
        "create",
        [&](db::Tx& tx) {
          out = log_.Create(tx, {"CreateTenant", "usr_1", request_id}, req,
                            [&](db::Tx&) -> absl::StatusOr<std::string> {
                              ++created_;
                              return "id-" + tenant_id + "-" + std::to_string(created_);
                            });
          return out.status();
        },
        /*serializable=*/true);
    if (!s.ok()) {
      return s;
    }
    return out;
  }

  std::unique_ptr<db::Pool> pool_;
  RequestLog log_{"svc"};
  int created_ = 0;
};

TEST_F(RequestLogTest, RetryReturnsTheFirstResult) {
  ASSERT_OK_AND_ASSIGN(CreateOutcome first, Create("r1", "alpha"));
  EXPECT_TRUE(first.first);
  ASSERT_OK_AND_ASSIGN(CreateOutcome again, Create("r1", "alpha"));
  EXPECT_FALSE(again.first);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(created_, 1);
}

TEST_F(RequestLogTest, SameIdDifferentRequestIsAlreadyExists) {
  ASSERT_OK(Create("r1", "alpha").status());
  EXPECT_THAT(Create("r1", "beta"),
              StatusIs(absl::StatusCode::kAlreadyExists, ::testing::HasSubstr("request_id")));
  EXPECT_EQ(created_, 1);
}

TEST_F(RequestLogTest, NoRequestIdAlwaysCreates) {
  ASSERT_OK(Create("", "alpha").status());
  ASSERT_OK(Create("", "alpha").status());
  EXPECT_EQ(created_, 2);
}

TEST_F(RequestLogTest, KeysAreScopedPerCaller) {
  auth::v1::CreateTenantRequest req;
  absl::StatusOr<CreateOutcome> a, b;
  ASSERT_OK(pool_->RunInTransaction("two callers", [&](db::Tx& tx) {
    auto make = [](db::Tx&) -> absl::StatusOr<std::string> { return std::string("x"); };
    a = log_.Create(tx, {"CreateTenant", "usr_1", "r"}, req, make);
    b = log_.Create(tx, {"CreateTenant", "usr_2", "r"}, req, make);
    return absl::OkStatus();
  }));
  EXPECT_TRUE(a->first);
  EXPECT_TRUE(b->first);
}

}  // namespace
}  // namespace gpuaas::service
