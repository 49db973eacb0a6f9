// The permission matrix: every role × every authenticated method → allowed or denied.
// Callers act in tenant "alpha" (or globally); targets live in "alpha".
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>

#include <gtest/gtest.h>

#include "libs/testing/pg_test.h"
#include "tests/auth/auth_stack.h"

namespace gpuaas::auth::testing {
namespace {

using common::v1::Role;

enum Caller { kViewer, kMember, kService, kTenantAdmin, kPlatformAdmin };
constexpr Caller kCallers[] = {kViewer, kMember, kService, kTenantAdmin, kPlatformAdmin};
constexpr const char* kCallerNames[] = {"viewer", "member", "service", "tenant-admin",
                                        "platform-admin"};

struct Case {
  const char* method;
  std::set<Caller> allowed;
  // Performs the call with `token`; may prepare targets first with the admin token.
  std::function<grpc::Status(const std::string& token)> call;
};

class AuthPermissionsTest : public AuthStackTest {
 protected:
  void SetUp() override {
    AuthStackTest::SetUp();
    if (IsSkipped()) return;
    stack_->CreateTenant("alpha");
    stack_->CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
    stack_->CreateUser("member", "alpha", common::v1::ROLE_MEMBER);
    stack_->CreateUser("tadmin", "alpha", common::v1::ROLE_TENANT_ADMIN);
    target_ = stack_->CreateUser("target", "alpha", common::v1::ROLE_MEMBER);
    spare_ = stack_->CreateUser("spare", "alpha", common::v1::ROLE_MEMBER);

    pb::CreateUserRequest svc;
    svc.mutable_user()->set_user_name("robot");
    svc.mutable_user()->set_global_role(common::v1::ROLE_SERVICE);
    svc.set_password(AuthStack::PasswordOf("robot"));
    pb::User robot;
    ASSERT_TRUE(stub().CreateUser(AuthStack::Ctx(admin_).get(), svc, &robot).ok());

    tokens_[kViewer] = stack_->Login("viewer", AuthStack::PasswordOf("viewer"));
    tokens_[kMember] = stack_->Login("member", AuthStack::PasswordOf("member"));
    tokens_[kTenantAdmin] = stack_->Login("tadmin", AuthStack::PasswordOf("tadmin"));
    tokens_[kService] = stack_->Login("robot", AuthStack::PasswordOf("robot"));
    tokens_[kPlatformAdmin] = stack_->Login("admin", std::string(kAdminPassword), "alpha");
  }

  std::vector<Case> Cases();

  std::string target_;
  std::string spare_;
  std::map<Caller, std::string> tokens_;
  int counter_ = 0;
};

std::vector<Case> AuthPermissionsTest::Cases() {
  const std::set<Caller> everyone(std::begin(kCallers), std::end(kCallers));
  const std::set<Caller> admins = {kTenantAdmin, kPlatformAdmin};
  const std::set<Caller> platform = {kPlatformAdmin};
  return {
      {"CreateTenant", platform,
       [this](const std::string& t) {
         pb::CreateTenantRequest r;
         r.mutable_tenant()->set_tenant_id("new-" + std::to_string(++counter_));
         pb::Tenant out;
         return stub().CreateTenant(Ctx(t).get(), r, &out);
       }},
      {"GetTenant", everyone,
       [this](const std::string& t) {
         pb::GetTenantRequest r;
         r.set_tenant_id("alpha");
         pb::Tenant out;
         return stub().GetTenant(Ctx(t).get(), r, &out);
       }},
      {"ListTenants", {kService, kPlatformAdmin},
       [this](const std::string& t) {
         pb::ListTenantsResponse out;
         return stub().ListTenants(Ctx(t).get(), {}, &out);
       }},
      {"UpdateTenant(display_name)", admins,
       [this](const std::string& t) {
         pb::UpdateTenantRequest r;
         r.mutable_tenant()->set_tenant_id("alpha");
         r.mutable_tenant()->set_display_name("Alpha " + std::to_string(++counter_));
         r.mutable_update_mask()->add_paths("display_name");
         pb::Tenant out;
         return stub().UpdateTenant(Ctx(t).get(), r, &out);
       }},
      {"UpdateTenant(quota)", platform,
       [this](const std::string& t) {
         pb::UpdateTenantRequest r;
         r.mutable_tenant()->set_tenant_id("alpha");
         r.mutable_tenant()->mutable_quota()->set_max_gpus(++counter_);
         r.mutable_update_mask()->add_paths("quota.max_gpus");
         pb::Tenant out;
         return stub().UpdateTenant(Ctx(t).get(), r, &out);
       }},
      {"CreateUser(in tenant)", admins,
       [this](const std::string& t) {
         pb::CreateUserRequest r;
         r.mutable_user()->set_user_name("made-" + std::to_string(++counter_));
         r.set_password("long enough password");
         r.set_tenant_id("alpha");
         r.set_role(common::v1::ROLE_MEMBER);
         pb::User out;
         return stub().CreateUser(Ctx(t).get(), r, &out);
       }},
      {"GetUser(other member)", {kTenantAdmin, kService, kPlatformAdmin},
       [this](const std::string& t) {
         pb::GetUserRequest r;
         r.set_user_id(target_);
         pb::User out;
         return stub().GetUser(Ctx(t).get(), r, &out);
       }},
      {"ListUsers", {kTenantAdmin, kService, kPlatformAdmin},
       [this](const std::string& t) {
         pb::ListUsersResponse out;
         return stub().ListUsers(Ctx(t).get(), {}, &out);
       }},
      {"UpdateUser(other member)", platform,
       [this](const std::string& t) {
         pb::UpdateUserRequest r;
         r.mutable_user()->set_user_id(target_);
         r.mutable_user()->set_display_name("renamed");
         r.mutable_update_mask()->add_paths("display_name");
         pb::User out;
         return stub().UpdateUser(Ctx(t).get(), r, &out);
       }},
      {"DeleteUser(other member)", platform,
       [this](const std::string& t) {
         std::string victim = stack_->CreateUser("victim-" + std::to_string(++counter_), "alpha",
                                                 common::v1::ROLE_MEMBER);
         pb::DeleteUserRequest r;
         r.set_user_id(victim);
         pb::DeleteUserResponse out;
         return stub().DeleteUser(Ctx(t).get(), r, &out);
       }},
      {"AddMember", admins,
       [this](const std::string& t) {
         pb::RemoveMemberRequest rm;
         rm.set_tenant_id("alpha");
         rm.set_user_id(spare_);
         pb::RemoveMemberResponse ignored;
         (void)stub().RemoveMember(Ctx(admin_).get(), rm, &ignored);
         pb::AddMemberRequest r;
         r.set_tenant_id("alpha");
         r.set_user_id(spare_);
         r.set_role(common::v1::ROLE_VIEWER);
         pb::Membership out;
         return stub().AddMember(Ctx(t).get(), r, &out);
       }},
      {"UpdateMember", admins,
       [this](const std::string& t) {
         pb::UpdateMemberRequest r;
         r.set_tenant_id("alpha");
         r.set_user_id(target_);
         r.set_role(++counter_ % 2 ? common::v1::ROLE_VIEWER : common::v1::ROLE_MEMBER);
         pb::Membership out;
         return stub().UpdateMember(Ctx(t).get(), r, &out);
       }},
      {"RemoveMember", admins,
       [this](const std::string& t) {
         pb::AddMemberRequest add;
         add.set_tenant_id("alpha");
         add.set_user_id(spare_);
         add.set_role(common::v1::ROLE_VIEWER);
         pb::Membership ignored;
         (void)stub().AddMember(Ctx(admin_).get(), add, &ignored);
         pb::RemoveMemberRequest r;
         r.set_tenant_id("alpha");
         r.set_user_id(spare_);
         pb::RemoveMemberResponse out;
         return stub().RemoveMember(Ctx(t).get(), r, &out);
       }},
      {"ListMembers", everyone,
       [this](const std::string& t) {
         pb::ListMembersRequest r;
         r.set_tenant_id("alpha");
         pb::ListMembersResponse out;
         return stub().ListMembers(Ctx(t).get(), r, &out);
       }},
      {"WhoAmI", everyone,
       [this](const std::string& t) {
         pb::WhoAmIResponse out;
         return stub().WhoAmI(Ctx(t).get(), {}, &out);
       }},
      {"CreateApiKey", everyone,
       [this](const std::string& t) {
         pb::CreateApiKeyRequest r;
         r.set_name("key");
         pb::CreateApiKeyResponse out;
         return stub().CreateApiKey(Ctx(t).get(), r, &out);
       }},
      {"ListApiKeys", everyone,
       [this](const std::string& t) {
         pb::ListApiKeysResponse out;
         return stub().ListApiKeys(Ctx(t).get(), {}, &out);
       }},
      {"RevokeApiKey(another member's)", admins,
       [this](const std::string& t) {
         std::string owner = stack_->Login("target", AuthStack::PasswordOf("target"));
         pb::CreateApiKeyRequest c;
         c.set_name("owned by target");
         pb::CreateApiKeyResponse key;
         EXPECT_TRUE(stub().CreateApiKey(Ctx(owner).get(), c, &key).ok());
         pb::RevokeApiKeyRequest r;
         r.set_api_key_id(key.api_key().api_key_id());
         pb::ApiKey out;
         return stub().RevokeApiKey(Ctx(t).get(), r, &out);
       }},
      {"RotateSigningKey", platform,
       [this](const std::string& t) {
         pb::SigningKey out;
         return stub().RotateSigningKey(Ctx(t).get(), {}, &out);
       }},
      // Last: it deletes the tenant the others act in.
      {"DeleteTenant", platform,
       [this](const std::string& t) {
         pb::DeleteTenantRequest r;
         r.set_tenant_id("alpha");
         pb::DeleteTenantResponse out;
         return stub().DeleteTenant(Ctx(t).get(), r, &out);
       }},
  };
}

TEST_F(AuthPermissionsTest, RoleByMethodMatrix) {
  for (const Case& c : Cases()) {
    for (Caller caller : kCallers) {
      grpc::Status s = c.call(tokens_[caller]);
      if (c.allowed.count(caller)) {
        EXPECT_TRUE(s.ok()) << c.method << " as " << kCallerNames[caller] << " should be allowed: "
                            << s.error_code() << " " << s.error_message();
      } else {
        EXPECT_TRUE(s.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
                    s.error_code() == grpc::StatusCode::NOT_FOUND)
            << c.method << " as " << kCallerNames[caller] << " should be denied, got "
            << s.error_code() << " " << s.error_message();
      }
    }
  }
}

TEST_F(AuthPermissionsTest, EveryMethodButPublicOnesNeedsAToken) {
  const std::set<std::string> kPublic = {"Login", "Refresh", "Logout", "ExchangeApiKey", "GetJwks"};
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          pb::AuthService::service_full_name());
  ASSERT_NE(service, nullptr);
  auto channel = grpc::CreateChannel(stack_->address(), grpc::InsecureChannelCredentials());
  for (int i = 0; i < service->method_count(); ++i) {
    const std::string name = service->method(i)->name();
    if (kPublic.count(name)) continue;
    // An empty request serialises to zero bytes whatever its type.
    grpc::GenericStub generic(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
    grpc::Slice empty("");
    request = grpc::ByteBuffer(&empty, 1);
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    generic.UnaryCall(&ctx, "/gpuaas.auth.v1.AuthService/" + name, grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) {
                        std::lock_guard<std::mutex> lock(mu);
                        status = s;
                        done = true;
                        cv.notify_one();
                      });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << name;
  }
}

}  // namespace
}  // namespace gpuaas::auth::testing
