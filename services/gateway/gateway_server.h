// gpuaas-gateway's HTTP side: REST/JSON on every route of route_table.h, answered by calling
// the service over gRPC with the caller's own credentials (the gateway holds no power of its
// own); server streams as server-sent events; the console's session (session_endpoints.h); and
// the compiled-in console and OpenAPI document (static_files.h). Served on libs/http's
// blocking transport: a request holds a worker thread while its call runs, and an event stream
// holds one for its life, so streams are capped well below the worker count.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/common/clock.h"
#include "libs/http/http_transport.h"
#include "services/gateway/backends.h"
#include "services/gateway/client_address.h"
#include "services/gateway/route_table.h"
#include "services/gateway/session_endpoints.h"
#include "services/gateway/terminal_socket.h"

namespace gpuaas::gateway {

struct GatewayOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port
  // HTTPS with this certificate and key when both are set.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Cookies say Secure also without TLS here (a TLS terminator in front).
  bool secure_cookies = false;
  int threads = 256;
  http::ConnectionLimits limits;
  absl::Duration call_timeout = absl::Seconds(30);
  size_t max_body_bytes = 4 << 20;
  // Event streams open at once, in all and from one client address.
  int max_streams = 192;
  int max_streams_per_client = 16;
  // A comment line goes down every open event stream this often, so a client that left is
  // noticed (its call is then cancelled) and proxies keep the connection; a stream still
  // awaiting its first event has its connection looked at as often, for the same reason.
  absl::Duration stream_keepalive = absl::Seconds(15);
  // An open event stream's caller is asked about again this often (stream_grants.h): a stream
  // whose token expired or whose user left the tenant ends within this bound (plus a quarter
  // of it and one WhoAmI call).
  absl::Duration stream_recheck = absl::Seconds(60);
  // What the console needs to know that no API says: the S3 endpoint's URL as browsers reach it
  // (the file browser sends presigned requests there). Served at /api/config.
  std::string s3_endpoint;
  // Whom the auth service hears a login or an API-key exchange came from.
  ClientVouching vouching;
};

class GatewayServer final {
 public:
  GatewayServer(GatewayOptions options, const RouteTable& routes, const Backends& backends,
                const client::AuthClient& auth, const Clock& clock);
  ~GatewayServer();

  absl::Status Start();
  int port() const { return transport_->port(); }
  void Stop();

 private:
  struct OpenStream;
  void Handle(const http::HttpRequest& req, http::HttpResponse& res,
              const http::ContentReader* body);
  void ServeRest(const http::HttpRequest& req, const RouteMatch& match, absl::string_view query,
                 absl::string_view body, http::HttpResponse& res);
  void ServeStream(const http::HttpRequest& req, const RouteMatch& match,
                   const google::protobuf::Message& request, const std::string& authorization,
                   http::HttpResponse& res);
  void KeepStreamsAlive();
  // Ends the open streams whose caller may no longer have them (stream_grants.h).
  void RecheckStreams(const std::vector<std::shared_ptr<OpenStream>>& open);

  GatewayOptions options_;
  const RouteTable& routes_;
  const Backends& backends_;
  const client::AuthClient& auth_;
  SessionEndpoints sessions_;
  TerminalSockets terminals_;
  std::unique_ptr<http::HttpTransport> transport_;

  absl::Mutex streams_mu_;
  absl::flat_hash_map<OpenStream*, std::shared_ptr<OpenStream>> streams_
      ABSL_GUARDED_BY(streams_mu_);
  absl::flat_hash_map<std::string, int> streams_per_client_ ABSL_GUARDED_BY(streams_mu_);
  std::atomic<bool> stopping_{false};
  std::thread keepalive_;
  absl::Mutex keepalive_mu_;
  absl::CondVar keepalive_cv_;
};

}  // namespace gpuaas::gateway
