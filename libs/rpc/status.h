// The one mapping between absl::Status and grpc::Status (the code enums are numerically equal).
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace gpuaas::rpc {

grpc::Status ToGrpcStatus(const absl::Status& s);
absl::Status FromGrpcStatus(const grpc::Status& s);

}  // namespace gpuaas::rpc
