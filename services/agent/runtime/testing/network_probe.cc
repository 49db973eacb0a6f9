#include "services/agent/runtime/testing/network_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuaas::agent::testing {
namespace {

bool ToSockaddr(const std::string& address, int port, sockaddr_storage& out, socklen_t& len) {
  out = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v4;
    return true;
  }
  if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v6;
    return true;
  }
  return false;
}

bool WaitFor(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  return poll(&p, 1, timeout_ms) > 0;
}

// A non-blocking connect; returns the socket (>= 0) once connected, or the Reach it came to.
int Connect(const std::string& address, int port, int timeout_ms, Reach& reach) {
  sockaddr_storage addr;
  socklen_t len;
  if (!ToSockaddr(address, port, addr, len)) {
    reach = Reach::kOtherError;
    return -1;
  }
  const int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    reach = Reach::kOtherError;
    return -1;
  }
  int error = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    if (errno != EINPROGRESS) {
      error = errno;
    } else if (!WaitFor(fd, POLLOUT, timeout_ms)) {
      error = ETIMEDOUT;
    } else {
      socklen_t size = sizeof error;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
    }
  }
  if (error == 0) {
    reach = Reach::kConnected;
    return fd;
  }
  close(fd);
  reach = error == ECONNREFUSED || error == ECONNRESET ? Reach::kRefused
          : error == ETIMEDOUT                         ? Reach::kTimedOut
                                                       : Reach::kOtherError;
  return -1;
}

}  // namespace

std::string ReachName(Reach reach) {
  switch (reach) {
    case Reach::kConnected:
      return "connected";
    case Reach::kRefused:
      return "refused";
    case Reach::kTimedOut:
      return "timed out";
    case Reach::kOtherError:
      return "failed";
  }
  return "?";
}

Reach ConnectWithin(const std::string& address, int port, int timeout_ms) {
  Reach reach;
  const int fd = Connect(address, port, timeout_ms, reach);
  if (fd >= 0) close(fd);
  return reach;
}

absl::StatusOr<std::string> ConnectAndRead(const std::string& address, int port, int timeout_ms,
                                           const std::function<void()>& before_read) {
  Reach reach;
  const int fd = Connect(address, port, timeout_ms, reach);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrFormat("connect %s port %d: %s", address, port, ReachName(reach)));
  }
  // The client speaks first, as HTTP's do.
  const bool sent = write(fd, "ping", 4) == 4;
  if (before_read) before_read();
  std::string got;
  char buf[256];
  while (WaitFor(fd, POLLIN, timeout_ms)) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (!sent) return absl::InternalError("could not send to the peer");
  return got;
}

absl::StatusOr<std::string> RunAsWorkload(const std::string& netns, uid_t uid,
                                          const std::function<std::string()>& probe) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  const pid_t child = fork();
  if (child < 0) return absl::InternalError("fork");
  if (child == 0) {
    close(out[0]);
    const int ns = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
    const gid_t gid = static_cast<gid_t>(uid);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0 || setgroups(0, nullptr) != 0 ||
        setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0 ||
        unshare(CLONE_NEWUSER) != 0) {
      const std::string error = absl::StrCat("could not become a workload: ", strerror(errno));
      (void)!write(out[1], error.data(), error.size());
      _exit(2);
    }
    const std::string result = probe();
    (void)!write(out[1], result.data(), result.size());
    _exit(0);
  }
  close(out[1]);
  std::string result;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    result.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int wstatus = 0;
  while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::InternalError(absl::StrCat("workload process failed: ", result));
  }
  return result;
}

absl::StatusOr<Listener> Listener::Open(const std::string& netns, const std::string& address,
                                        int port) {
  sockaddr_storage addr;
  socklen_t len;
  if (!ToSockaddr(address, port, addr, len)) return absl::InvalidArgumentError(address);
  int fd = -1;
  std::string error;
  // A thread of its own: setns moves only the calling thread, and the socket stays in the
  // namespace it was made in.
  std::thread([&] {
    if (!netns.empty()) {
      const int ns = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
        error = absl::StrCat("join ", netns, ": ", strerror(errno));
        return;
      }
      close(ns);
    }
    fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 16) != 0) {
      error = absl::StrFormat("listen on %s port %d: %s", address, port, strerror(errno));
    }
  }).join();
  if (!error.empty()) {
    if (fd >= 0) close(fd);
    return absl::InternalError(error);
  }
  sockaddr_storage bound;
  socklen_t bound_len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  const int bound_port =
      ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                       : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return Listener(fd, bound_port);
}

Listener::~Listener() {
  if (fd_ >= 0) close(fd_);
}

absl::Status Listener::AcceptAndReply(const std::string& reply, int timeout_ms) {
  if (!WaitFor(fd_, POLLIN, timeout_ms)) return absl::DeadlineExceededError("nobody connected");
  const int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn < 0) return absl::InternalError(strerror(errno));
  char request[64];
  if (!WaitFor(conn, POLLIN, timeout_ms) || read(conn, request, sizeof request) <= 0) {
    close(conn);
    return absl::DeadlineExceededError("the client sent nothing");
  }
  const bool written = write(conn, reply.data(), reply.size()) == ssize_t(reply.size());
  close(conn);
  return written ? absl::OkStatus() : absl::InternalError("write");
}

int FreePort() {
  absl::StatusOr<Listener> listener = Listener::Open("", "0.0.0.0", 0);
  return listener.ok() ? listener->port() : 0;
}

std::vector<std::string> NodeAddresses() {
  std::vector<std::string> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return addresses;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    // Workloads' and tests' links come and go with the tests running beside this one.
    if (std::string_view(i->ifa_name).substr(0, 3) == "gpw" ||
        std::string_view(i->ifa_name).substr(0, 3) == "gpo") {
      continue;
    }
    char text[INET6_ADDRSTRLEN];
    if (i->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      const in6_addr& a = reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(&a)) continue;
      inet_ntop(AF_INET6, &a, text, sizeof text);
    } else {
      continue;
    }
    addresses.push_back(text);
  }
  freeifaddrs(list);
  return addresses;
}

absl::Status Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status != 0) {
    return absl::InternalError(absl::StrFormat("`%s` exited with %d", command, status));
  }
  return absl::OkStatus();
}

absl::StatusOr<Outside> Outside::Make(OutsideRange range) {
  // A /30 of the range per pid and per outside of the process: parallel tests never share one,
  // nor does a test with the one before it (deleting a namespace finishes in the background).
  static std::atomic<uint32_t> made{0};
  const uint32_t n = made++ % 8;
  const auto [network, pids] =
      range == OutsideRange::kLan         ? std::pair{(10u << 24) | (224u << 16), 4096u}
      : range == OutsideRange::kLinkLocal ? std::pair{(169u << 24) | (254u << 16), 2048u}
                                          : std::pair{(198u << 24) | (18u << 16), 4096u};
  const uint32_t block = (static_cast<uint32_t>(getpid()) % pids) * 8 + n;
  const uint32_t base = network | (block << 2);
  auto dotted = [](uint32_t a) {
    return absl::StrFormat("%d.%d.%d.%d", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
  };
  const std::string id = absl::StrCat(getpid(), "-", n);
  Outside outside(absl::StrCat("gpuaas-out-", id), absl::StrCat("gpo", id), dotted(base + 2),
                  dotted(base + 1));
  absl::Status made_it = Shell(absl::StrFormat(
      "set -e; ip netns add %1$s; ip link add %2$s type veth peer name gpi%3$s netns %1$s; "
      "ip addr add %4$s/30 dev %2$s; ip link set %2$s up; "
      "ip -n %1$s addr add %5$s/30 dev gpi%3$s; ip -n %1$s link set gpi%3$s up; "
      "ip -n %1$s link set lo up",
      outside.name_, outside.link_, id, outside.node_address_, outside.address_));
  if (!made_it.ok()) return made_it;
  return outside;
}

Outside::Outside(Outside&& other) noexcept
    : name_(std::move(other.name_)),
      link_(std::move(other.link_)),
      address_(std::move(other.address_)),
      node_address_(std::move(other.node_address_)) {
  other.name_.clear();
}

std::string Outside::network() const {
  in_addr a{};
  inet_pton(AF_INET, address_.c_str(), &a);
  a.s_addr = htonl(ntohl(a.s_addr) & ~3u);
  char text[INET_ADDRSTRLEN];
  return absl::StrCat(inet_ntop(AF_INET, &a, text, sizeof text), "/30");
}

Outside::~Outside() {
  if (name_.empty()) return;
  // The link first: deleting it is immediate, a namespace's end goes in the background.
  Shell(absl::StrCat("ip link del ", link_, "; ip netns del ", name_)).IgnoreError();
}

}  // namespace gpuaas::agent::testing
