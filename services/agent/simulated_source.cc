#include "services/agent/simulated_source.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"
#include "libs/common/xid.h"
#include "services/agent/fault_file.h"

namespace gpuaas::agent {
namespace {

// Bounces off the ends so a walk never sticks at a limit.
double Reflect(double v, double lo, double hi) {
  if (v < lo) {
    return std::min(hi, 2 * lo - v);
  }
  if (v > hi) {
    return std::max(lo, 2 * hi - v);
  }
  return v;
}

// FNV-1a: the same seed on every platform and standard library, unlike std::hash.
uint64_t SeedOf(const std::string& uuid) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : uuid) {
    h = (h ^ c) * 1099511628211ULL;
  }
  return h;
}

}  // namespace

SimulatedGpuSource::SimulatedGpuSource(std::vector<GpuInfo> gpus, std::string fault_file,
                                       std::string utilization_file)
    : gpus_(std::move(gpus)),
      fault_file_(std::move(fault_file)),
      utilization_file_(std::move(utilization_file)) {
  for (const GpuInfo& g : gpus_) {
    models_.push_back(FindSimulatedModel(g.model));
    Walk w{std::mt19937_64(SeedOf(g.uuid))};
    std::uniform_real_distribution<double> start(0, 60);
    w.utilization = start(w.rng);
    w.memory_share = 0.05 + w.utilization / 150;
    w.temperature = 30 + w.utilization * 0.5;
    walks_.push_back(std::move(w));
  }
}

absl::StatusOr<std::vector<GpuInfo>> SimulatedGpuSource::Discover() { return gpus_; }

absl::StatusOr<GpuReading> SimulatedGpuSource::Read(int index) {
  if (index < 0 || index >= static_cast<int>(gpus_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("no GPU ", index));
  }
  Walk& w = walks_[index];
  std::normal_distribution<double> step(0, 8);
  std::normal_distribution<double> jitter(0, 1);
  w.utilization = Reflect(w.utilization + step(w.rng), 0, 100);
  if (!utilization_file_.empty()) {
    // No file pins nothing; bad lines are ignored (the fault file's warnings cover the format).
    if (absl::StatusOr<std::string> text = ReadFile(utilization_file_); text.ok()) {
      for (const auto& [pinned, percent] : ParseUtilization(*text, gpus_).pinned) {
        if (pinned == index) w.utilization = percent;
      }
    }
  }
  // Jobs hold their memory while they run: it follows utilization slowly.
  const double memory_target = 0.05 + w.utilization / 110;
  w.memory_share = std::clamp(
      w.memory_share + (memory_target - w.memory_share) * 0.2 + jitter(w.rng) * 0.01, 0.01, 0.98);
  // Heat lags load: 30 °C idle to about 80 °C flat out.
  const double temperature_target = 30 + w.utilization * 0.5;
  w.temperature += (temperature_target - w.temperature) * 0.3 + jitter(w.rng) * 0.5;
  w.temperature = std::clamp(w.temperature, 25.0, 90.0);

  const SimulatedModel* m = models_[index];
  const double idle = m != nullptr ? m->idle_watts : 50;
  const double max = m != nullptr ? m->max_watts : 300;
  GpuReading r;
  r.utilization_percent = std::round(w.utilization);
  r.memory_used_mib =
      static_cast<int64_t>(w.memory_share * static_cast<double>(gpus_[index].memory_mib));
  r.temperature_celsius = std::round(w.temperature);
  r.power_watts =
      std::clamp(idle + (max - idle) * w.utilization / 100 + jitter(w.rng) * 2, idle * 0.9, max);
  return r;
}

std::vector<XidEvent> SimulatedGpuSource::ReadFaults() {
  if (fault_file_.empty()) {
    return {};
  }
  absl::StatusOr<std::string> text = ReadFile(fault_file_);
  if (!text.ok()) {
    // No file is no fault.
    return {};
  }
  ParsedFaults parsed = ParseFaults(*text, gpus_);
  std::string errors = absl::StrJoin(parsed.errors, "; ");
  if (errors != last_fault_errors_) {
    last_fault_errors_ = errors;
    if (!errors.empty()) {
      Logger("agent")->warn("fault file {}: ignoring {}", fault_file_, errors);
    }
  }
  return std::move(parsed.faults);
}

std::vector<XidEvent> SimulatedGpuSource::TakeXids() { return ReadFaults(); }

absl::Status SimulatedGpuSource::Probe(int index) {
  if (index < 0 || index >= static_cast<int>(gpus_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("no GPU ", index));
  }
  for (const XidEvent& f : ReadFaults()) {
    if (f.index == index && XidMakesGpuUnhealthy(f.xid)) {
      return absl::UnavailableError(absl::StrCat("the fault file still lists XID ", f.xid));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::agent
