// The node's nftables table for workload networks (pasta's sockets, the veth links), loaded
// by PrepareNodeNetwork. Private to workload_network.
#pragma once

#include <string>

#include "services/agent/runtime/workload_network.h"

namespace gpuaas::agent::network_internal {

inline constexpr char kNodeTable[] = "gpuaas_workload_network";

// An `nft -f` script that adds the table, its map and set where missing and refills each chain.
std::string NodeRules(const NetworkOptions& options);

}  // namespace gpuaas::agent::network_internal
