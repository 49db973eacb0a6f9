#include "services/agent/runtime/probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/time/clock.h"

namespace gpuaas::agent {
namespace {

int Remaining(absl::Time deadline) {
  return static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
}

// A connected socket, or -1 (also for an address that is not IPv4).
int Connect(const std::string& address, int port, absl::Time deadline) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) return -1;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) {
      close(fd);
      return -1;
    }
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof error;
    if (poll(&p, 1, Remaining(deadline)) != 1 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

}  // namespace

bool ProbeTcp(const std::string& address, int port, absl::Duration timeout) {
  const int fd = Connect(address, port, absl::Now() + timeout);
  if (fd < 0) return false;
  close(fd);
  return true;
}

bool ProbeHttp(const std::string& address, int port, const std::string& path,
               absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const int fd = Connect(address, port, deadline);
  if (fd < 0) return false;
  const std::string request = "GET " + (path.empty() ? std::string("/") : path) +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: gpuaas-probe\r\n"
                              "Connection: close\r\n\r\n";
  bool ok = false;
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(request.size())) {
    std::string head;
    char buf[256];
    while (head.size() < 12) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, Remaining(deadline)) != 1) break;
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      head.append(buf, static_cast<size_t>(n));
    }
    // "HTTP/1.1 200 ..."
    if (head.size() >= 12 && head.compare(0, 5, "HTTP/") == 0) {
      const int status = std::atoi(head.c_str() + 9);
      ok = status >= 200 && status < 400;
    }
  }
  close(fd);
  return ok;
}

}  // namespace gpuaas::agent
