// An address that lists several replicas of one service, "host1:port1,host2:port2", as the one
// gRPC target a channel spreads its calls over (channel.h). Private to libs/client.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::client::internal {

// True when `address` lists more than one replica (it holds a comma).
bool IsReplicaList(std::string_view address);

struct ReplicaTarget {
  std::string target;     // "ipv4:127.0.0.1:17051,127.0.0.1:17151" (or "ipv6:[::1]:17051,...")
  std::string authority;  // the first entry as written ("localhost:17051"): the name TLS checks
};

// Resolves each "host:port" of `list` once, now (gRPC's ipv4:/ipv6: targets take literal
// addresses only), taking the host's first IPv4 address, or its first IPv6 address when no
// entry has IPv4. Blocks on the system resolver (/etc/hosts for localhost). Errors:
// INVALID_ARGUMENT naming the entry when one is empty, has no port or does not resolve, or
// when `one_server_name` and the entries' hosts differ (a TLS channel checks one server name
// for all its connections, so its replicas must share a host name or a server-name override).
absl::StatusOr<ReplicaTarget> ResolveReplicaList(std::string_view list, bool one_server_name);

}  // namespace gpuaas::client::internal
