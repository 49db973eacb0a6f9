// The pasta kind of workload network: a user and a network namespace per workload, pasta
// (running as one of the two uids nftables match) forwarding its declared ports. Private to
// workload_network; the contracts are those of workload_network.h.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "services/agent/runtime/workload_network.h"

namespace gpuaas::agent::network_internal {

absl::Status CreatePastaNetwork(const NetworkOptions& options, const std::string& dir,
                                const std::map<int, int>& host_port_to_port, bool deny_egress);

// Stops pasta and removes its namespaces and files; missing pieces are fine.
absl::Status DestroyPastaNetwork(const std::string& dir);

}  // namespace gpuaas::agent::network_internal
