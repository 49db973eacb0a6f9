#include "services/gateway/status_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libs/rpc/status.h"

namespace gpuaas::gateway {

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:  // UNKNOWN, INTERNAL, DATA_LOSS
      return 500;
  }
}

std::string StatusJson(grpc::StatusCode code, const std::string& message) {
  return nlohmann::json{
      {"code", static_cast<int>(code)}, {"message", message}, {"details", nlohmann::json::array()}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string StatusJson(const absl::Status& s) { return StatusJson(rpc::ToGrpcStatus(s)); }

void Fail(http::HttpResponse& res, const grpc::Status& s) {
  res.status = HttpStatusOf(s.error_code());
  res.set_content(StatusJson(s), "application/json");
  // A throttle's refusal says when to come back ("..., retry in 30s", services/auth's
  // login_throttle.h): REST clients read that from Retry-After.
  if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
    res.set_header("Retry-After", std::to_string(RetryAfterSeconds(s.error_message())));
  }
}

int64_t RetryAfterSeconds(absl::string_view message) {
  constexpr absl::string_view kHint = "retry in ";
  int64_t seconds = 0;
  const size_t at = message.rfind(kHint);
  if (at == absl::string_view::npos) return 1;
  absl::string_view rest = message.substr(at + kHint.size());
  if (!absl::ConsumeSuffix(&rest, "s") || !absl::SimpleAtoi(rest, &seconds) || seconds < 1) {
    return 1;
  }
  return seconds;
}

void Fail(http::HttpResponse& res, const absl::Status& s) { Fail(res, rpc::ToGrpcStatus(s)); }

void FailMethodNotAllowed(http::HttpResponse& res, absl::string_view method,
                          absl::string_view path) {
  Fail(res, absl::InvalidArgumentError(absl::StrCat(method, " ", path, ": method not allowed")));
  res.status = 405;
}

}  // namespace gpuaas::gateway
