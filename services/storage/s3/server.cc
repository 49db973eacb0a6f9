#include "services/storage/s3/server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "libs/http/http_transport.h"
#include "services/storage/s3/dispatcher.h"
#include "services/storage/s3/metrics.h"

namespace gpuaas::storage::s3 {
Server::Server(ServerOptions options, Directory& directory, const Backends& backends,
               authz::Authenticator& tokens, const Clock& clock)
    : options_(std::move(options)),
      directory_(directory),
      backends_(backends),
      tokens_(tokens),
      clock_(clock) {}

Server::~Server() { Stop(); }

absl::Status Server::Start() {
  if (http_) {
    return absl::FailedPreconditionError("already started");
  }
  if (options_.threads < 1) {
    return absl::InvalidArgumentError("threads must be at least 1");
  }
  if (options_.limits.max_connections_per_client < 1 ||
      options_.limits.header_timeout <= absl::ZeroDuration() ||
      options_.limits.body_idle_timeout <= absl::ZeroDuration() ||
      options_.limits.body_rate_grace <= absl::ZeroDuration() ||
      options_.limits.body_min_rate < 0) {
    return absl::InvalidArgumentError(
        "limits: max_connections_per_client, header_timeout, body_idle_timeout and "
        "body_rate_grace must be positive, body_min_rate at least 0");
  }
  if (options_.metrics_registry != nullptr) {
    metrics_ = std::make_unique<S3Metrics>(*options_.metrics_registry);
  }
  dispatcher_ = std::make_unique<Dispatcher>(
      DispatcherOptions{options_.region, options_.max_clock_skew, options_.cors_origins},
      directory_, backends_, tokens_, clock_, metrics_.get());
  Dispatcher* dispatcher = dispatcher_.get();
  http_ = std::make_unique<http::HttpTransport>(
      http::HttpTransportOptions{.host = options_.host,
                                 .port = options_.port,
                                 .threads = options_.threads,
                                 .tls_cert_file = options_.tls_cert_file,
                                 .tls_key_file = options_.tls_key_file,
                                 .limits = options_.limits,
                                 .share_port = options_.share_port,
                                 .name = "s3",
                                 .over_cap_body = "<Error><Code>SlowDown</Code><Message>Too many "
                                                  "connections from your address</Message></Error>",
                                 .over_cap_content_type = "application/xml"},
      [dispatcher](const http::HttpRequest& req, http::HttpResponse& res,
                   const http::ContentReader* body) { dispatcher->Handle(req, res, body); });
  if (absl::Status started = http_->Start(); !started.ok()) {
    http_.reset();
    return started;
  }
  port_ = http_->port();
  Logger("s3")->info("S3 endpoint on {}://{}:{}", http_->tls() ? "https" : "http", options_.host,
                     port_);
  return absl::OkStatus();
}

void Server::Stop() {
  if (!http_) {
    return;
  }
  http_->Stop();
  http_.reset();
}

}  // namespace gpuaas::storage::s3
