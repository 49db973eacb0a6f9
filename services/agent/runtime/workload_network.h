// Each workload's own network: a network namespace with loopback and eth0, one end of a veth
// pair whose other end is gpw<n> on the node (a /30 of 10.222.0.0/16 each), and nothing
// running. The node's nftables (a table of ours, node_rules.cc) DNAT each declared host port to
// the workload's address, but only for connections to the one node address the proxy uses (the
// agent's --advertise-address; route_localnet on gpw<n>, so 127.0.0.1 works too) and, for a
// private port (not marked public), only from the proxies' source addresses (--proxy-source):
// a machine on the node's network that connects to any other address of the node, or to a
// private port from anywhere but a proxy, reaches the node's own port, which the agent holds
// closed (a reset), never the workload. It also masquerades its
// egress (refused to the LAN ranges but what the operator allows), refuse every new connection from
// it to the node (input: loopback, any node address, so the services, the agent, the database) and
// into it but through its host ports (forward, and output for the node's own processes); for a
// workload without egress, every new connection it starts. The namespace belongs to the node's user
// namespace, so a container joining it from its own user namespace has no capability over it (no
// raw sockets, no interface or route changes).
//
// Costs, measured on a 2-core VM: ~15 ms to create (three tool runs), ~0.3 MB of kernel memory
// and no CPU idle. IPv4 only (Linux cannot DNAT ::1 to another address). PrepareNodeNetwork
// turns on IPv4 forwarding for the whole node.
//
// Why not pasta (Debian's passt, 2023-03), which we ran first: ~30 MB resident and a process
// per workload, and a connection from a node address that is not loopback (the path a proxy on
// another host takes) stopped reaching the workload a moment after start (its SYN never left
// pasta), so it could not serve.
//
// On disk, in the workload's directory: netns (a bind mount of the namespace) and veth (its
// slot, egress policy and ports). Everything outlives the agent.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gpuaas::agent {

// The node's part, once per agent start: our nftables table (its chains refilled atomically,
// its workloads' forwards kept; no other table is touched) and IPv4 forwarding on. Idempotent.
// A workload's egress reaches no link-local, private or carrier-grade NAT address (the node's
// LAN, other nodes, a cloud's metadata service) but in the networks of `lan_allowed`
// ("a.b.c.d/n", or an address; e.g. an internal package mirror); the table is the node's, so
// the last call's list holds for every workload. Blocks on nft. Errors: INVALID_ARGUMENT
// naming lan_allowed and the bad network; FAILED_PRECONDITION with nft's message.
absl::Status PrepareNodeNetwork(const std::vector<std::string>& lan_allowed = {});

// Who reaches a workload's host ports, and at which of the node's addresses.
struct PortAccess {
  // The node's IPv4 address the proxy connects to (the agent's --advertise-address): host ports
  // are forwarded for connections to this address only.
  std::string address = "127.0.0.1";
  // The IPv4 addresses a private port accepts connections from: the proxies', as the node sees
  // them (a proxy on the node itself connects from `address`, or from 127.0.0.1 to loopback).
  std::vector<std::string> proxy_sources = {"127.0.0.1"};
  // Host ports of the template's public ports: reached from any source (at `address`). The
  // others are private.
  std::set<int> public_host_ports;
};

// `access.address` and every proxy source are IPv4 addresses, and there is at least one
// source. Errors: INVALID_ARGUMENT naming the field.
absl::Status CheckPortAccess(const PortAccess& access);

// A network namespace for one workload at NetnsPath(dir) (runc joins that path), each host
// port (TCP, at access.address, from anyone for a public port and from access.proxy_sources
// for a private one) forwarded to the port inside. `dir` must exist. Calling it again for a
// dir with a live network keeps that one as it is (its ports and policy; one made before ports
// were bound to an address gets `access` now); a dir whose network is gone (a node reboot) gets
// it made again. Blocks (~15 ms of ip and nft). Errors: INVALID_ARGUMENT naming a bad port or
// address; FAILED_PRECONDITION naming a host port already taken, or with ip's or nft's message;
// INTERNAL when the namespace cannot be made. On error nothing of it is left.
absl::Status CreateWorkloadNetwork(const std::string& dir,
                                   const std::map<int, int>& host_port_to_port, bool deny_egress,
                                   const PortAccess& access = {});

// An agent upgraded under live workloads: the forwards of each workload network under
// `workload_root` that were made before forwards were bound to an address (in a map no rule
// reads any more) are made again with `access`, every port private (the proxy reaches public
// ports too). Blocks on nft; errors are ignored (such a workload is unreachable until it
// restarts).
void BindUnboundForwards(const std::string& workload_root, const PortAccess& access);

// Removes the workload's forwards, its link, the namespace and our files from `dir`.
// Idempotent: missing pieces are fine.
absl::Status DestroyWorkloadNetwork(const std::string& dir);

// Drops every forward whose host port nobody holds (libs/common/held_port.h): the agent holds
// each live workload's, so one that binds here belongs to a workload that is gone, and would
// send whatever program next takes that port to it. Blocks on nft; errors are ignored (the
// next start tries again).
void DropUnheldForwards();

// Where the workload's network namespace is bind-mounted: `<dir>/netns`.
std::string NetnsPath(const std::string& dir);

}  // namespace gpuaas::agent
