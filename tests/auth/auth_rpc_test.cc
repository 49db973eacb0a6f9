// Every AuthService RPC's success path, through a real gRPC stub against real PostgreSQL.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "libs/testing/pg_test.h"
#include "tests/auth/auth_stack.h"

namespace gpuaas::auth::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::Property;
using ::testing::SizeIs;

class AuthRpcTest : public AuthStackTest {};

#define ASSERT_RPC_OK(call)                                                                \
  do {                                                                                     \
    grpc::Status s_ = (call);                                                              \
    ASSERT_TRUE(s_.ok()) << #call << ": " << s_.error_code() << " " << s_.error_message(); \
  } while (false)

TEST_F(AuthRpcTest, TenantLifecycle) {
  pb::CreateTenantRequest create;
  create.mutable_tenant()->set_tenant_id("studio-a");
  create.mutable_tenant()->set_display_name("Studio A");
  create.mutable_tenant()->mutable_quota()->set_max_gpus(16);
  create.mutable_tenant()->mutable_quota()->set_max_instances(4);
  create.mutable_tenant()->mutable_quota()->set_max_storage_bytes(1LL << 40);
  pb::Tenant tenant;
  ASSERT_RPC_OK(stub().CreateTenant(AuthStack::Ctx(admin_).get(), create, &tenant));
  EXPECT_EQ(tenant.tenant_id(), "studio-a");
  EXPECT_EQ(tenant.quota().max_gpus(), 16);
  EXPECT_GT(tenant.create_time().seconds(), 0);

  pb::GetTenantRequest get;
  get.set_tenant_id("studio-a");
  pb::Tenant got;
  ASSERT_RPC_OK(stub().GetTenant(AuthStack::Ctx(admin_).get(), get, &got));
  EXPECT_EQ(got.display_name(), "Studio A");

  pb::UpdateTenantRequest update;
  update.mutable_tenant()->set_tenant_id("studio-a");
  update.mutable_tenant()->mutable_quota()->set_max_gpus(32);
  update.mutable_update_mask()->add_paths("quota.max_gpus");
  pb::Tenant updated;
  ASSERT_RPC_OK(stub().UpdateTenant(AuthStack::Ctx(admin_).get(), update, &updated));
  EXPECT_EQ(updated.quota().max_gpus(), 32);
  EXPECT_EQ(updated.quota().max_instances(), 4);  // untouched by the mask
  EXPECT_EQ(updated.display_name(), "Studio A");

  pb::ListTenantsResponse list;
  ASSERT_RPC_OK(stub().ListTenants(AuthStack::Ctx(admin_).get(), {}, &list));
  EXPECT_THAT(list.tenants(), ElementsAre(Property(&pb::Tenant::tenant_id, "studio-a")));

  pb::DeleteTenantRequest del;
  del.set_tenant_id("studio-a");
  pb::DeleteTenantResponse deleted;
  ASSERT_RPC_OK(stub().DeleteTenant(AuthStack::Ctx(admin_).get(), del, &deleted));
  EXPECT_EQ(stub().GetTenant(AuthStack::Ctx(admin_).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// Operators and billing clients create tenants at once: none may be refused ABORTED.
TEST_F(AuthRpcTest, ConcurrentCreateTenantsAllSucceed) {
  constexpr int kCreates = 16;
  std::vector<grpc::Status> results(kCreates);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCreates; ++i) {
    threads.emplace_back([&, i] {
      pb::CreateTenantRequest create;
      create.mutable_tenant()->set_tenant_id("burst-" + std::to_string(i));
      create.mutable_tenant()->set_display_name("Burst");
      create.set_request_id("req-burst-" + std::to_string(i));
      pb::Tenant tenant;
      results[i] = stub().CreateTenant(AuthStack::Ctx(admin_).get(), create, &tenant);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kCreates; ++i) {
    EXPECT_TRUE(results[i].ok()) << i << ": " << results[i].error_code() << " "
                                 << results[i].error_message();
  }
}

TEST_F(AuthRpcTest, ListTenantsPages) {
  for (int i = 0; i < 5; ++i) stack_->CreateTenant("team-" + std::to_string(i));
  pb::ListTenantsRequest req;
  req.set_page_size(2);
  std::vector<std::string> seen;
  for (int pages = 0; pages < 10; ++pages) {
    pb::ListTenantsResponse resp;
    ASSERT_RPC_OK(stub().ListTenants(AuthStack::Ctx(admin_).get(), req, &resp));
    for (const pb::Tenant& t : resp.tenants()) seen.push_back(t.tenant_id());
    if (resp.next_page_token().empty()) break;
    req.set_page_token(resp.next_page_token());
  }
  EXPECT_THAT(seen, ElementsAre("team-0", "team-1", "team-2", "team-3", "team-4"));
}

TEST_F(AuthRpcTest, UserLifecycle) {
  stack_->CreateTenant("lab");
  pb::CreateUserRequest create;
  create.mutable_user()->set_user_name("alice");
  create.mutable_user()->set_display_name("Alice");
  create.set_password("correct horse battery");
  create.set_tenant_id("lab");
  create.set_role(common::v1::ROLE_MEMBER);
  pb::User alice;
  ASSERT_RPC_OK(stub().CreateUser(AuthStack::Ctx(admin_).get(), create, &alice));
  EXPECT_FALSE(alice.user_id().empty());

  pb::GetUserRequest get;
  get.set_user_id(alice.user_id());
  pb::User got;
  ASSERT_RPC_OK(stub().GetUser(AuthStack::Ctx(admin_).get(), get, &got));
  EXPECT_EQ(got.user_name(), "alice");

  pb::ListUsersResponse users;
  ASSERT_RPC_OK(stub().ListUsers(AuthStack::Ctx(admin_).get(), {}, &users));
  EXPECT_THAT(users.users(), SizeIs(2));  // admin and alice

  pb::UpdateUserRequest update;
  update.mutable_user()->set_user_id(alice.user_id());
  update.mutable_user()->set_display_name("Alice L.");
  update.mutable_update_mask()->add_paths("display_name");
  pb::User updated;
  ASSERT_RPC_OK(stub().UpdateUser(AuthStack::Ctx(admin_).get(), update, &updated));
  EXPECT_EQ(updated.display_name(), "Alice L.");

  // A user changes their own password and logs in with it.
  std::string alice_token = stack_->Login("alice", "correct horse battery");
  pb::UpdateUserRequest change;
  change.mutable_user()->set_user_id(alice.user_id());
  change.set_password("new password 123");
  change.mutable_update_mask()->add_paths("password");
  ASSERT_RPC_OK(stub().UpdateUser(AuthStack::Ctx(alice_token).get(), change, &updated));
  stack_->Login("alice", "new password 123");

  pb::DeleteUserRequest del;
  del.set_user_id(alice.user_id());
  pb::DeleteUserResponse deleted;
  ASSERT_RPC_OK(stub().DeleteUser(AuthStack::Ctx(admin_).get(), del, &deleted));
  EXPECT_EQ(stub().GetUser(AuthStack::Ctx(admin_).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(AuthRpcTest, Memberships) {
  stack_->CreateTenant("lab");
  stack_->CreateTenant("studio");
  std::string bob = stack_->CreateUser("bob", "lab", common::v1::ROLE_TENANT_ADMIN);
  std::string carol = stack_->CreateUser("carol", "studio", common::v1::ROLE_MEMBER);

  pb::AddMemberRequest add;
  add.set_tenant_id("lab");
  add.set_user_id(carol);
  add.set_role(common::v1::ROLE_VIEWER);
  pb::Membership m;
  std::string bob_token = stack_->Login("bob", AuthStack::PasswordOf("bob"));
  ASSERT_RPC_OK(stub().AddMember(AuthStack::Ctx(bob_token).get(), add, &m));
  EXPECT_EQ(m.role(), common::v1::ROLE_VIEWER);
  EXPECT_EQ(m.user_name(), "carol");

  pb::UpdateMemberRequest update;
  update.set_tenant_id("lab");
  update.set_user_id(carol);
  update.set_role(common::v1::ROLE_MEMBER);
  ASSERT_RPC_OK(stub().UpdateMember(AuthStack::Ctx(bob_token).get(), update, &m));
  EXPECT_EQ(m.role(), common::v1::ROLE_MEMBER);

  pb::ListMembersRequest list;
  list.set_tenant_id("lab");
  pb::ListMembersResponse members;
  ASSERT_RPC_OK(stub().ListMembers(AuthStack::Ctx(bob_token).get(), list, &members));
  EXPECT_THAT(members.members(), SizeIs(2));

  pb::RemoveMemberRequest remove;
  remove.set_tenant_id("lab");
  remove.set_user_id(carol);
  pb::RemoveMemberResponse removed;
  ASSERT_RPC_OK(stub().RemoveMember(AuthStack::Ctx(bob_token).get(), remove, &removed));
  ASSERT_RPC_OK(stub().ListMembers(AuthStack::Ctx(bob_token).get(), list, &members));
  EXPECT_THAT(members.members(), SizeIs(1));
}

TEST_F(AuthRpcTest, LoginWhoAmIRefreshLogout) {
  stack_->CreateTenant("personal-dan");
  stack_->CreateTenant("team");
  std::string dan = stack_->CreateUser("dan", "personal-dan", common::v1::ROLE_TENANT_ADMIN);
  stack_->AddMember("team", dan, common::v1::ROLE_VIEWER);

  // Without a tenant the token acts for the first membership; with one, for that tenant.
  pb::LoginRequest login;
  login.set_user_name("dan");
  login.set_password(AuthStack::PasswordOf("dan"));
  pb::LoginResponse tokens;
  ASSERT_RPC_OK(stub().Login(AuthStack::Ctx().get(), login, &tokens));
  EXPECT_EQ(tokens.tenant_id(), "personal-dan");
  EXPECT_EQ(tokens.role(), common::v1::ROLE_TENANT_ADMIN);
  EXPECT_EQ(tokens.token_type(), "Bearer");
  login.set_tenant_id("team");
  ASSERT_RPC_OK(stub().Login(AuthStack::Ctx().get(), login, &tokens));
  EXPECT_EQ(tokens.tenant_id(), "team");
  EXPECT_EQ(tokens.role(), common::v1::ROLE_VIEWER);

  pb::WhoAmIResponse me;
  ASSERT_RPC_OK(stub().WhoAmI(AuthStack::Ctx(tokens.access_token()).get(), {}, &me));
  EXPECT_EQ(me.user_name(), "dan");
  EXPECT_EQ(me.tenant_id(), "team");
  EXPECT_EQ(me.role(), common::v1::ROLE_VIEWER);
  EXPECT_THAT(me.memberships(), SizeIs(2));

  pb::RefreshRequest refresh;
  refresh.set_refresh_token(tokens.refresh_token());
  pb::RefreshResponse refreshed;
  ASSERT_RPC_OK(stub().Refresh(AuthStack::Ctx().get(), refresh, &refreshed));
  EXPECT_NE(refreshed.refresh_token(), tokens.refresh_token());
  EXPECT_EQ(refreshed.tenant_id(), "team");
  ASSERT_RPC_OK(stub().WhoAmI(AuthStack::Ctx(refreshed.access_token()).get(), {}, &me));

  pb::LogoutRequest logout;
  logout.set_refresh_token(refreshed.refresh_token());
  pb::LogoutResponse out;
  ASSERT_RPC_OK(stub().Logout(AuthStack::Ctx().get(), logout, &out));
  refresh.set_refresh_token(refreshed.refresh_token());
  EXPECT_EQ(stub().Refresh(AuthStack::Ctx().get(), refresh, &refreshed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

// The web console's tenant switch: Refresh with tenant_id moves the session to another tenant
// of the user, with the user's role there.
TEST_F(AuthRpcTest, RefreshSwitchesTenant) {
  stack_->CreateTenant("home");
  stack_->CreateTenant("team");
  stack_->CreateTenant("elsewhere");
  std::string fay = stack_->CreateUser("fay", "home", common::v1::ROLE_TENANT_ADMIN);
  stack_->AddMember("team", fay, common::v1::ROLE_VIEWER);
  pb::LoginRequest login;
  login.set_user_name("fay");
  login.set_password(AuthStack::PasswordOf("fay"));
  pb::LoginResponse tokens;
  ASSERT_RPC_OK(stub().Login(AuthStack::Ctx().get(), login, &tokens));
  ASSERT_EQ(tokens.tenant_id(), "home");

  pb::RefreshRequest refresh;
  refresh.set_refresh_token(tokens.refresh_token());
  refresh.set_tenant_id("team");
  pb::RefreshResponse switched;
  ASSERT_RPC_OK(stub().Refresh(AuthStack::Ctx().get(), refresh, &switched));
  EXPECT_EQ(switched.tenant_id(), "team");
  EXPECT_EQ(switched.role(), common::v1::ROLE_VIEWER);
  pb::WhoAmIResponse me;
  ASSERT_RPC_OK(stub().WhoAmI(AuthStack::Ctx(switched.access_token()).get(), {}, &me));
  EXPECT_EQ(me.tenant_id(), "team");
  EXPECT_EQ(me.role(), common::v1::ROLE_VIEWER);

  // Not a member (or no such tenant): NOT_FOUND, and the token presented is not spent.
  refresh.set_refresh_token(switched.refresh_token());
  pb::RefreshResponse refused;
  for (const char* tenant : {"elsewhere", "no-such-tenant"}) {
    refresh.set_tenant_id(tenant);
    EXPECT_EQ(stub().Refresh(AuthStack::Ctx().get(), refresh, &refused).error_code(),
              grpc::StatusCode::NOT_FOUND)
        << tenant;
  }
  refresh.set_tenant_id("Not A Tenant!");
  EXPECT_EQ(stub().Refresh(AuthStack::Ctx().get(), refresh, &refused).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // Later refreshes stay in the tenant switched to; the refresh token rotates as usual.
  refresh.clear_tenant_id();
  pb::RefreshResponse stayed;
  ASSERT_RPC_OK(stub().Refresh(AuthStack::Ctx().get(), refresh, &stayed));
  EXPECT_EQ(stayed.tenant_id(), "team");
  EXPECT_EQ(stayed.role(), common::v1::ROLE_VIEWER);
  refresh.set_tenant_id("home");
  refresh.set_refresh_token(stayed.refresh_token());
  pb::RefreshResponse back;
  ASSERT_RPC_OK(stub().Refresh(AuthStack::Ctx().get(), refresh, &back));
  EXPECT_EQ(back.tenant_id(), "home");
  EXPECT_EQ(back.role(), common::v1::ROLE_TENANT_ADMIN);
  refresh.set_refresh_token(stayed.refresh_token());  // spent: the session is revoked
  EXPECT_EQ(stub().Refresh(AuthStack::Ctx().get(), refresh, &refused).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // A global role acts in any tenant, as at Login.
  login.set_user_name("admin");
  login.set_password(std::string(kAdminPassword));
  ASSERT_RPC_OK(stub().Login(AuthStack::Ctx().get(), login, &tokens));
  refresh.set_refresh_token(tokens.refresh_token());
  refresh.set_tenant_id("elsewhere");
  ASSERT_RPC_OK(stub().Refresh(AuthStack::Ctx().get(), refresh, &switched));
  EXPECT_EQ(switched.tenant_id(), "elsewhere");
  EXPECT_EQ(switched.role(), common::v1::ROLE_PLATFORM_ADMIN);
}

TEST_F(AuthRpcTest, ApiKeys) {
  stack_->CreateTenant("render");
  stack_->CreateUser("erin", "render", common::v1::ROLE_MEMBER);
  std::string erin = stack_->Login("erin", AuthStack::PasswordOf("erin"));

  pb::CreateApiKeyRequest create;
  create.set_name("ci pipeline");
  create.set_role(common::v1::ROLE_VIEWER);
  pb::CreateApiKeyResponse key;
  ASSERT_RPC_OK(stub().CreateApiKey(AuthStack::Ctx(erin).get(), create, &key));
  EXPECT_FALSE(key.secret().empty());
  EXPECT_EQ(key.api_key().tenant_id(), "render");

  pb::ListApiKeysResponse keys;
  ASSERT_RPC_OK(stub().ListApiKeys(AuthStack::Ctx(erin).get(), {}, &keys));
  ASSERT_THAT(keys.api_keys(), SizeIs(1));
  EXPECT_EQ(keys.api_keys(0).name(), "ci pipeline");

  pb::ExchangeApiKeyRequest exchange;
  exchange.set_secret(key.secret());
  pb::ExchangeApiKeyResponse token;
  ASSERT_RPC_OK(stub().ExchangeApiKey(AuthStack::Ctx().get(), exchange, &token));
  EXPECT_EQ(token.role(), common::v1::ROLE_VIEWER);
  pb::WhoAmIResponse me;
  ASSERT_RPC_OK(stub().WhoAmI(AuthStack::Ctx(token.access_token()).get(), {}, &me));
  EXPECT_EQ(me.api_key_id(), key.api_key().api_key_id());
  EXPECT_EQ(me.tenant_id(), "render");

  pb::RevokeApiKeyRequest revoke;
  revoke.set_api_key_id(key.api_key().api_key_id());
  pb::ApiKey revoked;
  ASSERT_RPC_OK(stub().RevokeApiKey(AuthStack::Ctx(erin).get(), revoke, &revoked));
  EXPECT_TRUE(revoked.revoked());
  EXPECT_EQ(stub().ExchangeApiKey(AuthStack::Ctx().get(), exchange, &token).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthRpcTest, JwksAndRotation) {
  pb::GetJwksResponse jwks;
  ASSERT_RPC_OK(stub().GetJwks(AuthStack::Ctx().get(), {}, &jwks));
  ASSERT_THAT(jwks.keys(), SizeIs(1));
  EXPECT_EQ(jwks.keys(0).crv(), "Ed25519");
  std::string old_token = admin_;

  pb::SigningKey fresh;
  ASSERT_RPC_OK(stub().RotateSigningKey(AuthStack::Ctx(admin_).get(), {}, &fresh));
  ASSERT_RPC_OK(stub().GetJwks(AuthStack::Ctx().get(), {}, &jwks));
  EXPECT_THAT(jwks.keys(), SizeIs(2));  // the old key stays published for its tokens
  EXPECT_EQ(jwks.keys(0).kid(), fresh.kid());

  // Tokens signed before and after the rotation both work.
  pb::WhoAmIResponse me;
  ASSERT_RPC_OK(stub().WhoAmI(AuthStack::Ctx(old_token).get(), {}, &me));
  ASSERT_RPC_OK(stub().WhoAmI(AuthStack::Ctx(stack_->AdminToken()).get(), {}, &me));
}

}  // namespace
}  // namespace gpuaas::auth::testing
