#include "libs/testing/scoped_pg_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libs/testing/shell_output.h"

#ifndef GPUAAS_PG_CLUSTER_SCRIPT
#error "GPUAAS_PG_CLUSTER_SCRIPT must name tools/pg-cluster (set by libs/testing/CMakeLists.txt)"
#endif

namespace gpuaas::testing {
namespace {

std::string ScriptPath() {
  const char* over = std::getenv("GPUAAS_PG_CLUSTER");
  return over != nullptr && *over != '\0' ? over : GPUAAS_PG_CLUSTER_SCRIPT;
}

// A port the kernel just handed out and nobody holds. Another process may still take it before
// the server binds; Create retries when the start fails.
absl::StatusOr<int> PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  if (port < 0) return absl::InternalError("could not pick a free port");
  return port;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ScopedPgCluster>> ScopedPgCluster::Create() {
  absl::Status last = absl::InternalError("not started");
  for (int attempt = 0; attempt < 5; ++attempt) {
    // Under /tmp: the postgres user must reach it and the socket path must stay short.
    char tmpl[] = "/tmp/gpuaas-scoped-pg.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
    absl::StatusOr<int> port = PickFreePort();
    if (!port.ok()) return port.status();
    std::unique_ptr<ScopedPgCluster> cluster(new ScopedPgCluster(tmpl, *port));
    last = cluster->Start();
    if (last.ok()) return cluster;
  }
  return last;
}

ScopedPgCluster::~ScopedPgCluster() {
  (void)RunScript(absl::StrCat("stop '", dir_, "'"));
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status ScopedPgCluster::Stop() {
  return RunScript(absl::StrCat("stop '", dir_, "'")).status();
}

absl::Status ScopedPgCluster::Start() {
  absl::StatusOr<std::string> out = RunScript(absl::StrCat("--fast start '", dir_, "' ", port_));
  if (!out.ok()) return out.status();
  dsn_ = std::string(absl::StripAsciiWhitespace(*out));
  return absl::OkStatus();
}

absl::Status ScopedPgCluster::Restart() {
  if (absl::Status s = Stop(); !s.ok()) return s;
  return Start();
}

absl::StatusOr<std::string> ScopedPgCluster::RunScript(const std::string& args) {
  // dir_ comes from mkdtemp and holds no quote, so single quotes suffice.
  return ShellOutput(absl::StrCat("'", ScriptPath(), "' ", args));
}

}  // namespace gpuaas::testing
