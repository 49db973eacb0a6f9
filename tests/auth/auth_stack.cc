#include "tests/auth/auth_stack.h"

#include <gtest/gtest.h>

#include "libs/authz/verifier.h"
#include "services/auth/migrations.h"

namespace gpuaas::auth::testing {

AuthStack::AuthStack(const std::string& dsn, AuthOptions options) {
  auto pool = db::Pool::Create({.dsn = dsn, .size = 4});
  EXPECT_TRUE(pool.ok()) << pool.status();
  pool_ = std::move(*pool);
  absl::Status migrated = db::Migrate(*pool_, "auth", Migrations());
  EXPECT_TRUE(migrated.ok()) << migrated;
  keys_ = std::make_unique<KeyStore>(*pool_, repo_, clock_);
  EXPECT_TRUE(keys_->Load().ok());
  throttle_ = std::make_unique<LoginThrottle>(clock_);
  auth_ = std::make_unique<Auth>(*pool_, repo_, *keys_, *throttle_, clock_, options);
  absl::Status boot = auth_->Bootstrap(std::string(kAdminPassword));
  EXPECT_TRUE(boot.ok()) << boot;
  server_ = std::make_unique<rpc::Server>(
      rpc::ServerOptions{.name = "auth",
                         .listen_address = "127.0.0.1:0",
                         .metrics_address = "",
                         .worker_threads = 4},
      authz::NewJwksAuthenticator(
          keys_->NewLocalJwksSource(), clock_,
          {.issuer = options.issuer, .min_refetch_interval = absl::ZeroDuration()}));
  service_ = std::make_unique<AuthServiceImpl>(*auth_, server_->handler(), server_->cpu_handler());
  server_->AddService(service_.get());
  absl::Status started = server_->Start();
  EXPECT_TRUE(started.ok()) << started;
  stub_ =
      pb::AuthService::NewStub(grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
}

AuthStack::~AuthStack() { server_->Shutdown(); }

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
                                    common::v1::Role role) {
  pb::CreateApiKeyRequest req;
  req.set_name(name);
  req.set_role(role);
  pb::CreateApiKeyResponse resp;
  grpc::Status s = stub_->CreateApiKey(Ctx(token).get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.secret();
}

}  // namespace gpuaas::auth::testing
