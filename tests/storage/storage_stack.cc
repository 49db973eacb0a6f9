#include "tests/storage/storage_stack.h"

#include <gtest/gtest.h>

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"
#include "services/storage/local/local_backend.h"
#include "services/storage/migrations.h"

namespace gpuaas::storage::testing {

StorageStack::StorageStack(const std::string& dsn, const std::string& auth_address,
                           const std::string& data_root, const std::string& secret_key) {
  auto pool = db::Pool::Create({.dsn = dsn, .size = 8});
  EXPECT_TRUE(pool.ok()) << pool.status();
  pool_ = *std::move(pool);
  EXPECT_OK(db::Migrate(*pool_, "storage", Migrations()));
  auto backend = local::NewLocalBackend({.data_root = data_root, .sync_writes = false});
  EXPECT_TRUE(backend.ok()) << backend.status();
  backend_ = *std::move(backend);
  backends_ = std::make_unique<Backends>(std::vector<Backend*>{backend_.get()});
  auto box = SecretBox::FromKey(secret_key);
  EXPECT_TRUE(box.ok()) << box.status();
  box_ = std::make_unique<SecretBox>(*std::move(box));
  auto auth_channel = client::OpenChannel(auth_address, {});
  EXPECT_TRUE(auth_channel.ok()) << auth_channel.status();
  quotas_ = std::make_unique<TenantQuotas>(*auth_channel);
  specs_ = std::make_unique<StorageSpecs>(*pool_, repo_, *backends_);
  storages_ = std::make_unique<Storages>(*pool_, repo_, *backends_, *quotas_);
  attachments_ = std::make_unique<Attachments>(*pool_, repo_, *backends_);
  accessors_ = std::make_unique<Accessors>(*pool_, repo_, *box_, clock_);
  directory_ = std::make_unique<TableDirectory>(*pool_, repo_, *box_);
  absl::StatusOr<int> creates = storages_->ResumeCreates();
  EXPECT_TRUE(creates.ok()) << creates.status();
  resumed_creates_ = creates.value_or(0);
  absl::StatusOr<int> deletes = storages_->ResumeDeletes();
  EXPECT_TRUE(deletes.ok()) << deletes.status();
  resumed_deletes_ = deletes.value_or(0);
  server_ = std::make_unique<rpc::Server>(
      rpc::ServerOptions{.name = "storage",
                         .listen_address = "127.0.0.1:0",
                         .metrics_address = "",
                         .worker_threads = 8},
      authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*auth_channel), clock_));
  service_ = std::make_unique<StorageServiceImpl>(
      StorageDomain{*specs_, *storages_, *attachments_, *accessors_}, server_->handler());
  server_->AddService(service_.get());
  EXPECT_OK(server_->Start());
  stub_ = pb::StorageService::NewStub(*client::OpenChannel(address(), {}));
}

StorageStack::~StorageStack() { server_->Shutdown(); }

}  // namespace gpuaas::storage::testing
