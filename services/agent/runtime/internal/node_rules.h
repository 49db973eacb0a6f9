// The node's nftables table for workload networks (the veth links), loaded by
// PrepareNodeNetwork. Private to workload_network.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::agent::network_internal {

inline constexpr char kNodeTable[] = "gpuaas_workload_network";
inline constexpr char kNftPath[] = "/usr/sbin/nft";
// The forwards: a public host port by (node address . host port), a private one by
// (proxy source . node address . host port), each to (workload address . port).
inline constexpr char kPublicPortsMap[] = "veth_public_ports";
inline constexpr char kPrivatePortsMap[] = "veth_private_ports";

// `text` ("a.b.c.d/n", or an address alone: /32) as nftables takes it. INVALID_ARGUMENT
// naming `field` when it is not an IPv4 network or has bits set beyond its prefix.
absl::StatusOr<std::string> Ipv4Network(const std::string& field, const std::string& text);

// `text` is an IPv4 address (nothing else reaches an nft script); else INVALID_ARGUMENT naming
// `field`.
absl::Status Ipv4Address(const std::string& field, const std::string& text);

// An `nft -f` script that adds the table, its maps and sets where missing and refills each
// chain. `lan_allowed`: networks from Ipv4Network that workloads with egress may reach although
// they are in the node's LAN ranges. `resolvers`: IPv4 addresses whose DNS (port 53) workloads
// with egress may use wherever they are: the node's own resolvers, usually on the LAN.
std::string NodeRules(const std::vector<std::string>& lan_allowed,
                      const std::vector<std::string>& resolvers = {});

// The IPv4 nameservers of a resolv.conf's `text` (IPv6 and malformed lines left out).
std::vector<std::string> Ipv4Nameservers(const std::string& text);

}  // namespace gpuaas::agent::network_internal
