// An HTTP/1.1 server for handlers that block (the S3 endpoint, the REST gateway): Boost.Beast
// parses requests and serializes responses (as in the access proxy), over blocking sockets served
// by a fixed pool of threads, one request per thread at a time, because the handlers block (file
// I/O, fsync, hashing) and pull request bodies as they store them. A worker takes a connection only
// once its request head is whole: the TLS handshake, the wait between requests and the head's
// arrival happen on the header gate's one thread (header_gate.h), so slow or stalled clients hold
// no worker.
//
// Per connection: TCP_NODELAY; the handshake and the whole first head within header_timeout;
// 10 s idle between requests, then header_timeout for the head; every body read bounded by
// body_idle_timeout and every write by 60 s; at most 1000 requests. At most
// max_connections_per_client open connections per client address; beyond that a connection is
// answered 503 SlowDown and closed. Bodies stream both ways 64 KiB at a time. "Expect:
// 100-continue" (in any case: Go's SDK, so rclone, sends "100-Continue") is answered before the
// handler runs. A connection closes after a response when the handler left its request body
// unread (the rest must not be parsed as the next request) or answered "Connection: close".
// Bodies are passed as sent: nothing is gunzipped or compressed.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/http/connection_limits.h"
#include "libs/http/header_gate.h"
#include "libs/http/http_message.h"

namespace gpuaas::http {

// Serves one request. `body` is null for a method that carries none (GET, HEAD, OPTIONS);
// otherwise it reads the body (possibly empty). Runs on a connection's thread; may block.
using HttpHandler =
    std::function<void(const HttpRequest& req, HttpResponse& res, const ContentReader* body)>;

struct HttpTransportOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port
  int threads = 64;
  // Both set: every connection speaks TLS (1.2 and up) with this certificate chain and key.
  std::string tls_cert_file;
  std::string tls_key_file;
  ConnectionLimits limits;
  // SO_REUSEPORT: several processes (a service's replicas on one host) accept on one port, the
  // kernel spreading new connections among them; one that dies resets only what it held. Off,
  // a second process on the port is an error, as it must be for everything else.
  bool share_port = false;
  std::string name = "http";  // in log lines and errors
  // The body of the 503 a connection over its address's cap gets, unread, and its type.
  std::string over_cap_body = "Too many connections from your address";
  std::string over_cap_content_type = "text/plain";
};

// "host:port" (a flag's value) split. INVALID_ARGUMENT naming `flag`.
absl::Status ParseListen(const std::string& flag, const std::string& listen, std::string& host,
                         int& port);

class HttpTransport final {
 public:
  HttpTransport(HttpTransportOptions options, HttpHandler handler);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Loads the TLS files, binds and starts serving. UNAVAILABLE: the address cannot be bound;
  // INVALID_ARGUMENT: the TLS files cannot be loaded, or only one is set.
  absl::Status Start();
  // The bound port (after Start).
  int port() const { return port_; }
  bool tls() const { return tls_ != nullptr; }
  // Stops accepting, lets each request in progress finish (a streamed response is cut), closes
  // every connection and joins the threads. Idempotent.
  void Stop();

 private:
  struct Listener;

  void AcceptLoop();
  void WorkerLoop();
  void ServeConnection(std::unique_ptr<Connection> conn);
  // Closes `conn` and releases its place under the per-client cap.
  void Close(std::unique_ptr<Connection> conn);

  HttpTransportOptions options_;
  HttpHandler handler_;
  std::string too_many_connections_;  // the whole over-cap answer, head and body
  SSL_CTX* tls_ = nullptr;            // owned
  std::unique_ptr<Listener> listener_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
  std::unique_ptr<HeaderGate> gate_;
  absl::Mutex mu_;
  std::deque<std::unique_ptr<Connection>> pending_ ABSL_GUARDED_BY(mu_);   // heads whole
  absl::flat_hash_map<std::string, int> per_client_ ABSL_GUARDED_BY(mu_);  // open connections
};

}  // namespace gpuaas::http
