// Attacks on identity and tenant scope by a departed or demoted member, a deleted user, a user
// of two tenants, and anyone holding one kind of credential where another is expected. Each runs
// over real gRPC against the auth service's wiring on real PostgreSQL (tests/auth/auth_stack.h).
//
// An access token is a signed JWT checked without a database, so it lives out its
// --access-token-ttl-seconds (15 min by default) after a removal; what these tests close is
// everything that outlives it: refresh tokens (console sessions) and API keys.
#include <gtest/gtest.h>

#include <string>

#include "libs/authz/jwt.h"
#include "libs/common/ids.h"
#include "libs/testing/pg_test.h"
#include "tests/auth/auth_stack.h"

namespace gpuaas::security {
namespace {

namespace pb = ::gpuaas::auth::v1;
using auth::testing::AuthStack;
using auth::testing::AuthStackTest;

constexpr grpc::StatusCode OK = grpc::StatusCode::OK;
constexpr grpc::StatusCode UNAUTH = grpc::StatusCode::UNAUTHENTICATED;
constexpr grpc::StatusCode NF = grpc::StatusCode::NOT_FOUND;
constexpr grpc::StatusCode PD = grpc::StatusCode::PERMISSION_DENIED;

class IdentityAttackTest : public AuthStackTest {
 protected:
  pb::LoginResponse LoginFull(const std::string& user, const std::string& password,
                              const std::string& tenant = "") {
    pb::LoginRequest req;
    req.set_user_name(user);
    req.set_password(password);
    req.set_tenant_id(tenant);
    pb::LoginResponse out;
    grpc::Status s = stub().Login(Ctx().get(), req, &out);
    EXPECT_TRUE(s.ok()) << user << ": " << s.error_message();
    return out;
  }
  pb::LoginResponse LoginAs(const std::string& user, const std::string& tenant = "") {
    return LoginFull(user, AuthStack::PasswordOf(user), tenant);
  }

  // Refresh with `refresh_token`; on success `*next` (when given) is the rotated token.
  grpc::StatusCode Refresh(const std::string& refresh_token, pb::RefreshResponse* next = nullptr) {
    pb::RefreshRequest req;
    req.set_refresh_token(refresh_token);
    pb::RefreshResponse out;
    grpc::StatusCode code = stub().Refresh(Ctx().get(), req, &out).error_code();
    if (next != nullptr) *next = out;
    return code;
  }

  grpc::StatusCode Exchange(const std::string& secret, pb::ExchangeApiKeyResponse* out = nullptr) {
    pb::ExchangeApiKeyRequest req;
    req.set_secret(secret);
    pb::ExchangeApiKeyResponse resp;
    grpc::StatusCode code = stub().ExchangeApiKey(Ctx().get(), req, &resp).error_code();
    if (out != nullptr) *out = resp;
    return code;
  }

  grpc::StatusCode WhoAmI(const std::string& token) {
    pb::WhoAmIResponse out;
    return stub().WhoAmI(Ctx(token).get(), {}, &out).error_code();
  }

  grpc::StatusCode RemoveMember(const std::string& token, const std::string& tenant,
                                const std::string& user_id) {
    pb::RemoveMemberRequest req;
    req.set_tenant_id(tenant);
    req.set_user_id(user_id);
    pb::RemoveMemberResponse out;
    return stub().RemoveMember(Ctx(token).get(), req, &out).error_code();
  }

  grpc::StatusCode AddMember(const std::string& token, const std::string& tenant,
                             const std::string& user_id, common::v1::Role role) {
    pb::AddMemberRequest req;
    req.set_tenant_id(tenant);
    req.set_user_id(user_id);
    req.set_role(role);
    pb::Membership out;
    return stub().AddMember(Ctx(token).get(), req, &out).error_code();
  }

  // Tenant acme's admin eve with a console session and a MEMBER key of her own.
  struct Eve {
    std::string user_id;
    pb::LoginResponse login;
    std::string key;
  };
  Eve EveInAcme() {
    stack_->CreateTenant("acme");
    Eve eve{.user_id = stack_->CreateUser("eve", "acme", common::v1::ROLE_TENANT_ADMIN)};
    eve.login = LoginAs("eve");
    eve.key =
        stack_->CreateApiKey(eve.login.access_token(), "eve's script", common::v1::ROLE_MEMBER);
    return eve;
  }

  grpc::StatusCode SetPassword(const std::string& token, const std::string& user_id,
                               const std::string& password) {
    pb::UpdateUserRequest req;
    req.mutable_user()->set_user_id(user_id);
    req.set_password(password);
    req.mutable_update_mask()->add_paths("password");
    pb::User out;
    return stub().UpdateUser(Ctx(token).get(), req, &out).error_code();
  }
};

// A tenant admin removes eve. Her console session (refresh token) and her API key die with the
// membership, and stay dead when she is added back later (a rehire, as a viewer): before, both
// came back to life with the new membership. Her session in her other tenant and a colleague's
// credentials keep working.
TEST_F(IdentityAttackTest, ARemovedMembersSessionAndKeyStayDeadWhenReAdded) {
  stack_->CreateTenant("acme");
  stack_->CreateTenant("eve-home");
  stack_->CreateUser("boss", "acme", common::v1::ROLE_TENANT_ADMIN);
  const std::string eve = stack_->CreateUser("eve", "acme", common::v1::ROLE_TENANT_ADMIN);
  stack_->CreateUser("ann", "acme", common::v1::ROLE_MEMBER);
  stack_->AddMember("eve-home", eve, common::v1::ROLE_TENANT_ADMIN);

  const pb::LoginResponse eve_acme = LoginAs("eve", "acme");
  const pb::LoginResponse eve_home = LoginAs("eve", "eve-home");
  const std::string eve_key =
      stack_->CreateApiKey(eve_acme.access_token(), "eve's script", common::v1::ROLE_MEMBER);
  const pb::LoginResponse ann = LoginAs("ann");
  const std::string ann_key =
      stack_->CreateApiKey(ann.access_token(), "ann's script", common::v1::ROLE_MEMBER);
  const std::string boss = LoginAs("boss").access_token();

  ASSERT_EQ(RemoveMember(boss, "acme", eve), OK);
  EXPECT_EQ(Exchange(eve_key), UNAUTH);
  // Re-added as a viewer before she tries the old session: it must not come back.
  ASSERT_EQ(AddMember(boss, "acme", eve, common::v1::ROLE_VIEWER), OK);
  EXPECT_EQ(Refresh(eve_acme.refresh_token()), UNAUTH);
  EXPECT_EQ(Exchange(eve_key), UNAUTH);

  // Legitimate: her new login acts as the viewer she now is; her other tenant's session and
  // her colleague's session and key are untouched.
  const pb::LoginResponse again = LoginAs("eve", "acme");
  EXPECT_EQ(again.role(), common::v1::ROLE_VIEWER);
  pb::RefreshResponse home;
  EXPECT_EQ(Refresh(eve_home.refresh_token(), &home), OK);
  EXPECT_EQ(home.tenant_id(), "eve-home");
  EXPECT_EQ(Refresh(ann.refresh_token()), OK);
  EXPECT_EQ(Exchange(ann_key), OK);
}

// A tenant admin demoted to viewer refreshes the session she had: the new token is a viewer's,
// and it cannot manage people. (Her API keys: auth_grant_test ExchangeMeetsTheCreatorsCurrentRole.)
TEST_F(IdentityAttackTest, ADemotedAdminsRefreshedSessionCarriesTheNewRole) {
  stack_->CreateTenant("acme");
  const std::string boss_id = stack_->CreateUser("boss", "acme", common::v1::ROLE_TENANT_ADMIN);
  const std::string eve = stack_->CreateUser("eve", "acme", common::v1::ROLE_TENANT_ADMIN);
  const std::string mallet = stack_->CreateUser("mallet", "", common::v1::ROLE_UNSPECIFIED);
  const pb::LoginResponse eve_login = LoginAs("eve");

  pb::UpdateMemberRequest demote;
  demote.set_tenant_id("acme");
  demote.set_user_id(eve);
  demote.set_role(common::v1::ROLE_VIEWER);
  pb::Membership m;
  ASSERT_TRUE(stub().UpdateMember(Ctx(LoginAs("boss").access_token()).get(), demote, &m).ok());

  pb::RefreshResponse refreshed;
  ASSERT_EQ(Refresh(eve_login.refresh_token(), &refreshed), OK);
  EXPECT_EQ(refreshed.role(), common::v1::ROLE_VIEWER);
  EXPECT_EQ(AddMember(refreshed.access_token(), "acme", mallet, common::v1::ROLE_TENANT_ADMIN), PD);
  EXPECT_EQ(RemoveMember(refreshed.access_token(), "acme", boss_id), PD);
}

// Eve's password leaked; she changes it, later the platform admin resets it. Every session opened
// before each change ends (the attacker's copy of the refresh token too); a login with the new
// password works. API keys are credentials of their own and survive a password change: revoke
// them with RevokeApiKey.
TEST_F(IdentityAttackTest, APasswordChangeOrResetEndsEveryEarlierSession) {
  stack_->CreateTenant("acme");
  const std::string eve = stack_->CreateUser("eve", "acme", common::v1::ROLE_MEMBER);
  const pb::LoginResponse attacker = LoginAs("eve");
  const pb::LoginResponse hers = LoginAs("eve");

  ASSERT_EQ(SetPassword(hers.access_token(), eve, "eve's new password 1"), OK);
  EXPECT_EQ(Refresh(attacker.refresh_token()), UNAUTH);
  EXPECT_EQ(Refresh(hers.refresh_token()), UNAUTH);
  const pb::LoginResponse after_change = LoginFull("eve", "eve's new password 1");
  EXPECT_EQ(Refresh(after_change.refresh_token()), OK);

  const pb::LoginResponse before_reset = LoginFull("eve", "eve's new password 1");
  ASSERT_EQ(SetPassword(admin_, eve, "set by the admin 2"), OK);
  EXPECT_EQ(Refresh(before_reset.refresh_token()), UNAUTH);
  pb::LoginRequest old;
  old.set_user_name("eve");
  old.set_password("eve's new password 1");
  pb::LoginResponse refused;
  EXPECT_EQ(stub().Login(Ctx().get(), old, &refused).error_code(), UNAUTH);
  EXPECT_EQ(Refresh(LoginFull("eve", "set by the admin 2").refresh_token()), OK);
}

// A deleted user's refresh token, API key and access token are refused, also after a new user
// takes the same user name.
TEST_F(IdentityAttackTest, ADeletedUsersSessionKeyAndTokenAreRefusedEvenUnderTheSameName) {
  const Eve eve = EveInAcme();

  pb::DeleteUserRequest del;
  del.set_user_id(eve.user_id);
  pb::DeleteUserResponse deleted;
  ASSERT_TRUE(stub().DeleteUser(Ctx(admin_).get(), del, &deleted).ok());
  stack_->CreateUser("eve", "acme", common::v1::ROLE_TENANT_ADMIN);

  EXPECT_EQ(Refresh(eve.login.refresh_token()), UNAUTH);
  EXPECT_EQ(Exchange(eve.key), UNAUTH);
  EXPECT_EQ(WhoAmI(eve.login.access_token()), UNAUTH);
  // The new eve is someone else, with sessions of her own.
  EXPECT_EQ(WhoAmI(LoginAs("eve").access_token()), OK);
}

// The platform deletes tenant acme; someone then asks for a new acme. Before, it was made, and
// eve's old admin token (a JWT, valid for its lifetime) and her old session acted in it, as would
// every row the other services keep under the id (instances, storages, images, usage). A deleted
// tenant's id is never reused: ALREADY_EXISTS. Her old session, key and token reach nothing; a
// tenant of another id is made and she joins it as usual.
TEST_F(IdentityAttackTest, ADeletedTenantsIdIsNeverGivenToANewTenant) {
  const Eve eve = EveInAcme();
  const std::string outsider = stack_->CreateUser("out", "", common::v1::ROLE_UNSPECIFIED);

  pb::DeleteTenantRequest del;
  del.set_tenant_id("acme");
  pb::DeleteTenantResponse deleted;
  ASSERT_TRUE(stub().DeleteTenant(Ctx(admin_).get(), del, &deleted).ok());
  pb::CreateTenantRequest again;
  again.mutable_tenant()->set_tenant_id("acme");
  pb::Tenant t;
  EXPECT_EQ(stub().CreateTenant(Ctx(admin_).get(), again, &t).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);

  EXPECT_EQ(AddMember(eve.login.access_token(), "acme", outsider, common::v1::ROLE_VIEWER), NF);
  EXPECT_EQ(Refresh(eve.login.refresh_token()), UNAUTH);
  EXPECT_EQ(Exchange(eve.key), UNAUTH);

  stack_->CreateTenant("acme-2");
  stack_->AddMember("acme-2", eve.user_id, common::v1::ROLE_VIEWER);
  const pb::LoginResponse fresh = LoginAs("eve", "acme-2");
  EXPECT_EQ(fresh.role(), common::v1::ROLE_VIEWER);
  EXPECT_EQ(Refresh(fresh.refresh_token()), OK);
}

// A viewer of tenant A who administers tenant B uses her B token on A's people: NOT_FOUND, as
// for any other tenant; in A itself she is the viewer she is there.
TEST_F(IdentityAttackTest, AnAdminTokenOfOneTenantHasNoPowerInAnotherOfTheUsersTenants) {
  stack_->CreateTenant("tenant-a");
  stack_->CreateTenant("tenant-b");
  const std::string eve = stack_->CreateUser("eve", "tenant-a", common::v1::ROLE_VIEWER);
  stack_->AddMember("tenant-b", eve, common::v1::ROLE_TENANT_ADMIN);
  const std::string victim = stack_->CreateUser("vic", "tenant-a", common::v1::ROLE_TENANT_ADMIN);

  const std::string as_b = LoginAs("eve", "tenant-b").access_token();
  EXPECT_EQ(RemoveMember(as_b, "tenant-a", victim), NF);
  EXPECT_EQ(AddMember(as_b, "tenant-a", victim, common::v1::ROLE_VIEWER), NF);
  pb::UpdateMemberRequest promote;
  promote.set_tenant_id("tenant-a");
  promote.set_user_id(eve);
  promote.set_role(common::v1::ROLE_TENANT_ADMIN);
  pb::Membership m;
  EXPECT_EQ(stub().UpdateMember(Ctx(as_b).get(), promote, &m).error_code(), NF);
  // A key made with the B token acts in B, at most what she holds there.
  pb::ExchangeApiKeyResponse key_token;
  ASSERT_EQ(
      Exchange(stack_->CreateApiKey(as_b, "b key", common::v1::ROLE_TENANT_ADMIN), &key_token), OK);
  EXPECT_EQ(key_token.tenant_id(), "tenant-b");
  EXPECT_EQ(RemoveMember(key_token.access_token(), "tenant-a", victim), NF);

  const std::string as_a = LoginAs("eve", "tenant-a").access_token();
  EXPECT_EQ(RemoveMember(as_a, "tenant-a", victim), PD);
  EXPECT_EQ(stub().UpdateMember(Ctx(as_a).get(), promote, &m).error_code(), PD);
}

// Each credential works only where it is meant to: an access token is no refresh token nor API
// key secret, a refresh token and a key secret are no bearer tokens, a refresh token is no key,
// and a JWT signed by our own key for another issuer is refused.
TEST_F(IdentityAttackTest, OneKindOfCredentialIsNoOtherKind) {
  stack_->CreateTenant("acme");
  stack_->CreateUser("eve", "acme", common::v1::ROLE_TENANT_ADMIN);
  const pb::LoginResponse login = LoginAs("eve");
  const std::string key = stack_->CreateApiKey(login.access_token(), "k", common::v1::ROLE_VIEWER);

  EXPECT_EQ(Refresh(login.access_token()), UNAUTH);
  EXPECT_EQ(Refresh(key), UNAUTH);
  EXPECT_EQ(Exchange(login.access_token()), UNAUTH);
  EXPECT_EQ(Exchange(login.refresh_token()), UNAUTH);
  EXPECT_EQ(WhoAmI(login.refresh_token()), UNAUTH);
  EXPECT_EQ(WhoAmI(key), UNAUTH);

  pb::WhoAmIResponse me;
  ASSERT_TRUE(stub().WhoAmI(Ctx(login.access_token()).get(), {}, &me).ok());
  authz::Claims other;
  other.iss = "another-service";
  other.sub = me.user_id();
  other.tenant = "acme";
  other.role = common::v1::ROLE_TENANT_ADMIN;
  other.iat = absl::Now();
  other.exp = other.iat + absl::Minutes(5);
  other.jti = NewId("jti_");
  absl::StatusOr<std::string> foreign = stack_->keys().Sign(other);
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(WhoAmI(*foreign), UNAUTH);

  // Legitimate: each in its own place.
  EXPECT_EQ(WhoAmI(login.access_token()), OK);
  EXPECT_EQ(Exchange(key), OK);
  EXPECT_EQ(Refresh(login.refresh_token()), OK);
}

// A leaked key's token cannot outlive the key: it mints no further API key (which would survive
// the key's revocation), even for a role below its own; after RevokeApiKey it exchanges to
// nothing. Its maker, logged in, still makes keys.
TEST_F(IdentityAttackTest, ALeakedKeysTokenCannotMintAKeyThatOutlivesIt) {
  const Eve eve = EveInAcme();
  pb::ExchangeApiKeyResponse leaked;
  ASSERT_EQ(Exchange(eve.key, &leaked), OK);

  pb::CreateApiKeyRequest mint;
  mint.set_name("persistence");
  mint.set_role(common::v1::ROLE_VIEWER);
  pb::CreateApiKeyResponse minted;
  EXPECT_EQ(stub().CreateApiKey(Ctx(leaked.access_token()).get(), mint, &minted).error_code(), PD);

  pb::RevokeApiKeyRequest revoke;
  revoke.set_api_key_id(eve.key.substr(0, eve.key.find('.')));
  pb::ApiKey revoked;
  ASSERT_TRUE(stub().RevokeApiKey(Ctx(eve.login.access_token()).get(), revoke, &revoked).ok());
  EXPECT_EQ(Exchange(eve.key), UNAUTH);
  EXPECT_TRUE(stub().CreateApiKey(Ctx(eve.login.access_token()).get(), mint, &minted).ok());
}

}  // namespace
}  // namespace gpuaas::security
