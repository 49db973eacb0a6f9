#include "services/agent/runtime/netns_dial.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

namespace gpuaas::agent {
namespace {

absl::Status DialError(absl::string_view what, int err) {
  if (err == ECONNREFUSED) return absl::UnavailableError("connection refused");
  return absl::InternalError(absl::StrCat(what, ": ", strerror(err)));
}

// On the calling thread, which must be one that ends right after (it stays in the namespace).
absl::StatusOr<int> DialHere(int netns, int port, absl::Duration timeout) {
  if (setns(netns, CLONE_NEWNET) != 0) return DialError("setns", errno);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return DialError("socket", errno);
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
    const int err = errno;
    close(fd);
    return DialError("connect", err);
  }
  pollfd p = {.fd = fd, .events = POLLOUT, .revents = 0};
  const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  int err = 0;
  socklen_t len = sizeof err;
  if (ready == 0) {
    close(fd);
    return absl::DeadlineExceededError(absl::StrCat("connecting to port ", port, " timed out"));
  }
  if (ready < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    if (err == 0) err = errno;
    close(fd);
    return DialError("connect", err);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

absl::StatusOr<int> DialInNamespace(const std::string& netns_path, int port,
                                    absl::Duration timeout) {
  if (port < 1 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port: ", port, " is not in 1-65535"));
  }
  const int netns = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (netns < 0) {
    if (errno == ENOENT) return absl::NotFoundError("the workload's network is gone");
    return DialError(absl::StrCat("open ", netns_path), errno);
  }
  absl::StatusOr<int> socket = absl::InternalError("not dialed");
  std::thread([&] { socket = DialHere(netns, port, timeout); }).join();
  close(netns);
  return socket;
}

}  // namespace gpuaas::agent
