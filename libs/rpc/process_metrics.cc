#include "libs/rpc/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"

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
      // Never throws: an exception here would unwind into civetweb's C code.
      long threads = 0;
      return absl::SimpleAtoi(line.substr(8), &threads) ? threads : 0;
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

// One unlabelled sample; prometheus-cpp reads `counter` or `gauge` according to `type`.
prometheus::MetricFamily SingleSample(std::string name, std::string help,
                                      prometheus::MetricType type, double value) {
  prometheus::ClientMetric sample;
  if (type == prometheus::MetricType::Counter) {
    sample.counter.value = value;
  } else {
    sample.gauge.value = value;
  }
  return prometheus::MetricFamily{std::move(name), std::move(help), type, {std::move(sample)}};
}

}  // namespace

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(SingleSample("process_resident_memory_bytes", "Resident memory size in bytes.",
                                  prometheus::MetricType::Gauge,
                                  static_cast<double>(ResidentPages() * sysconf(_SC_PAGESIZE))));
  families.push_back(SingleSample("process_cpu_seconds_total",
                                  "User and system CPU time spent in seconds.",
                                  prometheus::MetricType::Counter, CpuSeconds()));
  families.push_back(SingleSample("process_open_fds", "Number of open file descriptors.",
                                  prometheus::MetricType::Gauge, static_cast<double>(OpenFds())));
  families.push_back(SingleSample("process_threads", "Number of OS threads in the process.",
                                  prometheus::MetricType::Gauge, static_cast<double>(Threads())));
  return families;
}

}  // namespace gpuaas::rpc
