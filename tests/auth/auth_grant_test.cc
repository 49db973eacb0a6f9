// What API keys can carry, end to end: every creator role × every requested key role, and what
// the exchanged token may then do in the creator's tenant and in another. No chain of grants
// yields more power than its start (libs/authz/roles.h).
#include <gtest/gtest.h>

#include "libs/authz/roles.h"
#include "tests/auth/auth_stack.h"

namespace gpuaas::auth::testing {
namespace {

using common::v1::Role;

constexpr Role kRoles[] = {common::v1::ROLE_VIEWER, common::v1::ROLE_MEMBER,
                           common::v1::ROLE_TENANT_ADMIN, common::v1::ROLE_SERVICE,
                           common::v1::ROLE_PLATFORM_ADMIN};

class AuthGrantTest : public AuthStackTest {
 protected:
  void SetUp() override {
    AuthStackTest::SetUp();
    if (IsSkipped()) return;
    stack_->CreateTenant("alpha");
    stack_->CreateTenant("beta");
    stack_->CreateTenant("gamma");  // the spare user belongs to neither alpha nor beta
    spare_ = stack_->CreateUser("spare", "gamma", common::v1::ROLE_VIEWER);
    stack_->CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
    stack_->CreateUser("member", "alpha", common::v1::ROLE_MEMBER);
    stack_->CreateUser("tadmin", "alpha", common::v1::ROLE_TENANT_ADMIN);
    stack_->CreateServiceUser("robot");
    creators_[common::v1::ROLE_VIEWER] = stack_->Login("viewer", AuthStack::PasswordOf("viewer"));
    creators_[common::v1::ROLE_MEMBER] = stack_->Login("member", AuthStack::PasswordOf("member"));
    creators_[common::v1::ROLE_TENANT_ADMIN] =
        stack_->Login("tadmin", AuthStack::PasswordOf("tadmin"));
    creators_[common::v1::ROLE_SERVICE] =
        stack_->Login("robot", AuthStack::PasswordOf("robot"), "alpha");
    creators_[common::v1::ROLE_PLATFORM_ADMIN] =
        stack_->Login("admin", std::string(kAdminPassword), "alpha");
  }

  grpc::Status CreateKey(const std::string& token, Role role, pb::CreateApiKeyResponse& key) {
    pb::CreateApiKeyRequest r;
    r.set_name("key");
    r.set_role(role);
    return stub().CreateApiKey(Ctx(token).get(), r, &key);
  }

  std::string Exchange(const std::string& secret, Role want_role) {
    pb::ExchangeApiKeyRequest r;
    r.set_secret(secret);
    pb::ExchangeApiKeyResponse out;
    grpc::Status s = stub().ExchangeApiKey(Ctx().get(), r, &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(out.role(), want_role);
    EXPECT_EQ(out.tenant_id(), "alpha");
    return out.access_token();
  }

  // Manages people in `tenant`: adds (then removes) a member there.
  grpc::StatusCode ManagePeople(const std::string& token, const std::string& tenant) {
    pb::AddMemberRequest add;
    add.set_tenant_id(tenant);
    add.set_user_id(spare_);
    add.set_role(common::v1::ROLE_VIEWER);
    pb::Membership m;
    grpc::Status s = stub().AddMember(Ctx(token).get(), add, &m);
    if (s.ok()) {
      pb::RemoveMemberRequest rm;
      rm.set_tenant_id(tenant);
      rm.set_user_id(spare_);
      pb::RemoveMemberResponse ignored;
      EXPECT_TRUE(stub().RemoveMember(Ctx(admin_).get(), rm, &ignored).ok());
    }
    return s.error_code();
  }

  grpc::StatusCode ReadTenant(const std::string& token, const std::string& tenant) {
    pb::GetTenantRequest r;
    r.set_tenant_id(tenant);
    pb::Tenant t;
    return stub().GetTenant(Ctx(token).get(), r, &t).error_code();
  }

  std::string spare_;
  std::map<Role, std::string> creators_;
};

TEST_F(AuthGrantTest, EveryCreatorRoleByEveryKeyRole) {
  for (Role creator : kRoles) {
    for (Role requested : kRoles) {
      SCOPED_TRACE(std::string(authz::RoleName(creator)) + " asks for a " +
                   std::string(authz::RoleName(requested)) + " key");
      pb::CreateApiKeyResponse key;
      grpc::Status s = CreateKey(creators_[creator], requested, key);
      if (!authz::MayGrant(creator, requested)) {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
        continue;
      }
      ASSERT_TRUE(s.ok()) << s.error_message();
      EXPECT_EQ(key.api_key().role(), requested);
      EXPECT_EQ(key.api_key().tenant_id(), "alpha");
      const std::string token = Exchange(key.secret(), requested);
      // Own tenant: managing people exactly when the key's role holds that power.
      const bool manages = authz::Holds(requested, authz::Power::kManagePeople);
      EXPECT_EQ(ManagePeople(token, "alpha"),
                manages ? grpc::StatusCode::OK : grpc::StatusCode::PERMISSION_DENIED);
      // Another tenant: invisible to tenant roles, readable by global ones.
      const bool global = authz::Holds(requested, authz::Power::kAnyTenant);
      EXPECT_EQ(ReadTenant(token, "beta"),
                global ? grpc::StatusCode::OK : grpc::StatusCode::NOT_FOUND);
      EXPECT_EQ(ManagePeople(token, "beta"), !global   ? grpc::StatusCode::NOT_FOUND
                                             : manages ? grpc::StatusCode::OK
                                                       : grpc::StatusCode::PERMISSION_DENIED);
    }
  }
}

// The escalation this model closes: a SERVICE principal acting in a tenant could mint a
// TENANT_ADMIN key, exchange it and manage that tenant's people.
TEST_F(AuthGrantTest, ServiceCannotMintATenantAdminKey) {
  pb::CreateApiKeyResponse key;
  EXPECT_EQ(CreateKey(creators_[common::v1::ROLE_SERVICE], common::v1::ROLE_TENANT_ADMIN, key)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(CreateKey(creators_[common::v1::ROLE_SERVICE], common::v1::ROLE_MEMBER, key).ok());
  const std::string token = Exchange(key.secret(), common::v1::ROLE_MEMBER);
  EXPECT_EQ(ManagePeople(token, "alpha"), grpc::StatusCode::PERMISSION_DENIED);
}

// A key's tokens never carry more than its creator holds now: a tenant admin's TENANT_ADMIN
// key, after the creator is demoted to VIEWER, exchanges to VIEWER.
TEST_F(AuthGrantTest, ExchangeMeetsTheCreatorsCurrentRole) {
  pb::CreateApiKeyResponse key;
  ASSERT_TRUE(
      CreateKey(creators_[common::v1::ROLE_TENANT_ADMIN], common::v1::ROLE_TENANT_ADMIN, key).ok());
  pb::UpdateMemberRequest demote;
  demote.set_tenant_id("alpha");
  demote.set_user_id(key.api_key().user_id());
  demote.set_role(common::v1::ROLE_VIEWER);
  pb::Membership m;
  ASSERT_TRUE(stub().UpdateMember(Ctx(admin_).get(), demote, &m).ok());
  Exchange(key.secret(), common::v1::ROLE_VIEWER);
}

// A key or token with a tenant role always names its tenant.
TEST_F(AuthGrantTest, TenantRoleKeyNeedsATenant) {
  const std::string no_tenant = stack_->Login("admin", std::string(kAdminPassword));
  pb::CreateApiKeyResponse key;
  EXPECT_EQ(CreateKey(no_tenant, common::v1::ROLE_MEMBER, key).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(CreateKey(no_tenant, common::v1::ROLE_SERVICE, key).ok());
}

// A leaked low-role key must not take over its creator: a token from a key has no rights over
// its creator's account or the creator's other keys, only what its role grants.
TEST_F(AuthGrantTest, AKeyHasNoSelfRightsOverItsCreator) {
  const std::string admin = creators_[common::v1::ROLE_PLATFORM_ADMIN];
  pb::CreateApiKeyResponse viewer_key;
  pb::CreateApiKeyResponse other_key;
  ASSERT_TRUE(CreateKey(admin, common::v1::ROLE_VIEWER, viewer_key).ok());
  ASSERT_TRUE(CreateKey(admin, common::v1::ROLE_MEMBER, other_key).ok());
  const std::string token = Exchange(viewer_key.secret(), common::v1::ROLE_VIEWER);

  pb::UpdateUserRequest take_over;
  take_over.mutable_user()->set_user_id(viewer_key.api_key().user_id());
  take_over.set_password("the attacker's password");
  take_over.mutable_update_mask()->add_paths("password");
  pb::User u;
  EXPECT_EQ(stub().UpdateUser(Ctx(token).get(), take_over, &u).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  pb::RevokeApiKeyRequest revoke;
  revoke.set_api_key_id(other_key.api_key().api_key_id());
  pb::ApiKey k;
  EXPECT_EQ(stub().RevokeApiKey(Ctx(token).get(), revoke, &k).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(stub().RevokeApiKey(Ctx(admin).get(), revoke, &k).ok());
}

// A tenant admin manages its people's keys, not the platform's service keys made in its tenant.
TEST_F(AuthGrantTest, TenantAdminCannotRevokeAServiceKey) {
  pb::CreateApiKeyResponse key;
  ASSERT_TRUE(CreateKey(creators_[common::v1::ROLE_SERVICE], common::v1::ROLE_SERVICE, key).ok());
  pb::RevokeApiKeyRequest revoke;
  revoke.set_api_key_id(key.api_key().api_key_id());
  pb::ApiKey k;
  EXPECT_EQ(stub()
                .RevokeApiKey(Ctx(creators_[common::v1::ROLE_TENANT_ADMIN]).get(), revoke, &k)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(
      stub().RevokeApiKey(Ctx(creators_[common::v1::ROLE_PLATFORM_ADMIN]).get(), revoke, &k).ok());
}

}  // namespace
}  // namespace gpuaas::auth::testing
