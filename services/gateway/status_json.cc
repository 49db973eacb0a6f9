#include "services/gateway/status_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
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
}

void Fail(http::HttpResponse& res, const absl::Status& s) { Fail(res, rpc::ToGrpcStatus(s)); }

void FailMethodNotAllowed(http::HttpResponse& res, absl::string_view method,
                          absl::string_view path) {
  Fail(res, absl::InvalidArgumentError(absl::StrCat(method, " ", path, ": method not allowed")));
  res.status = 405;
}

}  // namespace gpuaas::gateway
