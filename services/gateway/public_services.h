// The gRPC services the gateway serves over REST, and which peer serves each. Machine-only
// services (node agents' and the proxy's) carry no HTTP rules and are not reachable here.
#pragma once

#include <google/protobuf/descriptor.h>

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuaas::gateway {

enum class Peer { kAuth, kStock, kStorage, kInstance };

struct PublicService {
  absl::string_view name;  // "gpuaas.auth.v1.AuthService"
  Peer peer;
};

inline constexpr PublicService kPublicServices[] = {
    {"gpuaas.auth.v1.AuthService", Peer::kAuth},
    {"gpuaas.stock.v1.StockService", Peer::kStock},
    {"gpuaas.storage.v1.StorageService", Peer::kStorage},
    {"gpuaas.instance.v1.InstanceService", Peer::kInstance},
    {"gpuaas.instance.v1.ImageService", Peer::kInstance},
};

// Their descriptors, compiled into this binary. INTERNAL when one is missing (a build that did
// not link its proto library).
absl::StatusOr<std::vector<const google::protobuf::ServiceDescriptor*>> PublicServiceDescriptors();

}  // namespace gpuaas::gateway
