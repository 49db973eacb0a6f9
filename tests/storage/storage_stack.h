// An in-process storage service (every StorageService RPC) on the test's database and a real
// local backend in a data root the test owns, verifying tokens against an in-process auth
// service and reading quotas from it, as gpuaas-storage does. Destroying a StorageStack and
// making another on the same database and data root is a restart: the new one finishes the
// creates and deletes the old one left, as main.cc does at start-up.
#pragma once

#include <memory>
#include <string>

#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "libs/common/clock.h"
#include "libs/db/db.h"
#include "libs/rpc/server.h"
#include "services/storage/accessors.h"
#include "services/storage/attachments.h"
#include "services/storage/backends.h"
#include "services/storage/grpc_service.h"
#include "services/storage/secret_box.h"
#include "services/storage/specs.h"
#include "services/storage/storages.h"
#include "services/storage/table_directory.h"
#include "services/storage/tenant_quotas.h"

namespace gpuaas::storage::testing {

class StorageStack final {
 public:
  // `secret_key` is the 32-byte sealing key. Fails the test (EXPECT) when anything does not
  // start.
  StorageStack(const std::string& dsn, const std::string& auth_address,
               const std::string& data_root, const std::string& secret_key);
  ~StorageStack();

  pb::StorageService::Stub& stub() { return *stub_; }
  db::Pool& pool() { return *pool_; }
  Backend& backend() { return *backend_; }
  s3::Directory& directory() { return *directory_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  // What the start-up passes finished.
  int resumed_creates() const { return resumed_creates_; }
  int resumed_deletes() const { return resumed_deletes_; }

 private:
  SystemClock clock_;
  std::unique_ptr<db::Pool> pool_;
  Repository repo_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Backends> backends_;
  std::unique_ptr<SecretBox> box_;
  std::unique_ptr<TenantQuotas> quotas_;
  std::unique_ptr<StorageSpecs> specs_;
  std::unique_ptr<Storages> storages_;
  std::unique_ptr<Attachments> attachments_;
  std::unique_ptr<Accessors> accessors_;
  std::unique_ptr<TableDirectory> directory_;
  std::unique_ptr<rpc::Server> server_;
  std::unique_ptr<StorageServiceImpl> service_;
  std::unique_ptr<pb::StorageService::Stub> stub_;
  int resumed_creates_ = 0;
  int resumed_deletes_ = 0;
};

}  // namespace gpuaas::storage::testing
