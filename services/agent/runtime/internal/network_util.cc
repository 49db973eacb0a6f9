#include "services/agent/runtime/internal/network_util.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gpuaas::agent::network_internal {

std::string Errno(const std::string& what) { return absl::StrCat(what, ": ", strerror(errno)); }

bool IsNamespaceMount(const std::string& path) {
  struct statfs fs;
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == NSFS_MAGIC;
}

// Unmounts every layer at `path` and removes the file; a missing one is fine.
absl::Status RemoveMountedFile(const std::string& path) {
  while (IsNamespaceMount(path)) {
    if (umount2(path.c_str(), MNT_DETACH) != 0) {
      return absl::InternalError(Errno(absl::StrCat("unmount ", path)));
    }
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(Errno(absl::StrCat("remove ", path)));
  }
  return absl::OkStatus();
}

absl::Status WriteProcFile(const std::string& path, const std::string& text) {
  Fd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0 || write(fd.get(), text.data(), text.size()) != ssize_t(text.size())) {
    return absl::InternalError(Errno(absl::StrCat("write ", path)));
  }
  return absl::OkStatus();
}

absl::Status BindOnto(const std::string& source, const std::string& target) {
  Fd file(open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0444));
  if (file.get() < 0) return absl::InternalError(Errno(absl::StrCat("create ", target)));
  if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return absl::InternalError(Errno(absl::StrCat("bind-mount ", source, " on ", target)));
  }
  return absl::OkStatus();
}

// Whether a TCP listener could take `port` on every address of `family` now.
namespace {

bool PortFree(int family, int port) {
  Fd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return family == AF_INET6;  // a node without IPv6
  const int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage addr{};
  socklen_t len;
  if (family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v4;
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    len = sizeof *v6;
  }
  return bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0;
}

}  // namespace

absl::Status CheckHostPortsFree(const std::map<int, int>& host_port_to_port) {
  for (const auto& [host_port, port] : host_port_to_port) {
    if (!PortFree(AF_INET, host_port) || !PortFree(AF_INET6, host_port)) {
      return absl::FailedPreconditionError(
          absl::StrFormat("host_port_to_port: host port %d is taken", host_port));
    }
  }
  return absl::OkStatus();
}

// Runs `argv` with `input` on its standard input; its exit status must be 0.
absl::Status RunTool(const std::vector<std::string>& args, const std::string& input) {
  int in[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError(Errno("pipe"));
  Fd in_read(in[0]), in_write(in[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return absl::InternalError(Errno("pipe"));
  Fd err_read(err[0]), err_write(err[1]);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) return absl::InternalError(Errno("fork"));
  if (child == 0) {
    dup2(in[0], 0);
    dup2(err[1], 1);
    dup2(err[1], 2);
    syscall(SYS_close_range, 3, ~0U, 0);  // none of the agent's descriptors
    execv(argv[0], argv.data());
    _exit(127);
  }
  in_read.Reset();
  err_write.Reset();
  // Far below the pipe's buffer: written whole before the tool reads.
  const bool written = write(in_write.get(), input.data(), input.size()) == ssize_t(input.size());
  in_write.Reset();
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = read(err_read.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  int wstatus = 0;
  while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!written || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s failed: %s", absl::StrJoin(args, " "), output));
  }
  return absl::OkStatus();
}

// Runs `f` on a thread of its own moved into the network namespace at `netns` (setns moves
// only the calling thread; what it forks starts there too).
absl::Status InNetns(const std::string& netns, const std::function<absl::Status()>& f) {
  absl::Status status;
  std::thread([&] {
    Fd ns(open(netns.c_str(), O_RDONLY | O_CLOEXEC));
    if (ns.get() < 0 || setns(ns.get(), CLONE_NEWNET) != 0) {
      status = absl::InternalError(Errno(absl::StrCat("join ", netns)));
      return;
    }
    status = f();
  }).join();
  return status;
}

}  // namespace gpuaas::agent::network_internal
