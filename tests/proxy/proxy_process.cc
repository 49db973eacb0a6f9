#include "tests/proxy/proxy_process.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/time/clock.h"
#include "tests/proxy/http_client.h"

namespace gpuaas::proxy_testing {

std::string HostOf(const std::string& instance_id, int port) {
  return instance_id + "-" + std::to_string(port) + "." + kDomain;
}

ProxyProcess::ProxyProcess(const std::filesystem::path& dir, const std::string& instance_addr,
                           const std::string& auth_addr, const std::string& api_key_file,
                           std::vector<std::string> flags, bool wait_synced)
    : port_(testing::FreePort()), log_(dir / "proxy.log") {
  const std::filesystem::path secret = dir / "proxy-cookie-secret";
  std::ofstream(secret) << "a-cookie-secret-for-tests-0123456789abcdef\n";
  chmod(secret.c_str(), 0600);
  std::vector<std::string> argv = {GPUAAS_PROXY_BINARY,
                                   "--listen=127.0.0.1:" + std::to_string(port_),
                                   "--metrics-listen=127.0.0.1:0",
                                   "--instance-addr=" + instance_addr,
                                   "--auth-addr=" + auth_addr,
                                   "--api-key-file=" + api_key_file,
                                   "--cookie-secret-file=" + secret.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  process_ = std::make_unique<testing::ChildProcess>(argv, log_.string());
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline && process_->Running()) {
    HttpResponse r = HttpGet(port_, "anything", "/.gpuaas/healthz");
    if (r.status == 200 || (!wait_synced && r.status != 0)) {
      return;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  ADD_FAILURE() << "gpuaas-proxy did not become healthy:\n" << Log();
}

ProxyProcess::~ProxyProcess() { process_->Terminate(); }

std::string ProxyProcess::Log() const {
  std::ifstream in(log_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

long ProxyProcess::RssKib() const {
  std::ifstream in("/proc/" + std::to_string(process_->pid()) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stol(line.substr(6));
    }
  }
  return -1;
}

}  // namespace gpuaas::proxy_testing
