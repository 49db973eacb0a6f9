// gpuaas-proxy as a child process on a free loopback port, for end-to-end tests.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/common/child_process.h"

namespace gpuaas::proxy_testing {

inline constexpr char kDomain[] = "gpuaas.localhost";

class ProxyProcess final {
 public:
  // Starts gpuaas-proxy with a fresh cookie secret under `dir` and `flags` appended, and waits
  // until /.gpuaas/healthz answers 200 when `wait_synced` (the test fails otherwise).
  ProxyProcess(const std::filesystem::path& dir, const std::string& instance_addr,
               const std::string& auth_addr, const std::string& api_key_file,
               std::vector<std::string> flags = {}, bool wait_synced = true);
  ~ProxyProcess();

  int port() const { return port_; }
  pid_t pid() const { return process_->pid(); }
  std::string Log() const;
  // The process's resident set size in KiB (from /proc).
  long RssKib() const;

 private:
  int port_;
  std::filesystem::path log_;
  std::unique_ptr<testing::ChildProcess> process_;
};

// "<instance_id>-<port>.gpuaas.localhost".
std::string HostOf(const std::string& instance_id, int port);

}  // namespace gpuaas::proxy_testing
