// The permission matrix: every role × every authenticated method × own or another tenant →
// the exact answer. Callers act in tenant "alpha"; targets live in "alpha" or "beta".
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "libs/testing/pg_test.h"
#include "tests/auth/auth_stack.h"

namespace gpuaas::auth::testing {
namespace {

using common::v1::Role;

enum Caller { kViewer, kMember, kService, kTenantAdmin, kPlatformAdmin };
constexpr Caller kCallers[] = {kViewer, kMember, kService, kTenantAdmin, kPlatformAdmin};
constexpr const char* kCallerNames[] = {"viewer", "member", "service", "tenant-admin",
                                        "platform-admin"};

// How a call must end for a caller that is not allowed: kDenied (PERMISSION_DENIED: it may see
// the target but its role is too low) or kHidden (NOT_FOUND: it may not even see the target).
enum Refusal { kDenied, kHidden };

struct Case {
  const char* method;
  std::set<Caller> allowed;
  // Callers that may not see the target in their own tenant (NOT_FOUND instead of
  // PERMISSION_DENIED).
  std::set<Caller> hidden;
  // Whether the call names a tenant's resource; if so it also runs against tenant "beta", where
  // tenant roles get NOT_FOUND and global roles the same answer as in "alpha".
  bool tenant_scoped;
  // Performs the call with `token` against a target in `tenant`; may prepare targets first
  // with the admin token.
  std::function<grpc::Status(const std::string& token, const std::string& tenant)> call;
};

class AuthPermissionsTest : public AuthStackTest {
 protected:
  void SetUp() override {
    AuthStackTest::SetUp();
    if (IsSkipped()) return;
    for (const char* tenant : {"alpha", "beta"}) {
      stack_->CreateTenant(tenant);
      const std::string t(tenant);
      target_[t] = stack_->CreateUser("target-" + t, t, common::v1::ROLE_MEMBER);
      spare_[t] = stack_->CreateUser("spare-" + t, t, common::v1::ROLE_MEMBER);
    }
    stack_->CreateUser("viewer", "alpha", common::v1::ROLE_VIEWER);
    stack_->CreateUser("member", "alpha", common::v1::ROLE_MEMBER);
    stack_->CreateUser("tadmin", "alpha", common::v1::ROLE_TENANT_ADMIN);

    stack_->CreateServiceUser("robot");

    tokens_[kViewer] = stack_->Login("viewer", AuthStack::PasswordOf("viewer"));
    tokens_[kMember] = stack_->Login("member", AuthStack::PasswordOf("member"));
    tokens_[kTenantAdmin] = stack_->Login("tadmin", AuthStack::PasswordOf("tadmin"));
    tokens_[kService] = stack_->Login("robot", AuthStack::PasswordOf("robot"), "alpha");
    tokens_[kPlatformAdmin] = stack_->Login("admin", std::string(kAdminPassword), "alpha");
  }

  std::vector<Case> Cases();

  std::map<std::string, std::string> target_;
  std::map<std::string, std::string> spare_;
  std::map<Caller, std::string> tokens_;
  int counter_ = 0;
};

std::vector<Case> AuthPermissionsTest::Cases() {
  const std::set<Caller> everyone(std::begin(kCallers), std::end(kCallers));
  const std::set<Caller> admins = {kTenantAdmin, kPlatformAdmin};
  const std::set<Caller> platform = {kPlatformAdmin};
  const std::set<Caller> none;
  const std::set<Caller> members = {kViewer, kMember};
  return {
      {"CreateTenant", platform, none, false,
       [this](const std::string& t, const std::string&) {
         pb::CreateTenantRequest r;
         r.mutable_tenant()->set_tenant_id("new-" + std::to_string(++counter_));
         pb::Tenant out;
         return stub().CreateTenant(Ctx(t).get(), r, &out);
       }},
      {"GetTenant", everyone, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::GetTenantRequest r;
         r.set_tenant_id(tenant);
         pb::Tenant out;
         return stub().GetTenant(Ctx(t).get(), r, &out);
       }},
      {"ListTenants",
       {kService, kPlatformAdmin},
       none,
       false,
       [this](const std::string& t, const std::string&) {
         pb::ListTenantsResponse out;
         return stub().ListTenants(Ctx(t).get(), {}, &out);
       }},
      {"UpdateTenant(display_name)", admins, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::UpdateTenantRequest r;
         r.mutable_tenant()->set_tenant_id(tenant);
         r.mutable_tenant()->set_display_name("Renamed " + std::to_string(++counter_));
         r.mutable_update_mask()->add_paths("display_name");
         pb::Tenant out;
         return stub().UpdateTenant(Ctx(t).get(), r, &out);
       }},
      {"UpdateTenant(quota)", platform, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::UpdateTenantRequest r;
         r.mutable_tenant()->set_tenant_id(tenant);
         r.mutable_tenant()->mutable_quota()->set_max_gpus(++counter_);
         r.mutable_update_mask()->add_paths("quota.max_gpus");
         pb::Tenant out;
         return stub().UpdateTenant(Ctx(t).get(), r, &out);
       }},
      {"CreateUser(in tenant)", admins, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::CreateUserRequest r;
         r.mutable_user()->set_user_name("made-" + std::to_string(++counter_));
         r.set_password("long enough password");
         r.set_tenant_id(tenant);
         r.set_role(common::v1::ROLE_MEMBER);
         pb::User out;
         return stub().CreateUser(Ctx(t).get(), r, &out);
       }},
      {"GetUser(other member)",
       {kTenantAdmin, kService, kPlatformAdmin},
       members,
       true,
       [this](const std::string& t, const std::string& tenant) {
         pb::GetUserRequest r;
         r.set_user_id(target_[tenant]);
         pb::User out;
         return stub().GetUser(Ctx(t).get(), r, &out);
       }},
      {"ListUsers",
       {kTenantAdmin, kService, kPlatformAdmin},
       none,
       false,
       [this](const std::string& t, const std::string&) {
         pb::ListUsersResponse out;
         return stub().ListUsers(Ctx(t).get(), {}, &out);
       }},
      {"UpdateUser(other member)", platform, members, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::UpdateUserRequest r;
         r.mutable_user()->set_user_id(target_[tenant]);
         r.mutable_user()->set_display_name("renamed");
         r.mutable_update_mask()->add_paths("display_name");
         pb::User out;
         return stub().UpdateUser(Ctx(t).get(), r, &out);
       }},
      {"DeleteUser(other member)", platform, members, true,
       [this](const std::string& t, const std::string& tenant) {
         std::string victim = stack_->CreateUser("victim-" + std::to_string(++counter_), tenant,
                                                 common::v1::ROLE_MEMBER);
         pb::DeleteUserRequest r;
         r.set_user_id(victim);
         pb::DeleteUserResponse out;
         return stub().DeleteUser(Ctx(t).get(), r, &out);
       }},
      {"AddMember", admins, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::RemoveMemberRequest rm;
         rm.set_tenant_id(tenant);
         rm.set_user_id(spare_[tenant]);
         pb::RemoveMemberResponse ignored;
         (void)stub().RemoveMember(Ctx(admin_).get(), rm, &ignored);
         pb::AddMemberRequest r;
         r.set_tenant_id(tenant);
         r.set_user_id(spare_[tenant]);
         r.set_role(common::v1::ROLE_VIEWER);
         pb::Membership out;
         return stub().AddMember(Ctx(t).get(), r, &out);
       }},
      {"UpdateMember", admins, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::UpdateMemberRequest r;
         r.set_tenant_id(tenant);
         r.set_user_id(target_[tenant]);
         r.set_role(++counter_ % 2 ? common::v1::ROLE_VIEWER : common::v1::ROLE_MEMBER);
         pb::Membership out;
         return stub().UpdateMember(Ctx(t).get(), r, &out);
       }},
      {"RemoveMember", admins, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::AddMemberRequest add;
         add.set_tenant_id(tenant);
         add.set_user_id(spare_[tenant]);
         add.set_role(common::v1::ROLE_VIEWER);
         pb::Membership ignored;
         (void)stub().AddMember(Ctx(admin_).get(), add, &ignored);
         pb::RemoveMemberRequest r;
         r.set_tenant_id(tenant);
         r.set_user_id(spare_[tenant]);
         pb::RemoveMemberResponse out;
         return stub().RemoveMember(Ctx(t).get(), r, &out);
       }},
      {"ListMembers", everyone, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::ListMembersRequest r;
         r.set_tenant_id(tenant);
         pb::ListMembersResponse out;
         return stub().ListMembers(Ctx(t).get(), r, &out);
       }},
      {"ListAuthorizedKeys", everyone, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::ListAuthorizedKeysRequest r;
         r.set_tenant_id(tenant);
         pb::ListAuthorizedKeysResponse out;
         return stub().ListAuthorizedKeys(Ctx(t).get(), r, &out);
       }},
      // A key is a way into every instance of the user's tenants: a credential like a password.
      {"UpdateUser(other member's ssh_public_keys)", platform, members, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::UpdateUserRequest r;
         r.mutable_user()->set_user_id(target_[tenant]);
         r.mutable_user()->add_ssh_public_keys(
             "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFiZJpML3nAyVZErME87CmA912oq/vHdMd3cpR4zjQtb");
         r.mutable_update_mask()->add_paths("ssh_public_keys");
         pb::User out;
         return stub().UpdateUser(Ctx(t).get(), r, &out);
       }},
      {"WhoAmI", everyone, none, false,
       [this](const std::string& t, const std::string&) {
         pb::WhoAmIResponse out;
         return stub().WhoAmI(Ctx(t).get(), {}, &out);
       }},
      {"CreateApiKey", everyone, none, false,
       [this](const std::string& t, const std::string&) {
         pb::CreateApiKeyRequest r;
         r.set_name("key");
         pb::CreateApiKeyResponse out;
         return stub().CreateApiKey(Ctx(t).get(), r, &out);
       }},
      {"ListApiKeys", everyone, none, false,
       [this](const std::string& t, const std::string&) {
         pb::ListApiKeysResponse out;
         return stub().ListApiKeys(Ctx(t).get(), {}, &out);
       }},
      {"RevokeApiKey(another member's)",
       admins,
       {kViewer, kMember, kService},
       true,
       [this](const std::string& t, const std::string& tenant) {
         std::string owner =
             stack_->Login("target-" + tenant, AuthStack::PasswordOf("target-" + tenant));
         pb::CreateApiKeyRequest c;
         c.set_name("owned by target");
         pb::CreateApiKeyResponse key;
         EXPECT_TRUE(stub().CreateApiKey(Ctx(owner).get(), c, &key).ok());
         pb::RevokeApiKeyRequest r;
         r.set_api_key_id(key.api_key().api_key_id());
         pb::ApiKey out;
         return stub().RevokeApiKey(Ctx(t).get(), r, &out);
       }},
      {"RotateSigningKey", platform, none, false,
       [this](const std::string& t, const std::string&) {
         pb::SigningKey out;
         return stub().RotateSigningKey(Ctx(t).get(), {}, &out);
       }},
      // Last: it deletes the tenants the others act in (the platform admin is the last caller).
      {"DeleteTenant", platform, none, true,
       [this](const std::string& t, const std::string& tenant) {
         pb::DeleteTenantRequest r;
         r.set_tenant_id(tenant);
         pb::DeleteTenantResponse out;
         return stub().DeleteTenant(Ctx(t).get(), r, &out);
       }},
  };
}

bool IsGlobal(Caller c) { return c == kService || c == kPlatformAdmin; }

// Each role × its own tenant ("alpha") × another tenant ("beta"), with the exact code expected:
// OK, PERMISSION_DENIED (may see, role too low) or NOT_FOUND (may not see; another tenant's).
TEST_F(AuthPermissionsTest, RoleByMethodByTenantMatrix) {
  for (const Case& c : Cases()) {
    for (Caller caller : kCallers) {
      for (const std::string tenant : {"alpha", "beta"}) {
        if (tenant == "beta" && !c.tenant_scoped) continue;
        grpc::StatusCode want = grpc::StatusCode::OK;
        if (tenant == "beta" && !IsGlobal(caller)) {
          want = grpc::StatusCode::NOT_FOUND;
        } else if (!c.allowed.count(caller)) {
          want = c.hidden.count(caller) ? grpc::StatusCode::NOT_FOUND
                                        : grpc::StatusCode::PERMISSION_DENIED;
        }
        grpc::Status s = c.call(tokens_[caller], tenant);
        EXPECT_EQ(s.error_code(), want)
            << c.method << " as " << kCallerNames[caller] << " on " << tenant << ": got "
            << s.error_code() << " " << s.error_message();
      }
    }
  }
}

// The machines' keys (a node agent's, the access proxy's, the gateway's) reach no tenant and no
// person: every method but WhoAmI is refused them, in both tenants.
TEST_F(AuthPermissionsTest, MachineKeysReachNothingButWhoAmI) {
  const std::map<std::string, std::string> machines = {
      {"node agent", stack_->ExchangeApiKey(stack_->CreateApiKey(
                         admin_, "agent", common::v1::ROLE_NODE_AGENT, "node-a"))},
      {"access proxy", stack_->ExchangeApiKey(
                           stack_->CreateApiKey(admin_, "proxy", common::v1::ROLE_ACCESS_PROXY))},
      // The gateway's key only vouches for logins' client addresses (login_attack_test).
      {"gateway",
       stack_->ExchangeApiKey(stack_->CreateApiKey(admin_, "gateway", common::v1::ROLE_GATEWAY))},
  };
  for (const Case& c : Cases()) {
    for (const auto& [name, token] : machines) {
      for (const std::string tenant : {"alpha", "beta"}) {
        const grpc::Status s = c.call(token, tenant);
        if (std::string(c.method) == "WhoAmI") {
          EXPECT_TRUE(s.ok()) << name << ": " << s.error_message();
          continue;
        }
        EXPECT_TRUE(s.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
                    s.error_code() == grpc::StatusCode::NOT_FOUND)
            << c.method << " as " << name << " on " << tenant << ": got " << s.error_code() << " "
            << s.error_message();
      }
    }
  }
}

// Only a platform admin mints a machine's key, and a node agent's is bound to one node.
TEST_F(AuthPermissionsTest, OnlyPlatformAdminsMintMachineKeys) {
  const auto create = [this](const std::string& token, Role role, const std::string& node) {
    pb::CreateApiKeyRequest r;
    r.set_name("machine");
    r.set_role(role);
    r.set_node_id(node);
    pb::CreateApiKeyResponse out;
    return stub().CreateApiKey(Ctx(token).get(), r, &out).error_code();
  };
  for (Caller caller : {kViewer, kMember, kService, kTenantAdmin}) {
    SCOPED_TRACE(kCallerNames[caller]);
    EXPECT_EQ(create(tokens_[caller], common::v1::ROLE_NODE_AGENT, "node-a"),
              grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(create(tokens_[caller], common::v1::ROLE_ACCESS_PROXY, ""),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  EXPECT_EQ(create(admin_, common::v1::ROLE_NODE_AGENT, ""), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(create(admin_, common::v1::ROLE_NODE_AGENT, "Not A Node!"),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(create(admin_, common::v1::ROLE_SERVICE, "node-a"), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(create(admin_, common::v1::ROLE_ACCESS_PROXY, "node-a"),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(create(admin_, common::v1::ROLE_NODE_AGENT, "node-a"), grpc::StatusCode::OK);
  EXPECT_EQ(create(admin_, common::v1::ROLE_ACCESS_PROXY, ""), grpc::StatusCode::OK);

  // The token carries the node; WhoAmI answers the machine role.
  const std::string token = stack_->ExchangeApiKey(
      stack_->CreateApiKey(admin_, "agent", common::v1::ROLE_NODE_AGENT, "node-a"));
  pb::WhoAmIResponse me;
  ASSERT_TRUE(stub().WhoAmI(Ctx(token).get(), {}, &me).ok());
  EXPECT_EQ(me.role(), common::v1::ROLE_NODE_AGENT);
  EXPECT_EQ(me.tenant_id(), "");
  EXPECT_EQ(me.memberships_size(), 0);  // its maker's tenants are none of its business
}

// NodeTokenService's row (issue 32): only a holder of service calls has a token minted for one
// node's agent; no tenant role, no machine key (a node mints nothing for another), no token
// minted this way. The minted token is itself refused here, as by every service.
TEST_F(AuthPermissionsTest, OnlyServiceCallersMintNodeTokens) {
  auto minter = pb::NodeTokenService::NewStub(
      grpc::CreateChannel(stack_->address(), grpc::InsecureChannelCredentials()));
  const auto mint = [&](const std::string& token, const std::string& node,
                        pb::AgentCallPurpose purpose) {
    pb::IssueNodeTokenRequest r;
    r.set_node_id(node);
    r.set_purpose(purpose);
    pb::IssueNodeTokenResponse out;
    const grpc::Status s = minter->IssueNodeToken(Ctx(token).get(), r, &out);
    return std::make_pair(s, out.access_token());
  };
  constexpr auto kLogs = pb::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS;
  const std::map<std::string, std::pair<std::string, grpc::StatusCode>> callers = {
      {"viewer", {tokens_[kViewer], grpc::StatusCode::PERMISSION_DENIED}},
      {"member", {tokens_[kMember], grpc::StatusCode::PERMISSION_DENIED}},
      {"tenant-admin", {tokens_[kTenantAdmin], grpc::StatusCode::PERMISSION_DENIED}},
      {"service", {tokens_[kService], grpc::StatusCode::OK}},
      {"platform-admin", {tokens_[kPlatformAdmin], grpc::StatusCode::OK}},
      {"node agent",
       {stack_->ExchangeApiKey(
            stack_->CreateApiKey(admin_, "agent", common::v1::ROLE_NODE_AGENT, "node-a")),
        grpc::StatusCode::PERMISSION_DENIED}},
      {"access proxy",
       {stack_->ExchangeApiKey(
            stack_->CreateApiKey(admin_, "proxy", common::v1::ROLE_ACCESS_PROXY)),
        grpc::StatusCode::PERMISSION_DENIED}},
      {"no token", {"", grpc::StatusCode::UNAUTHENTICATED}},
  };
  for (const auto& [name, caller] : callers) {
    EXPECT_EQ(mint(caller.first, "node-a", kLogs).first.error_code(), caller.second) << name;
  }
  EXPECT_EQ(mint(tokens_[kService], "Not A Node!", kLogs).first.error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      mint(tokens_[kService], "node-a", pb::AGENT_CALL_PURPOSE_UNSPECIFIED).first.error_code(),
      grpc::StatusCode::INVALID_ARGUMENT);
  const std::string minted = mint(tokens_[kService], "node-a", kLogs).second;
  ASSERT_FALSE(minted.empty());
  EXPECT_EQ(mint(minted, "node-b", kLogs).first.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  pb::WhoAmIResponse me;
  EXPECT_EQ(stub().WhoAmI(Ctx(minted).get(), {}, &me).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  pb::ListTenantsResponse tenants;
  EXPECT_EQ(stub().ListTenants(Ctx(minted).get(), {}, &tenants).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
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
