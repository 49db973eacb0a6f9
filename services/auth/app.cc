#include "services/auth/app.h"

#include "libs/authz/verifier.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"
#include "libs/service/run_app.h"
#include "services/auth/migrations.h"

namespace gpuaas::auth {

absl::StatusOr<std::unique_ptr<AuthApp>> AuthApp::Create(const AuthAppOptions& o) {
  std::unique_ptr<AuthApp> app(new AuthApp());
  GPUAAS_RETURN_IF_ERROR(service::ValidateServiceFlags(o.common));
  absl::StatusOr<std::unique_ptr<db::Pool>> pool =
      service::OpenDatabase(kIdentity, o.common, Migrations());
  if (!pool.ok()) return service::StartupError("database", pool.status());
  app->pool_ = *std::move(pool);
  app->keys_ = std::make_unique<KeyStore>(
      *app->pool_, app->repo_, app->clock_,
      KeyStoreOptions{.publish_retired_for = o.auth.access_token_ttl + absl::Minutes(1)});
  if (absl::Status s = app->keys_->Load(); !s.ok()) {
    return service::StartupError("signing keys", s);
  }
  app->guard_ = std::make_unique<LoginGuard>(*app->pool_, app->repo_, app->clock_);
  app->auth_ = std::make_unique<Auth>(*app->pool_, app->repo_, *app->keys_, *app->guard_,
                                      app->clock_, o.auth);
  if (!o.bootstrap_admin_password_file.empty()) {
    absl::StatusOr<std::string> password = ReadSecretFile(o.bootstrap_admin_password_file);
    absl::Status s = password.ok() ? app->auth_->Bootstrap(*password) : password.status();
    if (!s.ok()) return service::StartupError("bootstrap admin", s);
  }
  app->server_ = std::make_unique<rpc::Server>(
      service::ServerOptionsFor(kIdentity, o.common),
      // The local key source is rate-limited itself (see KeyStore), so an unknown kid may
      // refetch at once: a token signed right after a rotation verifies immediately.
      authz::NewJwksAuthenticator(
          app->keys_->NewLocalJwksSource(), app->clock_,
          {.issuer = o.auth.issuer, .min_refetch_interval = absl::ZeroDuration()}));
  // The fronts that may name a login's client address prove it with their own key's token.
  app->forwarders_ = authz::NewJwksAuthenticator(
      app->keys_->NewLocalJwksSource(), app->clock_,
      {.issuer = o.auth.issuer, .min_refetch_interval = absl::ZeroDuration()});
  app->clients_ = std::make_unique<ClientAddresses>(*app->forwarders_);
  app->service_ = std::make_unique<AuthServiceImpl>(*app->auth_, app->server_->handler(),
                                                    app->server_->cpu_handler(), *app->clients_);
  app->server_->AddService(app->service_.get());
  app->node_tokens_ = std::make_unique<NodeTokenServiceImpl>(*app->auth_, app->server_->handler());
  app->server_->AddService(app->node_tokens_.get());
  return app;
}

AuthApp::~AuthApp() { Close(); }

}  // namespace gpuaas::auth
