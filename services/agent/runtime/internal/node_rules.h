// The node's nftables table for workload networks (the veth links), loaded by
// PrepareNodeNetwork. Private to workload_network.
#pragma once

#include <string>

namespace gpuaas::agent::network_internal {

inline constexpr char kNodeTable[] = "gpuaas_workload_network";
inline constexpr char kNftPath[] = "/usr/sbin/nft";

// An `nft -f` script that adds the table, its map and set where missing and refills each chain.
std::string NodeRules();

}  // namespace gpuaas::agent::network_internal
