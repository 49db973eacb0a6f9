#include "services/agent/runtime/internal/node_rules.h"

#include <arpa/inet.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpuaas::agent::network_internal {
namespace {

// Where a workload's egress may not go unless the operator allows it: link-local (a cloud's
// metadata service at 169.254.169.254 hands out the node's credentials), the private ranges and
// carrier-grade NAT's (the node's LAN, other nodes, internal services). The node's own
// addresses are refused on input already.
constexpr char kLanRanges[] =
    "169.254.0.0/16, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10";

}  // namespace

absl::StatusOr<std::string> Ipv4Network(const std::string& field, const std::string& text) {
  const size_t slash = text.find('/');
  const std::string address = text.substr(0, slash);
  int prefix = 32;
  in_addr parsed{};
  if (inet_pton(AF_INET, address.c_str(), &parsed) != 1 ||
      (slash != std::string::npos &&
       (!absl::SimpleAtoi(text.substr(slash + 1), &prefix) || prefix < 0 || prefix > 32))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: \"%s\" is not an IPv4 network (a.b.c.d/n, or an address)", field, text));
  }
  const uint32_t host_bits = prefix == 32 ? 0 : 0xffffffffu >> prefix;
  if ((ntohl(parsed.s_addr) & host_bits) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" has bits set beyond its /%d", field, text, prefix));
  }
  return absl::StrCat(address, "/", prefix);
}

absl::Status Ipv4Address(const std::string& field, const std::string& text) {
  in_addr parsed{};
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" is not an IPv4 address", field, text));
  }
  return absl::OkStatus();
}

// Each workload's host end is gpw<n> (its namespace's end is eth0), and what arrives from one
// is the workload's own traffic. Nothing new from a workload to the
// node (input), nor into a workload but through a declared port (forward, and output for the
// node's own processes); egress masqueraded behind the node, refused for the workloads in
// veth_no_egress, and for the others refused to the LAN ranges (veth_lan) but what the
// operator allows (veth_lan_allowed); host ports DNATed to the workload's address, only when
// the connection is to the node address the proxy uses, from anyone for a public port
// (veth_public_ports) and from a proxy's address for a private one (veth_private_ports), from
// loopback too (route_localnet on the host end, the source masqueraded). Whatever matches no
// forward stays the node's: the host port there is the agent's, held closed. Refused at once (a
// TCP reset, an ICMP error), not dropped: the workload sees a refusal instead of a timeout.
std::vector<std::string> Ipv4Nameservers(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    in_addr parsed{};
    if (words.size() >= 2 && words[0] == "nameserver" &&
        inet_pton(AF_INET, std::string(words[1]).c_str(), &parsed) == 1) {
      out.emplace_back(words[1]);
    }
  }
  return out;
}

std::string NodeRules(const std::vector<std::string>& lan_allowed,
                      const std::vector<std::string>& resolvers) {
  const std::string kRefuseTcp = "meta l4proto tcp counter reject with tcp reset";
  const std::string kRefuse = "counter reject with icmpx admin-prohibited";
  const std::string kDnatPublic =
      absl::StrCat("dnat ip to ip daddr . tcp dport map @", kPublicPortsMap);
  const std::string kDnatPrivate =
      absl::StrCat("dnat ip to ip saddr . ip daddr . tcp dport map @", kPrivatePortsMap);
  const std::string kToLan =
      "iifname \"gpw*\" ct state != { established, related } ip daddr @veth_lan "
      "ip daddr != @veth_lan_allowed ";
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
      // The forwards of workloads made by agents before forwards were bound to an address
      // (veth_ports, by host port alone): empty once an agent of this version has started on
      // the node (BindUnboundForwards moves them), kept so that an older agent beside it
      // (another build on a test machine) still serves its own.
      {"veth_dnat_in",
       "type nat hook prerouting priority dstnat; policy accept;",
       {"iifname != \"gpw*\" fib daddr type local dnat ip to tcp dport map @veth_ports"}},
      {"veth_dnat_local",
       "type nat hook output priority -100; policy accept;",
       {"fib daddr type local dnat ip to tcp dport map @veth_ports"}},
      // Chains of their own, which an older agent's rules never flush.
      {"veth_forwards_in",
       "type nat hook prerouting priority dstnat; policy accept;",
       {absl::StrCat("iifname != \"gpw*\" ", kDnatPublic),
        absl::StrCat("iifname != \"gpw*\" ", kDnatPrivate)}},
      {"veth_forwards_local",
       "type nat hook output priority -100; policy accept;",
       {kDnatPublic, kDnatPrivate}},
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
        absl::StrCat("iifname @veth_no_egress ", kRefuse),
        // DNS to the node's resolvers, which are usually on the LAN: workloads resolve names as
        // the node does, and reach nothing else there.
        "iifname \"gpw*\" ip daddr @veth_dns meta l4proto { tcp, udp } th dport 53 accept",
        // Whatever is not a reply (new, invalid or untracked), so that nothing reaches the LAN.
        absl::StrCat(kToLan, kRefuseTcp), absl::StrCat(kToLan, kRefuse)}},
  };
  // Added where missing, each chain flushed and refilled, in one transaction: never a moment
  // without the rules, and the workloads' map and set elements stay (an agent restart).
  std::string text = absl::StrFormat(
      "add table inet %1$s\n"
      "add map inet %1$s veth_ports { type inet_service : ipv4_addr . inet_service; }\n"
      "add map inet %1$s %3$s { type ipv4_addr . inet_service : ipv4_addr . inet_service; }\n"
      "add map inet %1$s %4$s "
      "{ type ipv4_addr . ipv4_addr . inet_service : ipv4_addr . inet_service; }\n"
      "add set inet %1$s veth_no_egress { type ifname; }\n"
      "add set inet %1$s veth_lan { type ipv4_addr; flags interval; auto-merge; }\n"
      "flush set inet %1$s veth_lan\n"
      "add element inet %1$s veth_lan { %2$s }\n"
      "add set inet %1$s veth_lan_allowed { type ipv4_addr; flags interval; auto-merge; }\n"
      "flush set inet %1$s veth_lan_allowed\n"
      "add set inet %1$s veth_dns { type ipv4_addr; }\n"
      "flush set inet %1$s veth_dns\n",
      kNodeTable, kLanRanges, kPublicPortsMap, kPrivatePortsMap);
  if (!resolvers.empty()) {
    absl::StrAppend(&text, "add element inet ", kNodeTable, " veth_dns { ",
                    absl::StrJoin(resolvers, ", "), " }\n");
  }
  if (!lan_allowed.empty()) {
    absl::StrAppend(&text, "add element inet ", kNodeTable, " veth_lan_allowed { ",
                    absl::StrJoin(lan_allowed, ", "), " }\n");
  }
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
