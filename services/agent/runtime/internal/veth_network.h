// The veth kind of workload network (a prototype): a network namespace per workload joined
// to the node by a veth pair (gpw<n> on the node, eth0 inside, a /30 of 10.222.0.0/16), no
// process; the node's nftables table DNATs its host ports, masquerades its egress and keeps it
// from the node and the other workloads. IPv4 only. Private to workload_network; the contracts
// are those of workload_network.h.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "services/agent/runtime/workload_network.h"

namespace gpuaas::agent::network_internal {

absl::Status CreateVethNetwork(const std::string& dir, const std::map<int, int>& host_port_to_port,
                               bool deny_egress, const PortAccess& access);

// Removes its nftables elements, its link and its namespace; missing pieces are fine.
absl::Status DestroyVethNetwork(const std::string& dir);

// When `dir` holds a live network whose forwards predate their binding to an address, makes
// them again with `access`; else nothing.
absl::Status BindLegacyForwards(const std::string& dir, const PortAccess& access);

}  // namespace gpuaas::agent::network_internal
