#include "services/agent/runtime/internal/veth_network.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"
#include "services/agent/runtime/internal/network_util.h"
#include "services/agent/runtime/internal/node_rules.h"
#include "services/agent/runtime/workload_network.h"

namespace gpuaas::agent::network_internal {
namespace {

constexpr int kVethSlots = 16384;  // the /30s of 10.222.0.0/16
constexpr std::string_view kIpPath = "/usr/sbin/ip";

std::string VethStatePath(const std::string& dir) { return dir + "/veth"; }
std::string HostEnd(int slot) { return absl::StrCat("gpw", slot); }
std::string SlotAddress(int slot, int host) {
  const uint32_t a = (10u << 24) | (222u << 16) | (static_cast<uint32_t>(slot) * 4 + host);
  return absl::StrFormat("%d.%d.%d.%d", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

struct VethState {
  int slot = -1;
  bool deny_egress = false;
  std::map<int, int> ports;
  // Who reaches the ports where (empty address: a network made before ports were bound to an
  // address, its forwards in the old veth_ports map by host port alone).
  PortAccess access;
  bool legacy = false;
};

// "slot deny [address source,source...]", then "host_port port [public]" per port.
absl::StatusOr<VethState> ReadVethState(const std::string& dir) {
  GPUAAS_ASSIGN_OR_RETURN(std::string text, ReadFile(VethStatePath(dir)));
  const auto bad = [&] {
    return absl::DataLossError(absl::StrCat(VethStatePath(dir), " is not a veth state"));
  };
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.empty()) return bad();
  VethState state;
  std::vector<std::string> head = absl::StrSplit(lines[0], ' ', absl::SkipEmpty());
  if (head.size() < 2 || !absl::SimpleAtoi(head[0], &state.slot)) return bad();
  state.deny_egress = head[1] != "0";
  state.legacy = head.size() < 4;
  state.access.proxy_sources.clear();
  if (!state.legacy) {
    state.access.address = head[2];
    state.access.proxy_sources =
        std::vector<std::string>(absl::StrSplit(head[3], ',', absl::SkipEmpty()));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = absl::StrSplit(lines[i], ' ', absl::SkipEmpty());
    int host_port = 0, port = 0;
    if (f.size() < 2 || !absl::SimpleAtoi(f[0], &host_port) || !absl::SimpleAtoi(f[1], &port)) {
      return bad();
    }
    state.ports[host_port] = port;
    if (f.size() > 2 && f[2] == "public") state.access.public_host_ports.insert(host_port);
  }
  return state;
}

absl::Status WriteVethState(const std::string& dir, const VethState& state) {
  std::string text =
      absl::StrCat(state.slot, " ", state.deny_egress ? 1 : 0, " ", state.access.address, " ",
                   absl::StrJoin(state.access.proxy_sources, ","), "\n");
  for (const auto& [host_port, port] : state.ports) {
    absl::StrAppend(&text, host_port, " ", port,
                    state.access.public_host_ports.contains(host_port) ? " public" : "", "\n");
  }
  Fd fd(open(VethStatePath(dir).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0 || write(fd.get(), text.data(), text.size()) != ssize_t(text.size())) {
    return absl::InternalError(Errno(absl::StrCat("write ", VethStatePath(dir))));
  }
  return absl::OkStatus();
}

// A network namespace owned by the node's user namespace (a container joining it from its own
// has no capability over it), bind-mounted at NetnsPath(dir).
absl::Status MakeNetns(const std::string& dir) {
  absl::Status status;
  std::thread([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      status = absl::InternalError(Errno("unshare a network namespace"));
      return;
    }
    status = BindOnto("/proc/thread-self/ns/net", NetnsPath(dir));
  }).join();
  return status;
}

bool LinkExists(const std::string& name) {
  struct stat st;
  return stat(absl::StrCat("/sys/class/net/", name).c_str(), &st) == 0;
}

// The workload's forwards and egress policy as nft elements, one line per map or set
// ("element inet TABLE MAP { ... }"); `keys_only` for deleting them.
std::string VethElements(const VethState& state, bool keys_only = false) {
  std::vector<std::string> public_ports, private_ports, legacy_ports;
  for (const auto& [host_port, port] : state.ports) {
    const std::string to =
        keys_only ? "" : absl::StrCat(" : ", SlotAddress(state.slot, 2), " . ", port);
    if (state.legacy) {
      legacy_ports.push_back(absl::StrCat(host_port, to));
    } else if (state.access.public_host_ports.contains(host_port)) {
      public_ports.push_back(absl::StrCat(state.access.address, " . ", host_port, to));
    } else {
      for (const std::string& source : state.access.proxy_sources) {
        private_ports.push_back(
            absl::StrCat(source, " . ", state.access.address, " . ", host_port, to));
      }
    }
  }
  std::string text;
  for (const auto& [map, elements] : {std::pair<absl::string_view, const std::vector<std::string>*>{
                                          kPublicPortsMap, &public_ports},
                                      {kPrivatePortsMap, &private_ports},
                                      {"veth_ports", &legacy_ports}}) {
    if (!elements->empty()) {
      absl::StrAppend(&text, "element inet ", kNodeTable, " ", map, " { ",
                      absl::StrJoin(*elements, ", "), " }\n");
    }
  }
  if (state.deny_egress) {
    absl::StrAppend(&text, "element inet ", kNodeTable, " veth_no_egress { \"", HostEnd(state.slot),
                    "\" }\n");
  }
  return text;
}

}  // namespace

absl::Status DestroyVethNetwork(const std::string& dir) {
  absl::StatusOr<VethState> state = ReadVethState(dir);
  if (state.ok()) {
    const std::string elements = VethElements(*state, /*keys_only=*/true);
    if (!elements.empty()) {
      // Each on its own: one already gone must not keep the others.
      for (absl::string_view line : absl::StrSplit(elements, '\n', absl::SkipEmpty())) {
        RunTool({std::string(kNftPath), "-f", "-"}, absl::StrCat("delete ", line, "\n"))
            .IgnoreError();
      }
    }
    if (LinkExists(HostEnd(state->slot))) {
      GPUAAS_RETURN_IF_ERROR(
          RunTool({std::string(kIpPath), "link", "del", HostEnd(state->slot)}, ""));
    }
  }
  GPUAAS_RETURN_IF_ERROR(RemoveMountedFile(NetnsPath(dir)));
  if (unlink(VethStatePath(dir).c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(Errno(absl::StrCat("remove ", VethStatePath(dir))));
  }
  return absl::OkStatus();
}

namespace {

absl::Status AddElements(const VethState& state) {
  const std::string elements = VethElements(state);
  if (elements.empty()) return absl::OkStatus();
  return RunTool(
      {std::string(kNftPath), "-f", "-"},
      absl::StrCat("add ",
                   absl::StrJoin(absl::StrSplit(elements, '\n', absl::SkipEmpty()), "\nadd "),
                   "\n"));
}

absl::Status MakeVeth(const std::string& dir, VethState& state) {
  GPUAAS_RETURN_IF_ERROR(MakeNetns(dir));
  const size_t start = std::hash<std::string>()(dir) % kVethSlots;
  absl::Status linked = absl::ResourceExhaustedError("no free workload link slot");
  for (size_t i = 0; i < 64 && !linked.ok(); ++i) {
    state.slot = static_cast<int>((start + i) % kVethSlots);
    if (LinkExists(HostEnd(state.slot))) continue;
    const std::string host = HostEnd(state.slot);
    linked = RunTool({std::string(kIpPath), "-batch", "-"},
                     absl::StrCat("link add ", host, " type veth peer name eth0 netns ",
                                  NetnsPath(dir), "\naddr add ", SlotAddress(state.slot, 1),
                                  "/30 dev ", host, "\nlink set ", host, " up\n"));
    if (!linked.ok() && linked.message().find("File exists") == std::string_view::npos) {
      return linked;
    }
  }
  GPUAAS_RETURN_IF_ERROR(linked);
  GPUAAS_RETURN_IF_ERROR(WriteVethState(dir, state));
  // The node's loopback DNATed to the workload leaves through this link with 127.0.0.1 as its
  // source until masqueraded; the input chain refuses the workload's own packets to 127/8.
  GPUAAS_RETURN_IF_ERROR(WriteProcFile(
      absl::StrCat("/proc/sys/net/ipv4/conf/", HostEnd(state.slot), "/route_localnet"), "1"));
  GPUAAS_RETURN_IF_ERROR(InNetns(NetnsPath(dir), [&] {
    // Its ports below 1024 are its own to bind (an sshd on 22), as Docker lets containers: the
    // container holds no capability over the namespace, and the ports live only inside it.
    GPUAAS_RETURN_IF_ERROR(WriteProcFile("/proc/sys/net/ipv4/ip_unprivileged_port_start", "0"));
    return RunTool({std::string(kIpPath), "-batch", "-"},
                   absl::StrCat("addr add ", SlotAddress(state.slot, 2),
                                "/30 dev eth0\nlink set eth0 up\nlink set lo up\nroute add "
                                "default via ",
                                SlotAddress(state.slot, 1), "\n"));
  }));
  return AddElements(state);
}

// A live network made before forwards were bound to an address (an agent upgraded under its
// workloads): its forwards in the old map, which no rule reads any more, move to the new ones.
absl::Status BindForwards(const std::string& dir, VethState state, const PortAccess& access) {
  for (absl::string_view line :
       absl::StrSplit(VethElements(state, /*keys_only=*/true), '\n', absl::SkipEmpty())) {
    RunTool({std::string(kNftPath), "-f", "-"}, absl::StrCat("delete ", line, "\n")).IgnoreError();
  }
  state.legacy = false;
  state.access = access;
  GPUAAS_RETURN_IF_ERROR(WriteVethState(dir, state));
  return AddElements(state);
}

}  // namespace

absl::Status BindLegacyForwards(const std::string& dir, const PortAccess& access) {
  absl::StatusOr<VethState> live = ReadVethState(dir);
  if (!live.ok() || !live->legacy || !IsNamespaceMount(NetnsPath(dir)) ||
      !LinkExists(HostEnd(live->slot))) {
    return absl::OkStatus();
  }
  return BindForwards(dir, *live, access);
}

absl::Status CreateVethNetwork(const std::string& dir, const std::map<int, int>& host_port_to_port,
                               bool deny_egress, const PortAccess& access) {
  absl::StatusOr<VethState> live = ReadVethState(dir);
  if (live.ok() && IsNamespaceMount(NetnsPath(dir)) && LinkExists(HostEnd(live->slot))) {
    return live->legacy ? BindForwards(dir, *live, access) : absl::OkStatus();
  }
  GPUAAS_RETURN_IF_ERROR(CheckHostPortsFree(host_port_to_port));
  GPUAAS_RETURN_IF_ERROR(DestroyVethNetwork(dir));  // a half-made one
  VethState state;
  state.deny_egress = deny_egress;
  state.ports = host_port_to_port;
  state.access = access;
  absl::Status made = MakeVeth(dir, state);
  if (!made.ok()) DestroyVethNetwork(dir).IgnoreError();
  return made;
}

}  // namespace gpuaas::agent::network_internal
