// The S3-compatible data plane: an HTTP(S) endpoint where each storage is a bucket
// (path-style: http://host:port/<storage_id>/<key>), served over a storage Backend. Callers
// sign with SigV4 (accessor keys from the Directory; header, presigned URL or aws-chunked
// upload) or send "Authorization: Bearer <access token>"; every request is decided by
// authz::AuthorizeStorageData. Bodies stream both ways through bounded buffers, so an object
// of any size passes through a few MiB of memory.
//
// Served: ListBuckets, HeadBucket, GetBucketLocation, ListObjects (v1 and v2), HeadObject,
// GetObject (Range, conditionals), PutObject, CopyObject (within a bucket), DeleteObject,
// DeleteObjects, the multipart operations (Create, UploadPart, ListParts, Complete, Abort,
// ListMultipartUploads). Anything else answers NotImplemented. Errors are S3 XML documents;
// errors.h lists the codes (a full volume is 403 QuotaExceeded).
#pragma once

#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/http/connection_limits.h"
#include "libs/http/http_transport.h"
#include "services/storage/backends.h"
#include "services/storage/s3/directory.h"

namespace gpuaas::storage::s3 {

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 9000;  // 0: any free port (see Server::port)
  // Both set: HTTPS only. PEM files.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string region = "us-east-1";  // the only region signatures may name
  absl::Duration max_clock_skew = absl::Minutes(15);
  int threads = 64;  // requests served at once; more wait for a thread
  http::ConnectionLimits limits;
  bool share_port = false;  // replicas on one host on one port: http::HttpTransportOptions
  // Web pages' origins that may send requests from a browser (the web console's, e.g.
  // "http://127.0.0.1:8090"), each as CheckCorsOrigin (cors.h) takes it; empty: no CORS.
  std::vector<std::string> cors_origins;
  // Not owned; null: no metrics.
  prometheus::Registry* metrics_registry = nullptr;
};

class Dispatcher;
class S3Metrics;

class Server final {
 public:
  // Every reference outlives the server.
  // Each bucket is served by the backend of its backend class.
  Server(ServerOptions options, Directory& directory, const Backends& backends,
         authz::Authenticator& tokens, const Clock& clock);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and serves on a thread of its own; returns once the port accepts connections.
  // INVALID_ARGUMENT: unreadable TLS files or only one of them; UNAVAILABLE: cannot bind.
  absl::Status Start();
  // The bound port (after Start).
  int port() const { return port_; }
  // Stops accepting, lets requests in progress finish, and joins. Idempotent.
  void Stop();

 private:
  ServerOptions options_;
  Directory& directory_;
  const Backends& backends_;
  authz::Authenticator& tokens_;
  const Clock& clock_;
  std::unique_ptr<S3Metrics> metrics_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<http::HttpTransport> http_;
  int port_ = 0;
};

}  // namespace gpuaas::storage::s3
