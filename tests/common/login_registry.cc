#include "tests/common/login_registry.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace gpuaas::testing {
namespace {

// bcrypt of kPassword at cost 4 (the registry checks it on every request: a cheap cost).
constexpr char kPasswordHash[] = "$2b$04$xT9ixiZaSGkunAUpyoSb.e0GM/oybH/XL9gd1ZnUhR8J.HEEp45sW";

bool Accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Runs `command` by the shell; its output, and whether it exited 0.
bool Sh(const std::string& command, std::string* out = nullptr) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return false;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int status = ::pclose(p);
  if (out != nullptr) *out = text;
  if (status != 0) ADD_FAILURE() << command << ":\n" << text;
  return status == 0;
}

}  // namespace

LoginRegistry::LoginRegistry(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::filesystem::create_directories(dir_ / "data");
  port_ = FreePort();
  std::ofstream(dir_ / "htpasswd") << kUser << ":" << kPasswordHash << "\n";
  std::ofstream(dir_ / "config.yml")
      << "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: "
      << (dir_ / "data").string() << "\nhttp:\n  addr: 127.0.0.1:" << port_
      << "\n  secret: test\nauth:\n  htpasswd:\n    realm: gpuaas-test\n    path: "
      << (dir_ / "htpasswd").string() << "\n";
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{"/usr/bin/docker-registry", "serve", (dir_ / "config.yml").string()},
      (dir_ / "registry.log").string());
  for (int i = 0; i < 200 && !Accepts(port_); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!Accepts(port_)) ADD_FAILURE() << "docker-registry did not listen on " << host();
}

LoginRegistry::~LoginRegistry() = default;

std::string LoginRegistry::Push(const std::string& repo_tag, const std::string& label) {
  const std::string layout = (dir_ / ("oci-" + std::to_string(++pushes_))).string();
  const std::string login = std::string(kUser) + ":" + kPassword;
  const std::string ref = "docker://" + host() + "/" + repo_tag;
  if (!Sh("umoci init --layout " + layout) || !Sh("umoci new --image " + layout + ":1") ||
      !Sh("umoci config --image " + layout + ":1 --config.label=gpuaas.test=" + label) ||
      !Sh("skopeo copy --quiet --dest-tls-verify=false --dest-creds " + login + " oci:" + layout +
          ":1 " + ref)) {
    return "";
  }
  std::string digest;
  if (!Sh("skopeo inspect --tls-verify=false --creds " + login + " --format '{{.Digest}}' " + ref,
          &digest)) {
    return "";
  }
  while (!digest.empty() && (digest.back() == '\n' || digest.back() == ' ')) digest.pop_back();
  return digest;
}

}  // namespace gpuaas::testing
