#include "services/agent/runtime/oci_spec.h"

#include <algorithm>
#include <cerrno>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "services/agent/runtime/seccomp_policy.h"

namespace gpuaas::agent {
namespace {

using nlohmann::json;
namespace pb = ::gpuaas::instance::v1;

// The image's "uid[:gid]" inside the container; {0, 0} for a name or anything outside the
// container's 65536 ids (its gid is its uid's when only a uid is given).
std::pair<uint32_t, uint32_t> ImageUser(const std::string& user) {
  std::vector<std::string> parts = absl::StrSplit(user, ':');
  uint32_t uid = 0;
  uint32_t gid = 0;
  if (parts.empty() || parts.size() > 2 || !absl::SimpleAtoi(parts[0], &uid) || uid > 65535) {
    return {0, 0};
  }
  gid = uid;
  if (parts.size() == 2 && (!absl::SimpleAtoi(parts[1], &gid) || gid > 65535)) return {0, 0};
  return {uid, gid};
}

// What a limit of 0 means.
constexpr int64_t kDefaultPids = 32768;
constexpr int64_t kDefaultOpenFiles = 65536;
constexpr int64_t kCpuPeriodMicros = 100000;
// /dev/shm is memory the container pays for (its memory cgroup): half its memory, as PyTorch's
// data loaders need more than a few megabytes.
constexpr int64_t kDefaultShmBytes = 64LL << 20;

const char* const kDefaultPath =
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// As runc's and Docker's defaults.
const char* const kMaskedPaths[] = {"/proc/acpi",
                                    "/proc/asound",
                                    "/proc/kcore",
                                    "/proc/keys",
                                    "/proc/latency_stats",
                                    "/proc/timer_list",
                                    "/proc/timer_stats",
                                    "/proc/sched_debug",
                                    "/proc/scsi",
                                    "/sys/firmware",
                                    "/sys/devices/virtual/powercap",
                                    "/sys/fs/cgroup"};
const char* const kReadonlyPaths[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                      "/proc/sysrq-trigger"};

json Mount(std::string destination, std::string type, std::string source,
           std::vector<std::string> options) {
  return {{"destination", std::move(destination)},
          {"type", std::move(type)},
          {"source", std::move(source)},
          {"options", std::move(options)}};
}

// Later entries win over earlier ones of the same name; the order of first appearance stays.
std::vector<std::string> MergeEnv(const std::vector<std::vector<std::string>>& layers) {
  std::vector<std::string> order;
  std::map<std::string, std::string> value;
  for (const auto& layer : layers) {
    for (const std::string& kv : layer) {
      const std::string name = kv.substr(0, kv.find('='));
      if (value.count(name) == 0) order.push_back(name);
      value[name] = kv;
    }
  }
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const std::string& name : order) out.push_back(value[name]);
  return out;
}

json Seccomp() {
  json denied = json::array();
  for (const char* name : kDeniedSyscalls) denied.push_back(name);
  json syscalls = json::array();
  syscalls.push_back({{"names", denied}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", EPERM}});
  for (uint64_t flag : kNamespaceCloneFlags) {
    syscalls.push_back(
        {{"names", {"clone"}},
         {"action", "SCMP_ACT_ERRNO"},
         {"errnoRet", EPERM},
         {"args",
          {{{"index", 0}, {"value", flag}, {"valueTwo", flag}, {"op", "SCMP_CMP_MASKED_EQ"}}}}});
  }
  syscalls.push_back({{"names", {"clone3"}}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", ENOSYS}});
  return {{"defaultAction", "SCMP_ACT_ALLOW"},
          {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"}},
          {"syscalls", syscalls}};
}

}  // namespace

absl::StatusOr<json> BuildOciSpec(const ContainerSpecInputs& in) {
  const pb::Workload& w = *in.workload;
  std::vector<std::string> args;
  if (!w.cmd().empty()) {
    args = {"/bin/sh", "-c", w.cmd()};
  } else {
    args = in.image.entrypoint;
    args.insert(args.end(), in.image.cmd.begin(), in.image.cmd.end());
  }
  if (args.empty()) {
    return absl::InvalidArgumentError(
        "cmd: the template has none and the image has no entrypoint or cmd");
  }
  std::vector<std::string> workload_env;
  for (const pb::Env& e : w.envs()) workload_env.push_back(absl::StrCat(e.name(), "=", e.value()));
  const std::vector<std::string> env =
      MergeEnv({{kDefaultPath, "HOME=/root"}, in.image.env, workload_env, in.env});

  const std::pair<uint32_t, uint32_t> user = ImageUser(in.image.user);
  const pb::WorkloadLimits& limits = w.limits();
  int64_t open_files = limits.open_files() > 0 ? limits.open_files() : kDefaultOpenFiles;
  if (in.open_files_ceiling > 0) open_files = std::min(open_files, in.open_files_ceiling);
  json process = {
      {"terminal", false},
      {"user", {{"uid", user.first}, {"gid", user.second}}},
      {"args", args},
      {"env", env},
      {"cwd", in.image.working_dir.empty() ? "/" : in.image.working_dir},
      {"capabilities",
       {{"bounding", json::array()},
        {"effective", json::array()},
        {"inheritable", json::array()},
        {"permitted", json::array()},
        {"ambient", json::array()}}},
      {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", open_files}, {"soft", open_files}}}},
      {"noNewPrivileges", true},
      {"oomScoreAdj", 1000}};  // the node's own processes go last
  if (in.tenant_gid != 0) process["user"]["additionalGids"] = {kContainerTenantGid};

  const int64_t shm = limits.memory_bytes() > 0
                          ? std::max(kDefaultShmBytes, limits.memory_bytes() / 2)
                          : kDefaultShmBytes;
  json mounts = {
      Mount("/proc", "proc", "proc", {"nosuid", "noexec", "nodev"}),
      Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      Mount("/dev/pts", "devpts", "devpts",
            {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}),
      Mount("/dev/shm", "tmpfs", "shm",
            {"nosuid", "noexec", "nodev", "mode=1777", absl::StrCat("size=", shm)}),
      Mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      // The network namespace is the node's (owned by its user namespace), so sysfs cannot be
      // mounted afresh: the node's, read-only, with kMaskedPaths over it.
      Mount("/sys", "none", "/sys", {"rbind", "nosuid", "noexec", "nodev", "ro"}),
  };
  json device_rules = {{{"allow", false}, {"access", "rwm"}}};
  for (const ContainerDevice& d : in.devices) {
    mounts.push_back(Mount(d.container_path, "none", d.host_path, {"bind", "nosuid", "noexec"}));
    device_rules.push_back({{"allow", true},
                            {"type", std::string(1, d.type)},
                            {"major", d.major},
                            {"minor", d.minor},
                            {"access", "rwm"}});
  }
  for (const ContainerBind& b : in.binds) {
    std::vector<std::string> options = {"rbind", "nosuid", "nodev"};
    if (b.read_only) options.push_back("ro");
    mounts.push_back(Mount(b.container_path, "none", b.host_path, options));
  }

  json resources = {{"devices", device_rules},
                    {"pids", {{"limit", limits.pids() > 0 ? limits.pids() : kDefaultPids}}}};
  if (limits.memory_bytes() > 0) {
    // swap = memory: nothing beyond the limit goes to swap.
    resources["memory"] = {{"limit", limits.memory_bytes()}, {"swap", limits.memory_bytes()}};
  }
  if (limits.cpu_millis() > 0) {
    resources["cpu"] = {{"quota", limits.cpu_millis() * kCpuPeriodMicros / 1000},
                        {"period", kCpuPeriodMicros}};
  }
  json gid_mappings = {{{"containerID", 0}, {"hostID", in.id_base}, {"size", in.id_count}}};
  if (in.tenant_gid != 0) {
    gid_mappings.push_back(
        {{"containerID", kContainerTenantGid}, {"hostID", in.tenant_gid}, {"size", 1}});
  }
  json namespaces = {{{"type", "pid"}},   {{"type", "ipc"}},    {{"type", "uts"}},
                     {{"type", "mount"}}, {{"type", "cgroup"}}, {{"type", "user"}}};
  if (!in.netns_path.empty()) namespaces.push_back({{"type", "network"}, {"path", in.netns_path}});
  json linux_section = {
      {"uidMappings", {{{"containerID", 0}, {"hostID", in.id_base}, {"size", in.id_count}}}},
      {"gidMappings", gid_mappings},
      {"namespaces", namespaces},
      {"resources", resources},
      // Relative: under the agent's own cgroup, as the node's operator placed it.
      {"cgroupsPath", absl::StrCat("gpuaas/", w.workload_id())},
      {"maskedPaths", kMaskedPaths},
      {"readonlyPaths", kReadonlyPaths},
      {"seccomp", Seccomp()}};
  return json{{"ociVersion", "1.0.2"},
              {"process", process},
              {"root", {{"path", in.rootfs}, {"readonly", false}}},
              {"hostname", w.instance_id().empty() ? "workload" : w.instance_id()},
              {"mounts", mounts},
              {"linux", linux_section}};
}

}  // namespace gpuaas::agent
