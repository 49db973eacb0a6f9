#include "services/agent/runtime/workload_network.h"

#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "libs/common/files.h"
#include "libs/common/held_port.h"
#include "libs/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/agent/runtime/internal/network_util.h"
#include "services/agent/runtime/internal/node_rules.h"
#include "services/agent/runtime/internal/veth_network.h"

namespace gpuaas::agent {
namespace {

absl::Status CheckPorts(const std::map<int, int>& host_port_to_port) {
  for (const auto& [host_port, port] : host_port_to_port) {
    if (host_port < 1 || host_port > 65535 || port < 1 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "host_port_to_port: %d -> %d is not a pair of ports (1-65535)", host_port, port));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string NetnsPath(const std::string& dir) { return dir + "/netns"; }

absl::Status PrepareNodeNetwork(const std::vector<std::string>& lan_allowed) {
  std::vector<std::string> networks;
  for (const std::string& text : lan_allowed) {
    GPUAAS_ASSIGN_OR_RETURN(std::string network,
                            network_internal::Ipv4Network("lan_allowed", text));
    networks.push_back(std::move(network));
  }
  // The workloads' links are routed. A node that did not forward before now forwards between
  // all its interfaces (the chains judge only what involves a workload).
  GPUAAS_RETURN_IF_ERROR(network_internal::WriteProcFile("/proc/sys/net/ipv4/ip_forward", "1"));
  // The node's resolvers stay usable from workloads, as an image-less one reads this file.
  absl::StatusOr<std::string> resolv_conf = ReadFile("/etc/resolv.conf");
  return network_internal::RunTool(
      {std::string(network_internal::kNftPath), "-f", "-"},
      network_internal::NodeRules(
          networks, network_internal::Ipv4Nameservers(resolv_conf.ok() ? *resolv_conf : "")));
}

absl::Status CheckPortAccess(const PortAccess& access) {
  GPUAAS_RETURN_IF_ERROR(network_internal::Ipv4Address("address", access.address));
  if (access.proxy_sources.empty()) {
    return absl::InvalidArgumentError("proxy_sources: want at least one address");
  }
  for (const std::string& source : access.proxy_sources) {
    GPUAAS_RETURN_IF_ERROR(network_internal::Ipv4Address("proxy_sources", source));
  }
  return absl::OkStatus();
}

absl::Status CreateWorkloadNetwork(const std::string& dir,
                                   const std::map<int, int>& host_port_to_port, bool deny_egress,
                                   const PortAccess& access) {
  GPUAAS_RETURN_IF_ERROR(CheckPorts(host_port_to_port));
  GPUAAS_RETURN_IF_ERROR(CheckPortAccess(access));
  return network_internal::CreateVethNetwork(dir, host_port_to_port, deny_egress, access);
}

namespace {

// The key of one element of a forwards map as nft writes it: "a . b . port"; its port (the
// last part, the host port) in `port`. Empty for an element of another shape.
std::string ForwardKey(const nlohmann::json& key, int& port) {
  if (!key.is_object() || !key.contains("concat") || !key["concat"].is_array() ||
      key["concat"].empty() || !key["concat"].back().is_number_integer()) {
    return "";
  }
  std::vector<std::string> parts;
  for (const nlohmann::json& part : key["concat"]) {
    if (part.is_string()) {
      parts.push_back(part.get<std::string>());
    } else if (part.is_number_integer()) {
      parts.push_back(std::to_string(part.get<int>()));
    } else {
      return "";
    }
  }
  port = key["concat"].back().get<int>();
  return absl::StrJoin(parts, " . ");
}

}  // namespace

void DropUnheldForwards() {
  for (const char* map : {network_internal::kPublicPortsMap, network_internal::kPrivatePortsMap}) {
    FILE* nft = popen(absl::StrCat(network_internal::kNftPath, " -j list map inet ",
                                   network_internal::kNodeTable, " ", map, " 2>/dev/null")
                          .c_str(),
                      "r");
    if (nft == nullptr) continue;
    std::string text;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, nft)) > 0;) text.append(buf, n);
    pclose(nft);
    const nlohmann::json listing = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!listing.is_object()) continue;
    for (const nlohmann::json& item : listing.value("nftables", nlohmann::json::array())) {
      if (!item.contains("map")) continue;
      for (const nlohmann::json& elem : item["map"].value("elem", nlohmann::json::array())) {
        if (!elem.is_array() || elem.empty()) continue;
        int port = 0;
        const std::string key = ForwardKey(elem[0], port);
        if (key.empty() || !HoldTcpPort(port).valid()) continue;
        network_internal::RunTool({std::string(network_internal::kNftPath), "-f", "-"},
                                  absl::StrCat("delete element inet ", network_internal::kNodeTable,
                                               " ", map, " { ", key, " }\n"))
            .IgnoreError();
      }
    }
  }
}

void BindUnboundForwards(const std::string& workload_root, const PortAccess& access) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(workload_root, ec)) {
    network_internal::BindLegacyForwards(entry.path().string(), access).IgnoreError();
  }
}

absl::Status DestroyWorkloadNetwork(const std::string& dir) {
  return network_internal::DestroyVethNetwork(dir);
}

}  // namespace gpuaas::agent
