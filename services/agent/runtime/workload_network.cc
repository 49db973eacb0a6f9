#include "services/agent/runtime/workload_network.h"

#include <sys/stat.h>

#include "absl/strings/str_format.h"
#include "libs/common/status_macros.h"
#include "services/agent/runtime/internal/network_util.h"
#include "services/agent/runtime/internal/node_rules.h"
#include "services/agent/runtime/internal/pasta_network.h"
#include "services/agent/runtime/internal/veth_network.h"

namespace gpuaas::agent {
namespace {

using network_internal::Errno;

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

absl::Status PrepareNodeNetwork(const NetworkOptions& options) {
  if (options.egress_uid == 0 || options.no_egress_uid == 0 ||
      options.egress_uid == options.no_egress_uid) {
    return absl::InvalidArgumentError(
        absl::StrFormat("egress_uid (%d) and no_egress_uid (%d) must be two distinct non-root ids",
                        options.egress_uid, options.no_egress_uid));
  }
  if (options.kind == NetworkKind::kVeth) {
    // The workloads' links are routed. A node that did not forward before now forwards between
    // all its interfaces (the veth chains judge only what involves a workload).
    GPUAAS_RETURN_IF_ERROR(network_internal::WriteProcFile("/proc/sys/net/ipv4/ip_forward", "1"));
  }
  struct stat st;
  if (stat("/dev/net/tun", &st) != 0) {
    return absl::FailedPreconditionError(Errno("/dev/net/tun (pasta needs the tun driver)"));
  }
  if ((st.st_mode & 0666) != 0666 && chmod("/dev/net/tun", 0666) != 0) {
    return absl::FailedPreconditionError(Errno("chmod 0666 /dev/net/tun"));
  }
  return network_internal::RunTool({options.nft_path, "-f", "-"},
                                   network_internal::NodeRules(options));
}

absl::Status CreateWorkloadNetwork(const NetworkOptions& options, const std::string& dir,
                                   const std::map<int, int>& host_port_to_port, bool deny_egress) {
  GPUAAS_RETURN_IF_ERROR(CheckPorts(host_port_to_port));
  if (options.kind == NetworkKind::kVeth) {
    return network_internal::CreateVethNetwork(dir, host_port_to_port, deny_egress);
  }
  return network_internal::CreatePastaNetwork(options, dir, host_port_to_port, deny_egress);
}

absl::Status DestroyWorkloadNetwork(const std::string& dir) {
  // Either kind: each finds its own pieces and leaves the rest.
  GPUAAS_RETURN_IF_ERROR(network_internal::DestroyVethNetwork(dir));
  return network_internal::DestroyPastaNetwork(dir);
}

}  // namespace gpuaas::agent
