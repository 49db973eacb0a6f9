#include "services/instance/step_hook.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/common/logging.h"

namespace gpuaas::instance {
namespace {

// How soon a pause notices that its marker file was deleted.
constexpr absl::Duration kReleasePoll = absl::Milliseconds(20);

constexpr Step kAllSteps[] = {Step::kBegin,   Step::kClaim,     Step::kAttach,     Step::kPublish,
                              Step::kMeter,   Step::kUnpublish, Step::kMeterClose, Step::kDetach,
                              Step::kRelease, Step::kFinish};

// A point of a chain: before a step, or before its commit.
struct PausePoint {
  bool at_commit = false;
  Step step = Step::kWait;
};

class PauseHook final : public StepHook {
 public:
  PauseHook(std::vector<PausePoint> points, std::string marker)
      : marker_(std::move(marker)), points_(std::move(points)), spent_(points_.size(), false) {}

  absl::Status BeforeStep(std::string_view instance_id, Step step,
                          const StopSignal& stopping) override {
    return PauseIfArmed({.at_commit = false, .step = step}, instance_id, stopping);
  }
  absl::Status BeforeCommit(std::string_view instance_id, Step step,
                            const StopSignal& stopping) override {
    return PauseIfArmed({.at_commit = true, .step = step}, instance_id, stopping);
  }

 private:
  absl::Status PauseIfArmed(PausePoint at, std::string_view instance_id,
                            const StopSignal& stopping) {
    if (!Disarm(at)) return absl::OkStatus();
    // One pause at a time: they share the marker file.
    absl::MutexLock pausing(&pause_mu_);
    const std::string where =
        absl::StrCat(at.at_commit ? "committing" : "before", " step ",
                     std::string(StepName(at.step)), " of ", std::string(instance_id));
    Logger("instance")->warn("test hook: paused {}", where);
    const bool releasable = !marker_.empty() && WriteMarker(instance_id);
    while (!stopping.WaitFor(kReleasePoll)) {
      if (releasable && !std::filesystem::exists(marker_)) {
        Logger("instance")->warn("test hook: released {}", where);
        return absl::OkStatus();
      }
    }
    return absl::AbortedError("stopping");
  }

  // Whether `at` is one of the points not reached yet; it is reached now.
  bool Disarm(PausePoint at) {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < points_.size(); ++i) {
      if (!spent_[i] && points_[i].at_commit == at.at_commit && points_[i].step == at.step) {
        spent_[i] = true;
        return true;
      }
    }
    return false;
  }

  // Whole or not at all: whoever sees the file may read the id at once.
  bool WriteMarker(std::string_view instance_id) {
    const std::string partial = marker_ + ".partial";
    std::ofstream out(partial);
    out << instance_id << "\n";
    out.close();
    std::error_code error;
    if (out.good()) std::filesystem::rename(partial, marker_, error);
    return out.good() && !error;
  }

  const std::string marker_;
  const std::vector<PausePoint> points_;
  absl::Mutex mu_;
  std::vector<bool> spent_ ABSL_GUARDED_BY(mu_);
  absl::Mutex pause_mu_;
};

// "<when>:<step>"; nullopt when malformed.
std::optional<PausePoint> ParsePoint(absl::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() != 2 || (parts[0] != "before" && parts[0] != "commit")) return std::nullopt;
  for (Step step : kAllSteps) {
    if (StepName(step) == parts[1]) {
      return PausePoint{.at_commit = parts[0] == "commit", .step = step};
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StepHook>> PauseHookFromEnv() {
  const char* at = std::getenv("GPUAAS_INSTANCE_PAUSE_AT");
  if (at == nullptr || *at == '\0') return nullptr;
  std::vector<PausePoint> points;
  for (absl::string_view text : absl::StrSplit(at, ',')) {
    std::optional<PausePoint> point = ParsePoint(text);
    if (!point) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GPUAAS_INSTANCE_PAUSE_AT: want before:<step> or commit:<step>, comma-separated; got ",
          at));
    }
    points.push_back(*point);
  }
  const char* marker = std::getenv("GPUAAS_INSTANCE_PAUSE_MARKER");
  return std::make_unique<PauseHook>(std::move(points), marker == nullptr ? "" : marker);
}

}  // namespace gpuaas::instance
