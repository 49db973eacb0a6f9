// The files a workload's shim and the runtime share in the workload's directory: who the shim
// is, whether it was told to stop, and how the workload ended. Written atomically (temp file +
// rename), so a reader never sees half a line, whichever process dies when.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace gpuaas::agent {

struct WorkloadExit {
  int code = 0;             // exit status, or 128+N for signal N
  bool stopped = false;     // it ended because it was told to stop
  bool oom_killed = false;  // the kernel killed a process of it for its memory limit
};

class ShimFiles final {
 public:
  explicit ShimFiles(std::string dir) : dir_(std::move(dir)) {}

  // "<pid> <start time>" in `shim`.
  void WriteShim(pid_t pid) const;
  // The shim's pid while that very process runs (its start time matches), else nullopt.
  std::optional<pid_t> LiveShim() const;

  void MarkStopping() const;
  bool Stopping() const;

  void WriteExit(int code, bool stopped, bool oom_killed = false) const;
  std::optional<WorkloadExit> ReadExit() const;

  // The start time of `pid` in clock ticks since boot (/proc/<pid>/stat field 22); nullopt when
  // no such process.
  static std::optional<uint64_t> StartTime(pid_t pid);

 private:
  void WriteAtomically(const std::string& name, const std::string& text) const;

  std::string dir_;
};

}  // namespace gpuaas::agent
