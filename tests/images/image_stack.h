// The platform with the image catalog, for tests that run the catalog's real images: the real
// services and agents (tests/platform), the catalog created by tools/images/create-images through
// the real gpuaasctl (what `tools/gpuaas up` seeds), the Python clients in tests/images that talk
// to a workload's port, and the AWS CLI that reads a storage over the S3 endpoint.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/images/run_command.h"
#include "tests/platform/platform_stack.h"
#include "tests/proxy/proxy_process.h"

namespace gpuaas::images_testing {

namespace instancepb = ::gpuaas::instance::v1;
using platform_testing::AgentSpec;
using platform_testing::PlatformStack;

class ImageStack final {
 public:
  // Starts the platform with `agents` on `dsn`'s database, its files under `dir`, and creates
  // the catalog. Fails the test when the programs tools/install-images put under /usr differ
  // from this checkout's (run tools/install-images) or the catalog cannot be created.
  ImageStack(const std::string& dsn, std::filesystem::path dir, std::vector<AgentSpec> agents);

  PlatformStack& platform() { return *platform_; }

  // Creates instance `instance_id` of catalog image `image` on `storage_id` as `token`'s tenant,
  // with `tmpl` (empty: all the image's defaults), and waits until it is RUNNING; returns it
  // (fails the test otherwise).
  instancepb::Instance RunImage(const std::string& token, const std::string& instance_id,
                                const std::string& image, const std::string& storage_id,
                                const instancepb::Template& tmpl = {});
  // Stops it and waits until it is STOPPED.
  void Stop(const std::string& token, const std::string& instance_id);
  // Starts it again and waits until it is RUNNING; returns it.
  instancepb::Instance Start(const std::string& token, const std::string& instance_id);

  // The flags that point a tests/images client at `port` of `instance` for `token`'s tenant,
  // through the access proxy: --base-url (the proxy), --host and the Bearer --header.
  std::vector<std::string> AccessFlags(const instancepb::Instance& instance, int port,
                                       const std::string& token) const;
  // Runs tests/images/`script` with `args`; its stdout parsed as JSON (null when it is not).
  CommandOutput RunClient(const std::string& script, const std::vector<std::string>& args,
                          nlohmann::json* json = nullptr) const;

  // The object `key` of storage `storage_id` through the S3 endpoint with the AWS CLI and a
  // fresh accessor of `token`'s tenant; fails the test when it cannot be read.
  std::string S3Get(const std::string& token, const std::string& storage_id,
                    const std::string& key);

 private:
  void CreateCatalog();
  instancepb::Instance WaitState(const std::string& token, const std::string& instance_id,
                                 instancepb::State state);

  std::filesystem::path dir_;
  std::unique_ptr<PlatformStack> platform_;
  std::unique_ptr<proxy_testing::ProxyProcess> proxy_;
  int accessors_ = 0;
};

}  // namespace gpuaas::images_testing
