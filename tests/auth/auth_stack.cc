#include "tests/auth/auth_stack.h"

#include <gtest/gtest.h>

#include "libs/testing/service_dsn.h"
#include "libs/testing/status_matchers.h"
#include "tests/common/loopback_flags.h"

namespace gpuaas::auth::testing {

AuthStack::AuthStack(const std::string& dsn, AuthOptions options) {
  absl::StatusOr<std::unique_ptr<AuthApp>> app = AuthApp::Create(
      {.common = gpuaas::testing::LoopbackServiceFlags(gpuaas::testing::ServiceDsn(dsn, "auth"),
                                                       /*pool_size=*/4, /*workers=*/4),
       .auth = std::move(options)});
  EXPECT_TRUE(app.ok()) << app.status();
  if (!app.ok()) return;
  app_ = *std::move(app);
  EXPECT_OK(app_->auth().Bootstrap(std::string(kAdminPassword)));
  EXPECT_OK(app_->Start());
  stub_ =
      pb::AuthService::NewStub(grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
}

AuthStack::~AuthStack() = default;

std::unique_ptr<grpc::ClientContext> AuthStack::Ctx(const std::string& token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

std::string AuthStack::Login(const std::string& user, const std::string& password,
                             const std::string& tenant) {
  pb::LoginRequest req;
  req.set_user_name(user);
  req.set_password(password);
  req.set_tenant_id(tenant);
  pb::LoginResponse resp;
  grpc::Status s = stub_->Login(Ctx().get(), req, &resp);
  EXPECT_TRUE(s.ok()) << user << ": " << s.error_message();
  return resp.access_token();
}

const std::string& AuthStack::AgentToken(const std::string& node_id) {
  std::string& token = agent_tokens_[node_id];
  if (admin_token_.empty()) admin_token_ = AdminToken();
  if (token.empty()) {
    token = ExchangeApiKey(
        CreateApiKey(admin_token_, "agent " + node_id, common::v1::ROLE_NODE_AGENT, node_id));
  }
  return token;
}

const std::string& AuthStack::ProxyToken() {
  if (admin_token_.empty()) admin_token_ = AdminToken();
  if (proxy_token_.empty()) {
    proxy_token_ =
        ExchangeApiKey(CreateApiKey(admin_token_, "proxy", common::v1::ROLE_ACCESS_PROXY));
  }
  return proxy_token_;
}

std::string AuthStack::CreateTenant(const std::string& tenant_id) {
  if (admin_token_.empty()) admin_token_ = AdminToken();
  pb::CreateTenantRequest req;
  req.mutable_tenant()->set_tenant_id(tenant_id);
  req.mutable_tenant()->set_display_name("Tenant " + tenant_id);
  req.mutable_tenant()->mutable_quota()->set_max_gpus(8);
  pb::Tenant resp;
  grpc::Status s = stub_->CreateTenant(Ctx(admin_token_).get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.tenant_id();
}

std::string AuthStack::CreateUser(const std::string& user_name, const std::string& tenant_id,
                                  common::v1::Role role) {
  if (admin_token_.empty()) admin_token_ = AdminToken();
  pb::CreateUserRequest req;
  req.mutable_user()->set_user_name(user_name);
  req.set_password(PasswordOf(user_name));
  req.set_tenant_id(tenant_id);
  req.set_role(role);
  pb::User resp;
  grpc::Status s = stub_->CreateUser(Ctx(admin_token_).get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.user_id();
}

void AuthStack::AddMember(const std::string& tenant_id, const std::string& user_id,
                          common::v1::Role role) {
  if (admin_token_.empty()) admin_token_ = AdminToken();
  pb::AddMemberRequest req;
  req.set_tenant_id(tenant_id);
  req.set_user_id(user_id);
  req.set_role(role);
  pb::Membership resp;
  grpc::Status s = stub_->AddMember(Ctx(admin_token_).get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

void AuthStack::RemoveMember(const std::string& tenant_id, const std::string& user_id) {
  if (admin_token_.empty()) admin_token_ = AdminToken();
  pb::RemoveMemberRequest req;
  req.set_tenant_id(tenant_id);
  req.set_user_id(user_id);
  pb::RemoveMemberResponse resp;
  grpc::Status s = stub_->RemoveMember(Ctx(admin_token_).get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

std::string AuthStack::CreateServiceUser(const std::string& user_name) {
  if (admin_token_.empty()) admin_token_ = AdminToken();
  pb::CreateUserRequest req;
  req.mutable_user()->set_user_name(user_name);
  req.mutable_user()->set_global_role(common::v1::ROLE_SERVICE);
  req.set_password(PasswordOf(user_name));
  pb::User resp;
  grpc::Status s = stub_->CreateUser(Ctx(admin_token_).get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.user_id();
}

std::string AuthStack::CreateApiKey(const std::string& token, const std::string& name,
                                    common::v1::Role role, const std::string& node_id) {
  pb::CreateApiKeyRequest req;
  req.set_name(name);
  req.set_role(role);
  req.set_node_id(node_id);
  pb::CreateApiKeyResponse resp;
  grpc::Status s = stub_->CreateApiKey(Ctx(token).get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.secret();
}

std::string AuthStack::ExchangeApiKey(const std::string& secret) {
  pb::ExchangeApiKeyRequest req;
  req.set_secret(secret);
  pb::ExchangeApiKeyResponse resp;
  grpc::Status s = stub_->ExchangeApiKey(Ctx().get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.access_token();
}

}  // namespace gpuaas::auth::testing
