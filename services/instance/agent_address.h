// Where the control plane calls a node's agent (issue 32: nodes are untrusted). The agent
// reports "host:port" in WatchWorkloads; the host is taken from the peer of that authenticated
// connection instead, so a node's key can point the service's calls only at its own host, never
// at another machine (a control-plane host, another node's). Holds wherever agents reach the
// instance service without a NAT or proxy in between, which is how nodes are deployed (one flat
// network with the control plane). What is sent there is a token for that node only, so even a
// port on the node's own host that is not its agent gets nothing that acts elsewhere.
#pragma once

#include <string>
#include <string_view>

namespace gpuaas::instance {

// The report's port at `peer_host` (rpc::PeerAddress of the watch: an IPv4 or IPv6 literal).
// "" when the report is empty (the agent serves no logs) or has no port; the report unchanged
// when the peer has no IP host (a Unix socket: one machine). Never blocks.
std::string AgentAddressAt(std::string_view peer_host, std::string_view reported);

}  // namespace gpuaas::instance
