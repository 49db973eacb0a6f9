#include "libs/rpc/status.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace gpuaas::rpc {
namespace {

// Every code, both directions: the enums must stay numerically identical.
const std::vector<std::pair<absl::StatusCode, grpc::StatusCode>>& CodeTable() {
  static const auto* table = new std::vector<std::pair<absl::StatusCode, grpc::StatusCode>>{
      {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
      {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
      {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
      {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
      {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
      {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
      {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
      {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
      {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
  };
  return *table;
}

TEST(StatusTest, ToGrpcMapsEveryCodeAndCopiesTheMessage) {
  for (const auto& [absl_code, grpc_code] : CodeTable()) {
    grpc::Status s = ToGrpcStatus(absl::Status(absl_code, "spec a100.1x not found"));
    EXPECT_EQ(s.error_code(), grpc_code) << absl::StatusCodeToString(absl_code);
    EXPECT_EQ(s.error_message(), "spec a100.1x not found");
  }
}

TEST(StatusTest, FromGrpcMapsEveryCodeAndCopiesTheMessage) {
  for (const auto& [absl_code, grpc_code] : CodeTable()) {
    absl::Status s = FromGrpcStatus(grpc::Status(grpc_code, "quota exceeded"));
    EXPECT_EQ(s.code(), absl_code) << absl::StatusCodeToString(absl_code);
    EXPECT_EQ(s.message(), "quota exceeded");
  }
}

TEST(StatusTest, OkMapsToOkBothWays) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(StatusTest, RoundTripKeepsCodeAndMessage) {
  absl::Status original = absl::FailedPreconditionError("instance is STOPPING");
  EXPECT_EQ(FromGrpcStatus(ToGrpcStatus(original)), original);
}

TEST(StatusTest, CodeNamesMatchAbseil) {
  for (const auto& [absl_code, grpc_code] : CodeTable()) {
    EXPECT_EQ(StatusCodeName(grpc_code), absl::StatusCodeToString(absl_code));
  }
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::OK), "OK");
}

}  // namespace
}  // namespace gpuaas::rpc
