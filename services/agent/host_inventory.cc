#include "services/agent/host_inventory.h"

#include <sched.h>
#include <sys/statvfs.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/common/files.h"
#include "libs/common/quantity.h"

namespace gpuaas::agent {

int CountCpuinfoProcessors(std::string_view cpuinfo) {
  int count = 0;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(cpuinfo.data(), cpuinfo.size()), '\n')) {
    // "processor\t: 3"; other keys merely start with "processor" on some architectures.
    if (!absl::ConsumePrefix(&line, "processor")) {
      continue;
    }
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::StartsWith(line, ":")) {
      ++count;
    }
  }
  return count;
}

absl::StatusOr<int64_t> ParseMemTotal(std::string_view meminfo) {
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(meminfo.data(), meminfo.size()), '\n')) {
    if (!absl::ConsumePrefix(&line, "MemTotal:")) {
      continue;
    }
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    int64_t kib = 0;
    if (fields.size() != 2 || fields[1] != "kB" || !absl::SimpleAtoi(fields[0], &kib) || kib <= 0 ||
        kib > (INT64_MAX >> 10)) {
      return absl::InvalidArgumentError(
          absl::StrCat("meminfo: unreadable MemTotal line \"", line, "\""));
    }
    return kib << 10;
  }
  return absl::InvalidArgumentError("meminfo: no MemTotal line");
}

absl::StatusOr<HostCapacity> MeasureHost(const std::string& disk_path) {
  HostCapacity out;
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    cpus = CPU_COUNT(&set);
  }
  if (cpus <= 0) {
    absl::StatusOr<std::string> cpuinfo = ReadFile("/proc/cpuinfo");
    if (cpuinfo.ok()) {
      cpus = CountCpuinfoProcessors(*cpuinfo);
    }
  }
  if (cpus <= 0) {
    return absl::FailedPreconditionError("cannot count CPUs (sched_getaffinity, /proc/cpuinfo)");
  }
  out.cpu_millis = int64_t{cpus} * 1000;

  absl::StatusOr<std::string> meminfo = ReadFile("/proc/meminfo");
  if (!meminfo.ok()) {
    return absl::FailedPreconditionError(meminfo.status().message());
  }
  absl::StatusOr<int64_t> memory = ParseMemTotal(*meminfo);
  if (!memory.ok()) {
    return absl::FailedPreconditionError(memory.status().message());
  }
  out.memory_bytes = *memory;

  struct statvfs fs {};
  if (statvfs(disk_path.c_str(), &fs) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--disk-path ", disk_path, ": statvfs failed"));
  }
  out.disk_bytes = static_cast<int64_t>(fs.f_blocks) * static_cast<int64_t>(fs.f_frsize);
  if (out.disk_bytes <= 0) {
    return absl::FailedPreconditionError(absl::StrCat("--disk-path ", disk_path, ": size 0"));
  }
  return out;
}

HostCapacity SimulatedCapacity(int gpu_count) {
  const int64_t n = std::max(gpu_count, 1);
  return {.cpu_millis = n * kSimulatedCpuPerGpu * 1000,
          .memory_bytes = n * kSimulatedMemoryPerGpu,
          .disk_bytes = n * kSimulatedDiskPerGpu};
}

absl::StatusOr<HostCapacity> ApplyOverrides(HostCapacity base, const CapacityOverrides& o) {
  if (!o.cpu.empty()) {
    absl::StatusOr<int64_t> cpu = ParseCpuMillis("--cpu", o.cpu);
    if (!cpu.ok()) {
      return cpu.status();
    }
    base.cpu_millis = *cpu;
  }
  if (!o.memory.empty()) {
    absl::StatusOr<int64_t> memory = ParseBytes("--memory", o.memory);
    if (!memory.ok()) {
      return memory.status();
    }
    base.memory_bytes = *memory;
  }
  if (!o.disk.empty()) {
    absl::StatusOr<int64_t> disk = ParseBytes("--disk", o.disk);
    if (!disk.ok()) {
      return disk.status();
    }
    base.disk_bytes = *disk;
  }
  return base;
}

}  // namespace gpuaas::agent
