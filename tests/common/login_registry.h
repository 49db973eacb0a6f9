// A real OCI registry for tests (Debian's docker-registry) on a free loopback port, behind a
// login (htpasswd: kUser / kPassword), with tiny images pushed into it by umoci and skopeo. For
// the control plane's tests of pinning and registry logins; each test starts its own (seconds).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "tests/common/child_process.h"

namespace gpuaas::testing {

class LoginRegistry final {
 public:
  static constexpr char kUser[] = "acme";
  // Distinct enough to find in any log or answer that would leak it.
  static constexpr char kPassword[] = "s3cret-pw-7Hq2vX";

  // Starts it with its data and log under `dir`; the test fails if it does not come up.
  explicit LoginRegistry(std::filesystem::path dir);
  ~LoginRegistry();

  // "127.0.0.1:PORT".
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  // Pushes a new tiny image (an empty root file system; `label` in its config makes each push's
  // bytes differ) as host()/repo_tag ("acme/app:1") and returns its digest ("sha256:<hex>"), or
  // "" after failing the test.
  std::string Push(const std::string& repo_tag, const std::string& label);

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  int pushes_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace gpuaas::testing
