// Turns one HTTP request into one S3 operation: parses the path and query, authenticates,
// routes, authorizes against the bucket's storage, opens its volume, runs the handler, and
// renders any error as an S3 error document. Writes the request's log line.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/http/http_message.h"
#include "services/storage/backends.h"
#include "services/storage/s3/auth.h"
#include "services/storage/s3/cors.h"
#include "services/storage/s3/directory.h"
#include "services/storage/s3/request_context.h"

namespace gpuaas::storage::s3 {

class S3Metrics;

struct DispatcherOptions {
  std::string region;
  absl::Duration max_clock_skew;
  std::vector<std::string> cors_origins;  // see CorsPolicy
};

class Dispatcher final {
 public:
  // `metrics` may be null. Thread-safe.
  Dispatcher(DispatcherOptions options, Directory& directory, const Backends& backends,
             authz::Authenticator& tokens, const Clock& clock, S3Metrics* metrics);

  // `body` is null when the request has none. Never throws.
  void Handle(const http::HttpRequest& req, http::HttpResponse& res,
              const http::ContentReader* body);

 private:
  absl::Status Serve(RequestContext& ctx);
  absl::Status ParseTarget(RequestContext& ctx);
  absl::Status OpenBucket(RequestContext& ctx);
  absl::Status RunOperation(RequestContext& ctx);
  void SendError(RequestContext& ctx, const absl::Status& status);

  DispatcherOptions options_;
  Directory& directory_;
  const Backends& backends_;
  const Clock& clock_;
  S3Metrics* metrics_;
  RequestAuthenticator authenticator_;
  CorsPolicy cors_;
  std::atomic<uint64_t> next_request_id_;
};

}  // namespace gpuaas::storage::s3
