// gpuaas-proxy's HTTP side: serves http(s)://<instance_id>-<port>.<access domain>/ by
// forwarding to the workload's host port, after deciding who may reach it (access_decision.h).
// Boost.Beast over Asio C++20 coroutines, one event loop per I/O thread, each connection on one
// of them for its life (as HAProxy and nginx do): no strands, no hand-offs between threads.
// Thousands of idle keep-alive or WebSocket connections cost a coroutine frame and two buffers
// each, not a thread.
//
// Everything a request needs is in memory (routes, keys, the cookie key); only one-time link
// redemptions and a cookie's re-check (once per --grant-recheck) call out, on a separate small
// thread pool so a slow RPC holds up no I/O thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "services/proxy/access_activity.h"
#include "services/proxy/access_client.h"
#include "services/proxy/access_cookie.h"
#include "services/proxy/proxy_metrics.h"
#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

struct ConnectionLimitOptions {
  int max_connections = 10000;
  int max_connections_per_client = 256;  // per client address
};

struct ProxyOptions {
  std::string listen_address = "0.0.0.0:8080";  // port 0 picks a free one
  std::string access_domain = "gpuaas.localhost";
  absl::Duration cookie_ttl = absl::Hours(12);
  // HTTPS with this (wildcard) certificate when both are set.
  std::string tls_cert_file;
  std::string tls_key_file;
  int io_threads = 2;
  // A request head above this is refused (431), so a client cannot grow our memory.
  size_t header_limit = 16 * 1024;
  // A client that sends no complete request head in this long (idle keep-alive, slowloris) is
  // disconnected; so is one whose body stalls for body_timeout.
  absl::Duration header_timeout = absl::Seconds(30);
  absl::Duration body_timeout = absl::Seconds(60);
  absl::Duration connect_timeout = absl::Seconds(5);
  // The longest a workload may take to start its response, and to continue it.
  absl::Duration upstream_timeout = absl::Minutes(5);
  // A cookie's grant is confirmed with the instance service again after this long
  // (grant_rechecks.h).
  absl::Duration grant_recheck = absl::Seconds(60);
  // Beyond these, a new connection is refused at accept (plain HTTP gets a one-line 503, TLS a
  // close), so one client, or a flood from many, cannot take every file descriptor and
  // coroutine. A connection holds its slot for its whole life (keep-alive, WebSocket tunnels).
  ConnectionLimitOptions connection_limits;
};

// What a request decision reads; every reference must outlive the server.
struct ProxyDeps {
  RouteTable& routes;
  authz::Authenticator& authenticator;
  const AccessCookieSigner& cookies;
  CodeRedeemer& redeemer;
  GrantChecker& grants;
  AccessActivity* activity = nullptr;  // none: nothing is reported
  ProxyMetrics& metrics;
  const Clock& clock;
};

class ProxyServer final {
 public:
  ProxyServer(ProxyOptions options, ProxyDeps deps);
  ~ProxyServer();

  // Binds, then serves on background threads. Errors: INVALID_ARGUMENT for a bad address or
  // unreadable TLS files, UNAVAILABLE when the address cannot be bound. Blocks only to bind.
  absl::Status Start();
  // The bound port (after Start).
  int port() const;
  // Stops accepting, closes every connection, joins the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::proxy
