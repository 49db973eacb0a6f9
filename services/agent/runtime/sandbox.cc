#include "services/agent/runtime/sandbox.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpuaas::agent {

std::map<std::string, std::string> ReadRootLinks() {
  std::map<std::string, std::string> links;
  for (const char* dir : {"/bin", "/sbin", "/lib", "/lib32", "/lib64"}) {
    struct stat st;
    if (lstat(dir, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = readlink(dir, target, sizeof target - 1);
      if (n > 0) links[dir] = std::string(target, n);
    } else if (S_ISDIR(st.st_mode)) {
      links[dir] = "";
    }
  }
  return links;
}

Launch BuildLaunch(const LaunchInputs& in) {
  const instance::v1::Workload& w = *in.workload;
  Launch l;
  std::vector<std::string>& a = l.bwrap_args;
  // --die-with-parent: a shim killed outright takes its workload along, so a workload the
  // runtime reports gone never keeps its GPUs.
  a = {"--die-with-parent",
       "--unshare-user",
       "--unshare-pid",
       "--unshare-ipc",
       "--disable-userns",
       "--cap-drop",
       "ALL",
       "--ro-bind",
       "/usr",
       "/usr",
       "--ro-bind",
       "/etc",
       "/etc"};
  for (const auto& [dir, target] : in.root_links) {
    if (target.empty()) {
      a.insert(a.end(), {"--ro-bind", dir, dir});
    } else {
      a.insert(a.end(), {"--symlink", target, dir});
    }
  }
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  for (const std::string& uuid : w.gpu_uuids()) {
    auto it = in.gpu_minor.find(uuid);
    if (it == in.gpu_minor.end()) continue;
    const std::string dev = absl::StrCat("/dev/nvidia", it->second);
    a.insert(a.end(), {"--dev-bind-try", dev, dev});
  }
  if (w.gpu_uuids_size() > 0) {
    for (const char* dev : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) {
      a.insert(a.end(), {"--dev-bind-try", dev, dev});
    }
  }
  l.binds.push_back({in.home, kSandboxHome, false});
  a.insert(a.end(), {"--bind", in.home, kSandboxHome});
  for (int i = 0; i < w.mounts_size(); ++i) {
    const auto& m = w.mounts(i);
    const std::string source =
        m.sub_path().empty() ? m.host_path() : absl::StrCat(m.host_path(), "/", m.sub_path());
    l.binds.push_back({source, m.mount_path(), m.read_only()});
    if (i < static_cast<int>(in.mount_fds.size())) {
      a.insert(a.end(), {m.read_only() ? "--ro-bind-fd" : "--bind-fd",
                         std::to_string(in.mount_fds[i]), m.mount_path()});
    } else {
      a.insert(a.end(), {m.read_only() ? "--ro-bind" : "--bind", source, m.mount_path()});
    }
  }
  a.insert(a.end(), {"--chdir", kSandboxHome, "--", "/bin/sh", "-c", w.cmd()});

  std::vector<std::string>& env = l.env;
  env = {"PATH=/usr/local/bin:/usr/bin:/bin", absl::StrCat("HOME=", kSandboxHome), "LANG=C.UTF-8"};
  for (const auto& e : w.envs()) env.push_back(absl::StrCat(e.name(), "=", e.value()));
  const std::string gpus = absl::StrJoin(w.gpu_uuids(), ",");
  // A MIG partition is named by its GPU and slice until NVML resolves MIG device UUIDs here.
  const std::string devices =
      w.mig_partition().empty() ? gpus : absl::StrCat(gpus, ":", w.mig_partition());
  env.push_back(absl::StrCat("CUDA_VISIBLE_DEVICES=", devices));
  env.push_back(absl::StrCat("NVIDIA_VISIBLE_DEVICES=", devices.empty() ? "none" : devices));
  env.push_back(absl::StrCat("GPUAAS_INSTANCE_ID=", w.instance_id()));
  env.push_back(absl::StrCat("GPUAAS_WORKLOAD_ID=", w.workload_id()));
  for (const auto& [port, host_port] : in.host_ports) {
    env.push_back(absl::StrCat("GPUAAS_PORT_", port, "=", host_port));
  }
  return l;
}

}  // namespace gpuaas::agent
