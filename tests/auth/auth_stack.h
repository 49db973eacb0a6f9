// An in-process auth service on a fresh PostgreSQL database and a free loopback port, with a
// bootstrapped platform admin, for tests that talk to it through a real gRPC stub.
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>

#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/testing/pg_test.h"
#include "services/auth/app.h"

namespace gpuaas::auth::testing {

namespace pb = ::gpuaas::auth::v1;

inline constexpr std::string_view kAdminPassword = "admin-password-for-tests";

class AuthStack final {
 public:
  // gpuaas-auth's wiring (AuthApp) on `dsn`: migrates the auth schema, bootstraps "admin" and
  // starts serving. Fails the test (EXPECT) on failure.
  explicit AuthStack(const std::string& dsn, AuthOptions options = {});
  ~AuthStack();

  pb::AuthService::Stub& stub() { return *stub_; }
  int port() const { return app_->port(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port()); }
  KeyStore& keys() { return app_->keys(); }

  // Logs in and returns the access token; fails the test when login fails.
  std::string Login(const std::string& user, const std::string& password,
                    const std::string& tenant = "");
  std::string AdminToken() { return Login("admin", std::string(kAdminPassword)); }

  // A context with a 10 s deadline and, when given, the bearer token.
  static std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token = "");

  // Creates tenant `tenant_id`, and user `user_name` (password "password-<user_name>") as a
  // member with `role`, as the admin. Returns the user id.
  std::string CreateTenant(const std::string& tenant_id);
  std::string CreateUser(const std::string& user_name, const std::string& tenant_id,
                         common::v1::Role role);
  // Adds user `user_id` to tenant `tenant_id` with `role`, as the admin.
  void AddMember(const std::string& tenant_id, const std::string& user_id, common::v1::Role role);
  // Removes user `user_id` from tenant `tenant_id`, as the admin (the test fails otherwise).
  void RemoveMember(const std::string& tenant_id, const std::string& user_id);
  // A user with the global role SERVICE and no membership, as the admin. Returns the user id.
  std::string CreateServiceUser(const std::string& user_name);
  static std::string PasswordOf(const std::string& user_name) { return "password-" + user_name; }
  // An API key made by the holder of `token` with `role` (a NODE_AGENT key bound to
  // `node_id`); returns its secret ("<api_key_id>.<secret>"), or "" after failing the test.
  std::string CreateApiKey(const std::string& token, const std::string& name, common::v1::Role role,
                           const std::string& node_id = "");
  // The access token API key `secret` exchanges for, or "" after failing the test.
  std::string ExchangeApiKey(const std::string& secret);
  // A token of `node_id`'s own agent: a ROLE_NODE_AGENT key bound to it (the admin makes one
  // per node, once), exchanged. Only these make node calls (issue 22).
  const std::string& AgentToken(const std::string& node_id);
  // A token of the access proxy's own key (ROLE_ACCESS_PROXY, made by the admin once): only it
  // makes the access calls.
  const std::string& ProxyToken();

 private:
  std::unique_ptr<AuthApp> app_;
  std::unique_ptr<pb::AuthService::Stub> stub_;
  std::string admin_token_;
  std::map<std::string, std::string> agent_tokens_;  // by node id
  std::string proxy_token_;
};

// A test with its own database and auth service, and the admin's token.
class AuthStackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<AuthStack>(dsn());
    admin_ = stack_->AdminToken();
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }
  pb::AuthService::Stub& stub() { return stack_->stub(); }
  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& t = "") { return AuthStack::Ctx(t); }

  std::unique_ptr<AuthStack> stack_;
  std::string admin_;
};

}  // namespace gpuaas::auth::testing
