// Specs through gRPC against real PostgreSQL: an in-process auth service issues the tokens and
// an in-process stock service verifies them against auth's JWKS over gRPC, as in production.
// Every spec RPC × every role, from the tenant the callers act in and from another: specs are
// platform resources, so the tenant never changes the answer.
#include <gtest/gtest.h>

#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"
#include "tests/auth/auth_stack.h"
#include "tests/stock/stock_stack.h"

namespace gpuaas::stock {
namespace {

using auth::testing::AuthStack;
using auth::testing::AuthStackTest;

using testing::StockStack;

pb::Spec A100(const std::string& name = "a100.1x") {
  pb::Spec s;
  s.set_spec_name(name);
  s.set_gpu_type("A100-80GB");
  s.set_gpu_num(1);
  s.set_cpu("8000m");
  s.set_memory("32768Mi");
  s.set_disk("200Gi");
  s.mutable_price()->set_micros_per_hour(2'400'000);
  s.mutable_price()->set_currency("USD");
  return s;
}

class StockSpecsTest : public AuthStackTest {
 protected:
  void SetUp() override {
    AuthStackTest::SetUp();
    if (IsSkipped()) return;
    stock_ = std::make_unique<StockStack>(dsn(), stack_->address());
  }
  void TearDown() override {
    stock_.reset();
    AuthStackTest::TearDown();
  }

  grpc::Status Create(const std::string& token, const pb::Spec& spec, pb::Spec* out = nullptr) {
    pb::CreateSpecRequest req;
    *req.mutable_spec() = spec;
    pb::Spec ignored;
    return stock_->stub().CreateSpec(Ctx(token).get(), req, out ? out : &ignored);
  }

  std::unique_ptr<StockStack> stock_;
};

TEST_F(StockSpecsTest, CreateGetListUpdateDelete) {
  pb::Spec created;
  ASSERT_TRUE(Create(admin_, A100(), &created).ok());
  // Quantities come back in canonical form, whatever spelling created them.
  EXPECT_EQ(created.cpu(), "8");
  EXPECT_EQ(created.memory(), "32Gi");
  EXPECT_TRUE(created.has_create_time());

  pb::GetSpecRequest get;
  get.set_spec_name("a100.1x");
  pb::Spec got;
  ASSERT_TRUE(stock_->stub().GetSpec(Ctx(admin_).get(), get, &got).ok());
  EXPECT_EQ(got.gpu_type(), "A100-80GB");

  pb::UpdateSpecRequest update;
  update.mutable_spec()->set_spec_name("a100.1x");
  update.mutable_spec()->set_deprecated(true);
  update.mutable_update_mask()->add_paths("deprecated");
  pb::Spec updated;
  ASSERT_TRUE(stock_->stub().UpdateSpec(Ctx(admin_).get(), update, &updated).ok());
  EXPECT_TRUE(updated.deprecated());
  EXPECT_EQ(updated.price().micros_per_hour(), 2'400'000);  // untouched by the mask

  pb::ListSpecsRequest list;
  pb::ListSpecsResponse page;
  ASSERT_TRUE(stock_->stub().ListSpecs(Ctx(admin_).get(), list, &page).ok());
  EXPECT_EQ(page.specs_size(), 0);  // deprecated specs are hidden unless asked for
  list.set_show_deprecated(true);
  ASSERT_TRUE(stock_->stub().ListSpecs(Ctx(admin_).get(), list, &page).ok());
  EXPECT_EQ(page.specs_size(), 1);

  pb::DeleteSpecRequest del;
  del.set_spec_name("a100.1x");
  pb::DeleteSpecResponse deleted;
  ASSERT_TRUE(stock_->stub().DeleteSpec(Ctx(admin_).get(), del, &deleted).ok());
  EXPECT_EQ(stock_->stub().GetSpec(Ctx(admin_).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(StockSpecsTest, CreateIsIdempotentByName) {
  pb::Spec first;
  ASSERT_TRUE(Create(admin_, A100(), &first).ok());
  pb::Spec same = A100();
  same.set_cpu("8");  // the same value spelled otherwise
  pb::Spec again;
  ASSERT_TRUE(Create(admin_, same, &again).ok());
  EXPECT_EQ(again.create_time().seconds(), first.create_time().seconds());
  pb::Spec other = A100();
  other.set_gpu_num(2);
  EXPECT_EQ(Create(admin_, other).error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(StockSpecsTest, BadInputNamesTheField) {
  pb::Spec s = A100();
  s.set_memory("1e400");
  grpc::Status status = Create(admin_, s);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().rfind("spec.memory: ", 0), 0u) << status.error_message();
  s = A100();
  s.set_gpu_type("T4");
  s.set_mig_profile("1g.10gb");
  status = Create(admin_, s);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().rfind("spec.mig_profile: ", 0), 0u) << status.error_message();
}

TEST_F(StockSpecsTest, PermissionMatrix) {
  for (const char* tenant : {"alpha", "beta"}) stack_->CreateTenant(tenant);
  stack_->CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
  stack_->CreateUser("member", "alpha", common::v1::ROLE_MEMBER);
  stack_->CreateUser("tadmin", "alpha", common::v1::ROLE_TENANT_ADMIN);
  stack_->CreateUser("other", "beta", common::v1::ROLE_TENANT_ADMIN);
  stack_->CreateServiceUser("robot");
  struct Caller {
    const char* name;
    std::string token;
    bool platform;
  };
  const Caller kCallers[] = {
      {"viewer", stack_->Login("viewer", AuthStack::PasswordOf("viewer")), false},
      {"member", stack_->Login("member", AuthStack::PasswordOf("member")), false},
      {"tenant-admin", stack_->Login("tadmin", AuthStack::PasswordOf("tadmin")), false},
      {"other tenant's admin", stack_->Login("other", AuthStack::PasswordOf("other")), false},
      {"service", stack_->Login("robot", AuthStack::PasswordOf("robot"), "alpha"), false},
      {"platform-admin", admin_, true},
  };
  ASSERT_TRUE(Create(admin_, A100("shared.1x")).ok());
  int n = 0;
  for (const Caller& c : kCallers) {
    SCOPED_TRACE(c.name);
    const grpc::StatusCode write =
        c.platform ? grpc::StatusCode::OK : grpc::StatusCode::PERMISSION_DENIED;
    const std::string name = "s" + std::to_string(++n) + ".1x";
    EXPECT_EQ(Create(c.token, A100(name)).error_code(), write);
    pb::GetSpecRequest get;
    get.set_spec_name("shared.1x");
    pb::Spec spec;
    EXPECT_EQ(stock_->stub().GetSpec(Ctx(c.token).get(), get, &spec).error_code(),
              grpc::StatusCode::OK);
    pb::ListSpecsResponse page;
    EXPECT_EQ(stock_->stub().ListSpecs(Ctx(c.token).get(), {}, &page).error_code(),
              grpc::StatusCode::OK);
    pb::UpdateSpecRequest update;
    update.mutable_spec()->set_spec_name("shared.1x");
    update.mutable_spec()->set_description("by " + std::string(c.name));
    update.mutable_update_mask()->add_paths("description");
    EXPECT_EQ(stock_->stub().UpdateSpec(Ctx(c.token).get(), update, &spec).error_code(), write);
    pb::DeleteSpecRequest del;
    del.set_spec_name(c.platform ? name : "shared.1x");
    pb::DeleteSpecResponse deleted;
    EXPECT_EQ(stock_->stub().DeleteSpec(Ctx(c.token).get(), del, &deleted).error_code(), write);
  }
  // Without a token nothing answers.
  pb::ListSpecsResponse page;
  EXPECT_EQ(stock_->stub().ListSpecs(Ctx().get(), {}, &page).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace gpuaas::stock
