#include "libs/http/header_gate.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace gpuaas::http {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int kGatePollMs = 100;
constexpr size_t kGateReadPiece = 16 * 1024;

void SetGateNonBlocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

// A blank line ends the head; blank lines before the request line are not it (a worker must never
// be handed "\r\n\r\nGET ..." and then wait on the rest).
bool HeadIsWhole(const std::string& head) {
  size_t start = head.find_first_not_of("\r\n");
  return start != std::string::npos && head.find("\r\n\r\n", start) != std::string::npos;
}

}  // namespace

struct HeaderGate::Waiting {
  std::unique_ptr<Connection> conn;
  SteadyClock::time_point deadline;
  bool head_started = false;  // a byte of the next head arrived (a handshake counts)
  bool want_write = false;
};

HeaderGate::HeaderGate(HeaderGateLimits limits, Handoff ready, Handoff drop)
    : limits_(limits), ready_(std::move(ready)), drop_(std::move(drop)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

HeaderGate::~HeaderGate() {
  Stop();
  ::close(wake_fd_);
}

void HeaderGate::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void HeaderGate::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) {
    thread_.join();
  }
}

void HeaderGate::Admit(std::unique_ptr<Connection> conn) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      admitted_.push_back(std::move(conn));
    }
  }
  if (conn) {  // stopping: not taken
    drop_(std::move(conn));
    return;
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

HeaderGate::Progress HeaderGate::Advance(Waiting& w) {
  Connection& c = *w.conn;
  if (c.ssl && !c.handshaken) {
    int rc = SSL_accept(c.ssl.get());
    if (rc != 1) {
      int err = SSL_get_error(c.ssl.get(), rc);
      if (err == SSL_ERROR_WANT_READ) return Progress::kWaitRead;
      if (err == SSL_ERROR_WANT_WRITE) return Progress::kWaitWrite;
      return Progress::kDrop;
    }
    c.handshaken = true;
  }
  char piece[kGateReadPiece];
  while (!HeadIsWhole(c.head) && c.head.size() <= limits_.header_limit) {
    ssize_t n;
    if (c.ssl) {
      int rc = SSL_read(c.ssl.get(), piece, sizeof(piece));
      if (rc <= 0) {
        int err = SSL_get_error(c.ssl.get(), rc);
        if (err == SSL_ERROR_WANT_READ) return Progress::kWaitRead;
        if (err == SSL_ERROR_WANT_WRITE) return Progress::kWaitWrite;
        return Progress::kDrop;
      }
      n = rc;
    } else {
      do {
        n = ::recv(c.fd, piece, sizeof(piece), 0);
      } while (n < 0 && errno == EINTR);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Progress::kWaitRead;
      if (n <= 0) return Progress::kDrop;
    }
    if (!w.head_started) {
      w.head_started = true;
      w.deadline = SteadyClock::now() + limits_.header_timeout;
    }
    c.head.append(piece, static_cast<size_t>(n));
  }
  return Progress::kReady;
}

void HeaderGate::Loop() {
  std::vector<Waiting> waiting;
  std::vector<pollfd> fds;
  for (;;) {
    std::vector<std::unique_ptr<Connection>> admitted;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) {
        break;
      }
      admitted.swap(admitted_);
    }
    // A connection just admitted is tried at once: a kept-alive one may hold its next head
    // already (pipelined, or decrypted and kept inside TLS where poll cannot see it).
    const size_t first_admitted = waiting.size();
    const auto now = SteadyClock::now();
    for (auto& conn : admitted) {
      SetGateNonBlocking(conn->fd, true);
      const bool is_new = conn->served == 0;
      waiting.push_back(Waiting{std::move(conn),
                                now + (is_new ? limits_.header_timeout : limits_.idle_timeout),
                                /*head_started=*/is_new});
    }
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    for (const Waiting& w : waiting) {
      fds.push_back({w.conn->fd, static_cast<short>(w.want_write ? POLLOUT : POLLIN), 0});
    }
    if (admitted.empty() && ::poll(fds.data(), fds.size(), kGatePollMs) < 0 && errno != EINTR) {
      break;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof(count));
    }
    const auto after = SteadyClock::now();
    std::vector<Waiting> still;
    still.reserve(waiting.size());
    for (size_t i = 0; i < waiting.size(); ++i) {
      Waiting& w = waiting[i];
      const bool due = i >= first_admitted || fds[i + 1].revents != 0;
      Progress p = due ? Advance(w) : (w.want_write ? Progress::kWaitWrite : Progress::kWaitRead);
      if (p == Progress::kReady) {
        SetGateNonBlocking(w.conn->fd, false);
        ready_(std::move(w.conn));
      } else if (p == Progress::kDrop || after >= w.deadline) {
        drop_(std::move(w.conn));
      } else {
        w.want_write = p == Progress::kWaitWrite;
        still.push_back(std::move(w));
      }
    }
    waiting.swap(still);
  }
  for (Waiting& w : waiting) {
    drop_(std::move(w.conn));
  }
  std::vector<std::unique_ptr<Connection>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(admitted_);
  }
  for (auto& conn : left) {
    drop_(std::move(conn));
  }
}

}  // namespace gpuaas::http
