// The one mapping between absl::Status and grpc::Status (the code enums are numerically equal).
// Its own target, gpuaas::rpc_status, shared by the server stack (libs/rpc) and libs/client.
#pragma once

#include <grpcpp/support/status.h>

#include <string_view>

#include "absl/status/status.h"

namespace gpuaas::rpc {

// Copies code and message; OK maps to OK (any message on an OK absl::Status is dropped).
grpc::Status ToGrpcStatus(const absl::Status& s);
absl::Status FromGrpcStatus(const grpc::Status& s);

// "UNAUTHENTICATED", "NOT_FOUND" ...: the label used in logs and metrics.
std::string_view StatusCodeName(grpc::StatusCode code);

}  // namespace gpuaas::rpc
