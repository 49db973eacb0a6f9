// The console's terminal: a WebSocket at /v1/instances/{instance_id}/exec that runs a shell in
// the instance (InstanceSessionService.ExecInstance, with a terminal) for the caller. The caller
// is whoever the request's credentials say (the console's session cookie, or an Authorization
// header), checked by the instance service as every call (MEMBER and above; recorded; asked
// about again while open); the browser checks are the REST API's (AuthorizationOf: a cookie
// request from another site is refused, and browsers always send Origin on a WebSocket).
//
// On the wire: binary frames up are keys, a text frame {"resize": {"rows": R, "cols": C}}
// resizes; binary frames down are the terminal's output, then a text frame {"exit_code": N}
// (or {"error": "...", "code": N} when the session could not open or broke), then a close.
//
// One thread per session does every read and write of the connection (TLS allows no other), in
// a poll loop beside the gRPC stream's reader thread; a ping goes out every `ping_interval`,
// and a browser that answers none of two is gone.
#pragma once

#include <grpcpp/channel.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "libs/http/http_message.h"

namespace gpuaas::gateway {

struct TerminalOptions {
  // Sessions open at once (each holds a transport worker and a thread).
  int max_sessions = 32;
  absl::Duration ping_interval = absl::Seconds(20);
};

class TerminalSockets final {
 public:
  // `instance_channel` reaches the instance service.
  TerminalSockets(std::shared_ptr<grpc::Channel> instance_channel, TerminalOptions options = {})
      : channel_(std::move(instance_channel)), options_(options) {}

  // The instance id of a terminal's path ("/v1/instances/nb-1/exec"), or nullopt.
  static std::optional<std::string> InstanceOf(absl::string_view path);

  // Answers the upgrade (101, then the session on the connection). Errors, for a plain HTTP
  // answer: INVALID_ARGUMENT when the request is no WebSocket handshake (or rows/cols are bad),
  // what AuthorizationOf says, UNAUTHENTICATED without credentials, RESOURCE_EXHAUSTED at
  // max_sessions.
  absl::Status Serve(const http::HttpRequest& req, const std::string& instance_id,
                     absl::string_view query, bool https, http::HttpResponse& res);

 private:
  void RunSession(http::UpgradedConnection& connection, const std::string& authorization,
                  const std::string& instance_id, int rows, int cols);

  std::shared_ptr<grpc::Channel> channel_;
  const TerminalOptions options_;
  std::atomic<int> open_{0};
};

}  // namespace gpuaas::gateway
