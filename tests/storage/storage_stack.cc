#include "tests/storage/storage_stack.h"

#include <gtest/gtest.h>

#include <fstream>

#include "libs/client/channel.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/status_matchers.h"
#include "tests/common/loopback_flags.h"

namespace gpuaas::storage::testing {

StorageStack::StorageStack(const std::string& dsn, const std::string& auth_address,
                           const std::string& data_root, const std::string& secret_key,
                           const std::string& volume_filesystem,
                           const std::function<void(StorageAppOptions&)>& customize) {
  const std::string key_file = data_root + ".key";
  std::ofstream(key_file, std::ios::binary | std::ios::trunc) << secret_key;
  StorageAppOptions options{
      .common = gpuaas::testing::LoopbackServiceFlags(gpuaas::testing::ServiceDsn(dsn, "storage")),
      .auth_addr = auth_address,
      .data_root = data_root,
      .secret_key_file = key_file,
      .s3_listen = "127.0.0.1:0",
      .sync_writes = false,
      .volume_filesystem = volume_filesystem};
  if (customize) customize(options);
  absl::StatusOr<std::unique_ptr<StorageApp>> app = StorageApp::Create(options);
  EXPECT_TRUE(app.ok()) << app.status();
  if (!app.ok()) return;
  app_ = *std::move(app);
  EXPECT_OK(app_->Start());
  stub_ = pb::StorageService::NewStub(*client::OpenChannel(address(), {}));
}

StorageStack::~StorageStack() = default;

}  // namespace gpuaas::storage::testing
