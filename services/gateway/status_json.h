// A gRPC status as REST clients get it: the HTTP status of Google's mapping (google.rpc.Code)
// and a `google.rpc.Status` JSON body, {"code": 5, "message": "...", "details": []}.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "libs/http/http_message.h"

namespace gpuaas::gateway {

int HttpStatusOf(grpc::StatusCode code);
std::string StatusJson(grpc::StatusCode code, const std::string& message);
inline std::string StatusJson(const grpc::Status& s) {
  return StatusJson(s.error_code(), s.error_message());
}
// An absl::Status made by the gateway itself, as the same body.
std::string StatusJson(const absl::Status& s);

// Answers `res` with `s`: its HTTP status and that body.
void Fail(http::HttpResponse& res, const grpc::Status& s);
void Fail(http::HttpResponse& res, const absl::Status& s);
// The seconds a RESOURCE_EXHAUSTED message asks the caller to wait ("..., retry in 30s"), for
// Retry-After; 1 when it names none.
int64_t RetryAfterSeconds(absl::string_view message);
// 405 for `method` on `path`, which other methods serve.
void FailMethodNotAllowed(http::HttpResponse& res, absl::string_view method,
                          absl::string_view path);

}  // namespace gpuaas::gateway
