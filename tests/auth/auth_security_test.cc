// Tenant isolation, token forgery and expiry, refresh-token reuse, disabled users, login
// throttling, idempotent creates and input validation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libs/authz/jwt.h"
#include "libs/common/base64url.h"
#include "libs/common/ids.h"
#include "libs/testing/pg_test.h"
#include "tests/auth/auth_stack.h"

namespace gpuaas::auth::testing {
namespace {

using ::testing::HasSubstr;

class AuthSecurityTest : public AuthStackTest {
 protected:
  grpc::StatusCode WhoAmICode(const std::string& token) {
    pb::WhoAmIResponse out;
    return stub().WhoAmI(Ctx(token).get(), {}, &out).error_code();
  }

  authz::Claims ValidClaims() {
    pb::WhoAmIResponse me;
    EXPECT_TRUE(stub().WhoAmI(Ctx(admin_).get(), {}, &me).ok());
    authz::Claims c;
    c.iss = "gpuaas-auth";
    c.sub = me.user_id();
    c.role = common::v1::ROLE_PLATFORM_ADMIN;
    c.iat = absl::Now();
    c.exp = c.iat + absl::Minutes(5);
    c.jti = NewId("jti_");
    return c;
  }
};

TEST_F(AuthSecurityTest, OtherTenantsResourcesAreNotFound) {
  stack_->CreateTenant("tenant-a");
  stack_->CreateTenant("tenant-b");
  stack_->CreateUser("ada", "tenant-a", common::v1::ROLE_TENANT_ADMIN);
  std::string bo = stack_->CreateUser("boris", "tenant-b", common::v1::ROLE_TENANT_ADMIN);
  std::string ada = stack_->Login("ada", AuthStack::PasswordOf("ada"));

  pb::ListMembersRequest members;
  members.set_tenant_id("tenant-b");
  pb::ListMembersResponse list;
  EXPECT_EQ(stub().ListMembers(Ctx(ada).get(), members, &list).error_code(),
            grpc::StatusCode::NOT_FOUND);
  pb::GetTenantRequest get;
  get.set_tenant_id("tenant-b");
  pb::Tenant t;
  EXPECT_EQ(stub().GetTenant(Ctx(ada).get(), get, &t).error_code(), grpc::StatusCode::NOT_FOUND);
  pb::GetUserRequest user;
  user.set_user_id(bo);
  pb::User u;
  EXPECT_EQ(stub().GetUser(Ctx(ada).get(), user, &u).error_code(), grpc::StatusCode::NOT_FOUND);
  pb::AddMemberRequest add;
  add.set_tenant_id("tenant-b");
  add.set_user_id(bo);
  add.set_role(common::v1::ROLE_VIEWER);
  pb::Membership m;
  EXPECT_EQ(stub().AddMember(Ctx(ada).get(), add, &m).error_code(), grpc::StatusCode::NOT_FOUND);
  // A tenant that does not exist answers the same as one the caller may not see.
  get.set_tenant_id("no-such-tenant");
  EXPECT_EQ(stub().GetTenant(Ctx(ada).get(), get, &t).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(AuthSecurityTest, ATokenActsForOneTenantEvenWhenTheUserBelongsToBoth) {
  stack_->CreateTenant("tenant-a");
  stack_->CreateTenant("tenant-b");
  std::string cy = stack_->CreateUser("cyrus", "tenant-a", common::v1::ROLE_TENANT_ADMIN);
  stack_->AddMember("tenant-b", cy, common::v1::ROLE_TENANT_ADMIN);

  std::string token_a = stack_->Login("cyrus", AuthStack::PasswordOf("cyrus"), "tenant-a");
  pb::ListMembersRequest list_b;
  list_b.set_tenant_id("tenant-b");
  pb::ListMembersResponse out;
  EXPECT_EQ(stub().ListMembers(Ctx(token_a).get(), list_b, &out).error_code(),
            grpc::StatusCode::NOT_FOUND);
  std::string token_b = stack_->Login("cyrus", AuthStack::PasswordOf("cyrus"), "tenant-b");
  EXPECT_TRUE(stub().ListMembers(Ctx(token_b).get(), list_b, &out).ok());

  // Logging into a tenant one is not a member of is refused.
  pb::LoginRequest login;
  login.set_user_name("cyrus");
  login.set_password(AuthStack::PasswordOf("cyrus"));
  login.set_tenant_id("tenant-c");
  pb::LoginResponse tokens;
  EXPECT_EQ(stub().Login(Ctx().get(), login, &tokens).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(AuthSecurityTest, BadTokensAreUnauthenticated) {
  EXPECT_EQ(WhoAmICode(""), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(WhoAmICode("not-a-jwt"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(WhoAmICode("a.b.c"), grpc::StatusCode::UNAUTHENTICATED);

  authz::Claims claims = ValidClaims();
  absl::StatusOr<std::string> good = stack_->keys().Sign(claims);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(WhoAmICode(*good), grpc::StatusCode::OK);

  // Expired.
  authz::Claims expired = claims;
  expired.iat = absl::Now() - absl::Hours(2);
  expired.exp = absl::Now() - absl::Hours(1);
  EXPECT_EQ(WhoAmICode(*stack_->keys().Sign(expired)), grpc::StatusCode::UNAUTHENTICATED);

  // Forged: right kid, another key.
  authz::Claims forged = claims;
  absl::StatusOr<std::string> header = Base64UrlDecode(good->substr(0, good->find('.')));
  ASSERT_TRUE(header.ok());
  size_t at = header->find("\"kid\":\"");
  ASSERT_NE(at, std::string::npos);
  forged.kid = header->substr(at + 7, header->find('"', at + 7) - at - 7);
  authz::Ed25519Key attacker = authz::Ed25519Key::Generate();
  EXPECT_EQ(WhoAmICode(authz::SignJwt(forged, attacker)), grpc::StatusCode::UNAUTHENTICATED);

  // Unknown kid.
  authz::Claims wrong_kid = forged;
  wrong_kid.kid = "key_unknown";
  EXPECT_EQ(WhoAmICode(authz::SignJwt(wrong_kid, attacker)), grpc::StatusCode::UNAUTHENTICATED);

  // alg none: the real payload, no signature.
  std::string payload = good->substr(good->find('.') + 1);
  payload = payload.substr(0, payload.find('.'));
  std::string none =
      absl::StrCat(Base64UrlEncode(R"({"alg":"none","typ":"JWT"})"), ".", payload, ".");
  EXPECT_EQ(WhoAmICode(none), grpc::StatusCode::UNAUTHENTICATED);

  // Tampered payload under a real signature.
  std::string tampered = *good;
  tampered[good->find('.') + 5] ^= 1;
  EXPECT_EQ(WhoAmICode(tampered), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthSecurityTest, RefreshTokenReuseRevokesTheChain) {
  pb::LoginRequest login;
  login.set_user_name("admin");
  login.set_password(std::string(kAdminPassword));
  pb::LoginResponse first;
  ASSERT_TRUE(stub().Login(Ctx().get(), login, &first).ok());

  pb::RefreshRequest refresh;
  refresh.set_refresh_token(first.refresh_token());
  pb::RefreshResponse second;
  ASSERT_TRUE(stub().Refresh(Ctx().get(), refresh, &second).ok());
  // The old token again: reuse, so the whole chain dies, including the new token.
  pb::RefreshResponse third;
  grpc::Status reused = stub().Refresh(Ctx().get(), refresh, &third);
  EXPECT_EQ(reused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(reused.error_message(), HasSubstr("reused"));
  refresh.set_refresh_token(second.refresh_token());
  EXPECT_EQ(stub().Refresh(Ctx().get(), refresh, &third).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  refresh.set_refresh_token("grt_forged.secret");
  EXPECT_EQ(stub().Refresh(Ctx().get(), refresh, &third).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthSecurityTest, DisabledUsersCannotLogInOrRefresh) {
  stack_->CreateTenant("lab");
  std::string fay = stack_->CreateUser("fay", "lab", common::v1::ROLE_MEMBER);
  pb::LoginRequest login;
  login.set_user_name("fay");
  login.set_password(AuthStack::PasswordOf("fay"));
  pb::LoginResponse tokens;
  ASSERT_TRUE(stub().Login(Ctx().get(), login, &tokens).ok());

  pb::UpdateUserRequest disable;
  disable.mutable_user()->set_user_id(fay);
  disable.mutable_user()->set_disabled(true);
  disable.mutable_update_mask()->add_paths("disabled");
  pb::User u;
  ASSERT_TRUE(stub().UpdateUser(Ctx(admin_).get(), disable, &u).ok());

  pb::LoginResponse again;
  EXPECT_EQ(stub().Login(Ctx().get(), login, &again).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  pb::RefreshRequest refresh;
  refresh.set_refresh_token(tokens.refresh_token());
  pb::RefreshResponse refreshed;
  EXPECT_EQ(stub().Refresh(Ctx().get(), refresh, &refreshed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthSecurityTest, RepeatedFailedLoginsAreThrottled) {
  pb::LoginRequest login;
  login.set_user_name("admin");
  login.set_password("wrong password");
  pb::LoginResponse tokens;
  grpc::StatusCode last = grpc::StatusCode::OK;
  for (int i = 0; i < 10; ++i) last = stub().Login(Ctx().get(), login, &tokens).error_code();
  EXPECT_EQ(last, grpc::StatusCode::RESOURCE_EXHAUSTED);
  // From the guesser's own address even the right password waits out the lockout (other
  // addresses are not locked: tests/security/login_attack_test.cc).
  login.set_password(std::string(kAdminPassword));
  EXPECT_EQ(stub().Login(Ctx().get(), login, &tokens).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(AuthSecurityTest, CreateTenantRetriedWithTheSameRequestIdReturnsTheSameTenant) {
  pb::CreateTenantRequest req;
  req.mutable_tenant()->set_tenant_id("retry-me");
  req.mutable_tenant()->set_display_name("first");
  req.set_request_id("req-42");
  pb::Tenant first;
  ASSERT_TRUE(stub().CreateTenant(Ctx(admin_).get(), req, &first).ok());
  pb::Tenant second;
  ASSERT_TRUE(stub().CreateTenant(Ctx(admin_).get(), req, &second).ok());
  EXPECT_EQ(first.SerializeAsString(), second.SerializeAsString());
  // Without the request id the duplicate is refused.
  req.clear_request_id();
  EXPECT_EQ(stub().CreateTenant(Ctx(admin_).get(), req, &second).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
}

struct BadInput {
  const char* name;
  std::function<grpc::Status(pb::AuthService::Stub&, const std::string&)> call;
  const char* field;
};

TEST_F(AuthSecurityTest, BadInputIsInvalidArgumentNamingTheField) {
  const std::string huge(1 << 20, 'a');
  std::vector<BadInput> cases = {
      {"empty tenant id",
       [](auto& s, const std::string& t) {
         pb::CreateTenantRequest r;
         pb::Tenant out;
         return s.CreateTenant(AuthStack::Ctx(t).get(), r, &out);
       },
       "tenant.tenant_id"},
      {"1 MB tenant id",
       [&huge](auto& s, const std::string& t) {
         pb::CreateTenantRequest r;
         r.mutable_tenant()->set_tenant_id(huge);
         pb::Tenant out;
         return s.CreateTenant(AuthStack::Ctx(t).get(), r, &out);
       },
       "tenant.tenant_id"},
      {"1 MB display name",
       [&huge](auto& s, const std::string& t) {
         pb::CreateTenantRequest r;
         r.mutable_tenant()->set_tenant_id("fine-name");
         r.mutable_tenant()->set_display_name(huge);
         pb::Tenant out;
         return s.CreateTenant(AuthStack::Ctx(t).get(), r, &out);
       },
       "tenant.display_name"},
      {"negative quota",
       [](auto& s, const std::string& t) {
         pb::CreateTenantRequest r;
         r.mutable_tenant()->set_tenant_id("fine-name");
         r.mutable_tenant()->mutable_quota()->set_max_gpus(-1);
         pb::Tenant out;
         return s.CreateTenant(AuthStack::Ctx(t).get(), r, &out);
       },
       "tenant.quota.max_gpus"},
      {"empty user name",
       [](auto& s, const std::string& t) {
         pb::CreateUserRequest r;
         r.set_password("long enough password");
         pb::User out;
         return s.CreateUser(AuthStack::Ctx(t).get(), r, &out);
       },
       "user.user_name"},
      {"short password",
       [](auto& s, const std::string& t) {
         pb::CreateUserRequest r;
         r.mutable_user()->set_user_name("gus");
         r.set_password("short");
         pb::User out;
         return s.CreateUser(AuthStack::Ctx(t).get(), r, &out);
       },
       "password"},
      {"unknown role number",
       [](auto& s, const std::string& t) {
         pb::AddMemberRequest r;
         r.set_tenant_id("some-tenant");
         r.set_user_id("usr_x");
         r.set_role(static_cast<common::v1::Role>(42));
         pb::Membership out;
         return s.AddMember(AuthStack::Ctx(t).get(), r, &out);
       },
       "role"},
      {"global role through a membership",
       [](auto& s, const std::string& t) {
         pb::AddMemberRequest r;
         r.set_tenant_id("some-tenant");
         r.set_user_id("usr_x");
         r.set_role(common::v1::ROLE_PLATFORM_ADMIN);
         pb::Membership out;
         return s.AddMember(AuthStack::Ctx(t).get(), r, &out);
       },
       "role"},
      {"negative page size",
       [](auto& s, const std::string& t) {
         pb::ListTenantsRequest r;
         r.set_page_size(-5);
         pb::ListTenantsResponse out;
         return s.ListTenants(AuthStack::Ctx(t).get(), r, &out);
       },
       "page_size"},
      {"garbage page token",
       [](auto& s, const std::string& t) {
         pb::ListTenantsRequest r;
         r.set_page_token("!!!");
         pb::ListTenantsResponse out;
         return s.ListTenants(AuthStack::Ctx(t).get(), r, &out);
       },
       "page_token"},
      {"unknown update mask path",
       [](auto& s, const std::string& t) {
         pb::UpdateTenantRequest r;
         r.mutable_tenant()->set_tenant_id("some-tenant");
         r.mutable_update_mask()->add_paths("owner");
         pb::Tenant out;
         return s.UpdateTenant(AuthStack::Ctx(t).get(), r, &out);
       },
       "update_mask"},
      {"sub-second key lifetime",
       [](auto& s, const std::string& t) {
         pb::CreateApiKeyRequest r;
         r.set_name("k");
         r.mutable_ttl()->set_nanos(500'000'000);
         pb::CreateApiKeyResponse out;
         return s.CreateApiKey(AuthStack::Ctx(t).get(), r, &out);
       },
       "ttl"},
      {"key lifetime past any valid timestamp",
       [](auto& s, const std::string& t) {
         pb::CreateApiKeyRequest r;
         r.set_name("k");
         r.mutable_ttl()->set_seconds(int64_t{1} << 60);
         pb::CreateApiKeyResponse out;
         return s.CreateApiKey(AuthStack::Ctx(t).get(), r, &out);
       },
       "ttl"},
  };
  for (const BadInput& c : cases) {
    grpc::Status s = c.call(stub(), admin_);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name;
    EXPECT_THAT(s.error_message(), HasSubstr(c.field)) << c.name;
    EXPECT_LT(s.error_message().size(), 300u) << c.name << ": the message must not echo input";
  }
}

}  // namespace
}  // namespace gpuaas::auth::testing
