// Each workload's own network: a network namespace with only loopback and one interface run by
// pasta (Debian's passt), which forwards the workload's declared ports from host ports and
// carries its outbound connections as ordinary sockets of the node. The node's nftables
// (a table of ours) refuse those sockets every destination local to the node (its loopback,
// its addresses, so the services, the agent, the database and every other workload's host
// ports) and, for a workload without egress, every new connection at all.
//
// Why this holds: pasta runs as one of two dedicated uids (nftables match its sockets' owner);
// the namespace belongs to a user namespace of pasta's own, so pasta needs no privilege on the
// node, and a container joining the namespace from its own user namespace has no capability
// over it (no raw sockets, no interface or route changes). pasta forwards only the ports given
// (never `auto`), nothing from the namespace to the node's ports (-T/-U none), and does not
// map the gateway address to the node's loopback (--no-map-gw).
//
// On disk, in the workload's directory: netns and userns (bind mounts of the namespaces),
// pasta.pid and pasta.log. Everything outlives the agent.
//
// What pasta (Debian 12's, 2023-03-09) costs and does not do, measured on a 2-core VM: start
// 35-85 ms; ~30 MB resident per workload (its TCP, UDP and tap buffers; see the KSM note in
// StartPasta), ~0.05 ms of CPU per second idle. A connection from the node's non-loopback
// address completes its handshake only once the client sends (HTTP does; a server that speaks
// first waits); from loopback it is immediate. The node's own IPv6 address cannot reach the
// workload (the namespace has it too); loopback and the node's IPv4 addresses can. A refused
// outbound connection is a timeout inside (pasta's reset lacks the ACK). A container joining
// the namespace from its own user namespace cannot mount sysfs (the kernel wants the network
// namespace owned by its user namespace): bind the host's /sys read-only instead.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "absl/status/status.h"

namespace gpuaas::agent {

// kPasta (the default): the above. kVeth (a prototype, for 1,000 idle workloads a node): a veth
// pair per workload (gpw<n> on the node, eth0 inside, a /30 of 10.222.0.0/16) and nothing else
// running; our nftables table DNATs its host ports (route_localnet on gpw<n> for 127.0.0.1),
// masquerades its egress, refuses new connections from it to the node (input) and into it but
// through its host ports (forward; output for the node's own processes). ~0.3 MB of kernel
// memory and no CPU idle, created in ~15 ms (three tool runs). IPv4 only (::1 cannot be
// DNATed); PrepareNodeNetwork turns on IPv4 forwarding for the whole node; Destroy runs
// /usr/sbin/ip and /usr/sbin/nft.
enum class NetworkKind { kPasta, kVeth };

struct NetworkOptions {
  NetworkKind kind = NetworkKind::kPasta;
  std::string pasta_path = "/usr/bin/pasta";
  std::string nft_path = "/usr/sbin/nft";
  // The users pasta runs as, which nftables match on: for workloads that may reach outside and
  // for those that may not. Dedicated ids used by nothing else (gid = uid); the defaults sit
  // just below the agent's default --workload-uid-range (200000-299999).
  uid_t egress_uid = 199990;
  uid_t no_egress_uid = 199991;
};

// The node's part, once per agent start: our nftables table (replaced whole, atomically; no
// other table is touched) and /dev/net/tun usable by pasta's users (mode 0666, as udev makes
// it on every distribution). Idempotent. Blocks on nft. Errors: FAILED_PRECONDITION with nft's
// message, INVALID_ARGUMENT when the two uids are equal or 0.
absl::Status PrepareNodeNetwork(const NetworkOptions& options);

// A network namespace for one workload at NetnsPath(dir) (runc joins that path), with pasta
// forwarding each host port (TCP, every node address) to the port inside. `dir` must exist.
// Returns once the host ports listen and the namespace is configured. Calling it again for a
// dir with a live network keeps that one as it is (its ports and policy); a dir whose pasta has
// died (a node reboot, a kill) gets it back. Blocks (fork, pasta's start-up: tens of ms).
// Errors: INVALID_ARGUMENT naming a bad port; FAILED_PRECONDITION with pasta's own message
// (e.g. a host port already taken); INTERNAL when the namespaces cannot be made. On error
// nothing of it is left running.
absl::Status CreateWorkloadNetwork(const NetworkOptions& options, const std::string& dir,
                                   const std::map<int, int>& host_port_to_port, bool deny_egress);

// Stops pasta (SIGTERM, SIGKILL after 2 s) and removes the namespaces and our files from
// `dir`. Idempotent: missing pieces are fine. Blocks until pasta is gone.
absl::Status DestroyWorkloadNetwork(const std::string& dir);

// Where the workload's network namespace is bind-mounted: `<dir>/netns`.
std::string NetnsPath(const std::string& dir);

}  // namespace gpuaas::agent
