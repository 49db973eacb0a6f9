// An in-process storage service (every StorageService RPC) on the test's database and a real
// local backend in a data root the test owns, verifying tokens against an in-process auth
// service and reading quotas from it, as gpuaas-storage does. Destroying a StorageStack and
// making another on the same database and data root is a restart: the new one finishes the
// creates and deletes the old one left, as main.cc does at start-up.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gpuaas/storage/v1/storage.grpc.pb.h"
#include "services/storage/app.h"

namespace gpuaas::storage::testing {

class StorageStack final {
 public:
  // gpuaas-storage's wiring (StorageApp) on `dsn`, serving gRPC and S3 on free loopback ports.
  // `secret_key` is the 32-byte sealing key (written to `data_root`.key). Fails the test
  // (EXPECT) when anything does not start. Volumes are plain directories unless
  // `volume_filesystem` says "loop-ext4" (--volume-filesystem).
  // `customize` may change the options further (the --ceph-* flags).
  StorageStack(const std::string& dsn, const std::string& auth_address,
               const std::string& data_root, const std::string& secret_key,
               const std::string& volume_filesystem = "directory",
               const std::function<void(StorageAppOptions&)>& customize = nullptr);
  ~StorageStack();

  pb::StorageService::Stub& stub() { return *stub_; }
  db::Pool& pool() { return app_->pool(); }
  Backend* local_backend() { return app_->local_backend(); }
  Backend* ceph_backend() { return app_->ceph_backend(); }
  s3::Directory& directory() { return app_->directory(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(app_->port()); }
  // What the start-up passes finished.
  int resumed_creates() const { return app_->resumed_creates(); }
  int resumed_deletes() const { return app_->resumed_deletes(); }

 private:
  std::unique_ptr<StorageApp> app_;
  std::unique_ptr<pb::StorageService::Stub> stub_;
};

}  // namespace gpuaas::storage::testing
