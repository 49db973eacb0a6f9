#include "services/agent/runtime/internal/node_rules.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuaas::agent::network_internal {

// Each workload's host end is gpw<n> (its namespace's end is eth0), and what arrives from one
// is the workload's own traffic. Nothing new from a workload to the
// node (input), nor into a workload but through a declared port (forward, and output for the
// node's own processes); egress masqueraded behind the node, refused for the workloads in
// veth_no_egress; host ports DNATed to the workload's address (veth_ports), from loopback too
// (route_localnet on the host end, the source masqueraded). Refused at once (a TCP reset, an
// ICMP error), not dropped: the workload sees a refusal instead of a timeout.
std::string NodeRules() {
  const std::string kRefuseTcp = "meta l4proto tcp counter reject with tcp reset";
  const std::string kRefuse = "counter reject with icmpx admin-prohibited";
  struct Chain {
    const char* name;
    const char* hook;
    std::vector<std::string> rules;
  };
  const std::vector<Chain> chains = {
      {"output",
       "type filter hook output priority filter; policy accept;",
       {absl::StrCat("oifname \"gpw*\" ct state new ct status != dnat ", kRefuseTcp),
        absl::StrCat("oifname \"gpw*\" ct state new ct status != dnat ", kRefuse)}},
      {"veth_dnat_in",
       "type nat hook prerouting priority dstnat; policy accept;",
       {"iifname != \"gpw*\" fib daddr type local dnat ip to tcp dport map @veth_ports"}},
      {"veth_dnat_local",
       "type nat hook output priority -100; policy accept;",
       {"fib daddr type local dnat ip to tcp dport map @veth_ports"}},
      {"veth_snat",
       "type nat hook postrouting priority srcnat; policy accept;",
       {"oifname \"gpw*\" ip saddr 127.0.0.0/8 masquerade",
        "iifname \"gpw*\" oifname != \"gpw*\" masquerade"}},
      {"veth_input",
       "type filter hook input priority filter; policy accept;",
       {"iifname \"gpw*\" ct state { established, related } accept",
        absl::StrCat("iifname \"gpw*\" ", kRefuseTcp), absl::StrCat("iifname \"gpw*\" ", kRefuse)}},
      {"veth_forward",
       "type filter hook forward priority filter; policy accept;",
       {"oifname \"gpw*\" ct state { established, related } accept",
        "oifname \"gpw*\" ct status dnat accept", absl::StrCat("oifname \"gpw*\" ", kRefuseTcp),
        absl::StrCat("oifname \"gpw*\" ", kRefuse),
        absl::StrCat("iifname @veth_no_egress ", kRefuseTcp),
        absl::StrCat("iifname @veth_no_egress ", kRefuse)}},
  };
  // Added where missing, each chain flushed and refilled, in one transaction: never a moment
  // without the rules, and the workloads' map and set elements stay (an agent restart).
  std::string text = absl::StrFormat(
      "add table inet %1$s\n"
      "add map inet %1$s veth_ports { type inet_service : ipv4_addr . inet_service; }\n"
      "add set inet %1$s veth_no_egress { type ifname; }\n",
      kNodeTable);
  for (const Chain& chain : chains) {
    absl::StrAppend(&text, "add chain inet ", kNodeTable, " ", chain.name, " { ", chain.hook,
                    " }\n", "flush chain inet ", kNodeTable, " ", chain.name, "\n");
    for (const std::string& rule : chain.rules) {
      absl::StrAppend(&text, "add rule inet ", kNodeTable, " ", chain.name, " ", rule, "\n");
    }
  }
  return text;
}

}  // namespace gpuaas::agent::network_internal
