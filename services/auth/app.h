// gpuaas-auth wired: the database, the signing keys, the domain and AuthService on one
// rpc::Server. main.cc runs it until a signal; tests start it on port 0 and stop it.
//
//   GPUAAS_ASSIGN_OR_RETURN(auto app, AuthApp::Create(options));
//   GPUAAS_RETURN_IF_ERROR(app->Start());   // or app->Run() to serve until a signal
//   ... app->port() ...
//   app->Stop();
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libs/common/clock.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "libs/service/service_app.h"
#include "libs/service/service_flags.h"
#include "services/auth/auth.h"
#include "services/auth/client_address.h"
#include "services/auth/grpc_service.h"
#include "services/auth/key_store.h"
#include "services/auth/login_guard.h"
#include "services/auth/node_token_service.h"

namespace gpuaas::auth {

// What main.cc reads from its flags.
struct AuthAppOptions {
  service::ServiceFlags common;
  // Creates user "admin" with the password in this file on an empty schema ("" = none).
  std::string bootstrap_admin_password_file;
  AuthOptions auth;  // issuer and token lifetimes
};

class AuthApp final : public service::ServiceApp {
 public:
  static constexpr service::ServiceIdentity kIdentity{
      .name = "auth", .grpc_port = 17051, .metrics_port = 9101};

  // Opens and migrates the database, loads the signing keys, bootstraps the admin, and
  // registers AuthService and NodeTokenService. Serves nothing yet. Blocks while PostgreSQL comes
  // up. Errors: INVALID_ARGUMENT naming the flag for bad configuration; the database's or key
  // store's error otherwise.
  static absl::StatusOr<std::unique_ptr<AuthApp>> Create(const AuthAppOptions& options);
  // Close().
  ~AuthApp() override;

  Auth& auth() { return *auth_; }
  KeyStore& keys() { return *keys_; }

 private:
  AuthApp() : ServiceApp(kIdentity) {}

  SystemClock clock_;
  std::unique_ptr<db::Pool> pool_;
  Repository repo_;
  std::unique_ptr<KeyStore> keys_;
  std::unique_ptr<LoginGuard> guard_;
  std::unique_ptr<authz::Authenticator> forwarders_;
  std::unique_ptr<ClientAddresses> clients_;
  std::unique_ptr<Auth> auth_;
  std::unique_ptr<AuthServiceImpl> service_;
  std::unique_ptr<NodeTokenServiceImpl> node_tokens_;
};

}  // namespace gpuaas::auth
