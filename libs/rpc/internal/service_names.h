// grpc::Service keeps its name private; the builder's plugin hooks are the public way to learn
// the full names ("gpuaas.auth.v1.AuthService") of every registered service, the same way the
// reflection plugin does. The server needs them to mark each one SERVING on health.
#pragma once

#include <grpcpp/impl/server_builder_option.h>

#include <memory>
#include <string>
#include <vector>

namespace gpuaas::rpc::internal {

// Fills `*names` during BuildAndStart; `names` must outlive the build.
std::unique_ptr<grpc::ServerBuilderOption> CollectServiceNames(std::vector<std::string>* names);

}  // namespace gpuaas::rpc::internal
