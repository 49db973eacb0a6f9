// Small pieces the workload network kinds share: descriptors, namespace files, /proc writes,
// running a tool, free host ports, a thread inside a network namespace. Private to
// workload_network (the runtime links only workload_network.h).
#pragma once

#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gpuaas::agent::network_internal {

// `what` and the text of the current errno.
std::string Errno(const std::string& what);

// A file descriptor closed at scope exit.
class Fd final {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// Whether `path` is a namespace file bind-mounted there (nsfs).
bool IsNamespaceMount(const std::string& path);

// Unmounts every layer at `path` and removes the file; a missing one is fine.
absl::Status RemoveMountedFile(const std::string& path);

// Writes `text` to a file that exists (/proc). Error: INTERNAL naming it.
absl::Status WriteProcFile(const std::string& path, const std::string& text);

// Bind-mounts `source` (a namespace file) on `target`, made if missing.
absl::Status BindOnto(const std::string& source, const std::string& target);

// FAILED_PRECONDITION naming the first host port a listener could not take now (a DNAT would
// shadow a node service).
absl::Status CheckHostPortsFree(const std::map<int, int>& host_port_to_port);

// Runs `args` (a path, then arguments) with `input` on its standard input and none of the
// caller's descriptors; its exit status must be 0. Error: FAILED_PRECONDITION with its output.
absl::Status RunTool(const std::vector<std::string>& args, const std::string& input);

// Runs `f` on a thread of its own moved into the network namespace at `netns` (setns moves
// only the calling thread; what it forks starts there too).
absl::Status InNetns(const std::string& netns, const std::function<absl::Status()>& f);

}  // namespace gpuaas::agent::network_internal
