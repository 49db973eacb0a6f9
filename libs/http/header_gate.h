// Where an HttpTransport's connections wait for a request head, off the worker threads: one
// thread polls every connection that is handshaking TLS, idle between requests or sending a
// request head, reads what arrives without blocking, and hands a connection to the workers only
// once its whole head is here. So a client that connects and stalls, or sends half a head and
// stalls (slowloris), holds a file descriptor until its deadline, never a worker.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::http {

struct SslDeleter {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

// One client connection, moved between the gate and a worker.
struct Connection {
  int fd = -1;
  std::unique_ptr<SSL, SslDeleter> ssl;  // null: plain HTTP
  bool handshaken = false;               // TLS only
  std::string client;                    // the peer's address, for per-client caps
  std::string head;                      // bytes read and not yet parsed: the next request's start
  int served = 0;                        // requests answered on it
};

struct HeaderGateLimits {
  // From accept to the whole first head (TLS handshake included), and from a head's first byte
  // to its last.
  std::chrono::milliseconds header_timeout{15'000};
  // Between requests on a kept-alive connection, until the next head's first byte.
  std::chrono::milliseconds idle_timeout{10'000};
  // A head longer than this goes to a worker as it is (the parser answers 431).
  size_t header_limit = 64 * 1024;
};

class HeaderGate final {
 public:
  using Handoff = std::function<void(std::unique_ptr<Connection>)>;
  // `ready` takes a connection whose head arrived; `drop` one that failed or ran out of time.
  // Both run on the gate's thread and must not block.
  HeaderGate(HeaderGateLimits limits, Handoff ready, Handoff drop);
  ~HeaderGate();
  HeaderGate(const HeaderGate&) = delete;
  HeaderGate& operator=(const HeaderGate&) = delete;

  void Start();
  // Drops every connection still waiting and joins. Idempotent.
  void Stop();
  // Waits for `conn`'s next request head: a new one (served == 0) within header_timeout, a
  // kept-alive one within idle_timeout and then header_timeout. After Stop it is dropped.
  void Admit(std::unique_ptr<Connection> conn);

 private:
  struct Waiting;
  enum class Progress { kWaitRead, kWaitWrite, kReady, kDrop };

  void Loop();
  Progress Advance(Waiting& w);

  HeaderGateLimits limits_;
  Handoff ready_;
  Handoff drop_;
  int wake_fd_ = -1;  // eventfd: Admit and Stop interrupt the poll
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Connection>> admitted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::http
