#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/rpc/metrics.h"

namespace gpuaas::rpc {
namespace {

// Second field of /proc/self/statm: resident pages.
long ResidentPages() {
  std::ifstream statm("/proc/self/statm");
  long size = 0;
  long resident = 0;
  statm >> size >> resident;
  return resident;
}

long OpenFds() {
  std::error_code ec;
  long count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++count;
  }
  return count;
}

long Threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) {
      return std::stol(line.substr(8));
    }
  }
  return 0;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

std::string RenderProcessMetrics() {
  return absl::StrCat(
      "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
      "# TYPE process_resident_memory_bytes gauge\n"
      "process_resident_memory_bytes ",
      ResidentPages() * sysconf(_SC_PAGESIZE), "\n",
      "# HELP process_cpu_seconds_total User and system CPU time spent in seconds.\n"
      "# TYPE process_cpu_seconds_total counter\n"
      "process_cpu_seconds_total ",
      absl::StrFormat("%.3f", CpuSeconds()), "\n",
      "# HELP process_open_fds Number of open file descriptors.\n"
      "# TYPE process_open_fds gauge\n"
      "process_open_fds ",
      OpenFds(), "\n",
      "# HELP process_threads Number of OS threads in the process.\n"
      "# TYPE process_threads gauge\n"
      "process_threads ",
      Threads(), "\n");
}

}  // namespace gpuaas::rpc
