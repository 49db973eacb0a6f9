#include "services/instance/step_hook.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "libs/common/logging.h"

namespace gpuaas::instance {
namespace {

constexpr Step kAllSteps[] = {Step::kBegin,   Step::kClaim,     Step::kAttach,     Step::kPublish,
                              Step::kMeter,   Step::kUnpublish, Step::kMeterClose, Step::kDetach,
                              Step::kRelease, Step::kFinish};

class PauseHook final : public StepHook {
 public:
  PauseHook(bool at_commit, Step step, std::string marker)
      : at_commit_(at_commit), step_(step), marker_(std::move(marker)) {}

  absl::Status BeforeStep(std::string_view instance_id, Step step,
                          const absl::Notification& stopping) override {
    if (at_commit_ || step != step_) return absl::OkStatus();
    return Pause(instance_id, stopping);
  }
  absl::Status BeforeCommit(std::string_view instance_id, Step step,
                            const absl::Notification& stopping) override {
    if (!at_commit_ || step != step_) return absl::OkStatus();
    return Pause(instance_id, stopping);
  }

 private:
  absl::Status Pause(std::string_view instance_id, const absl::Notification& stopping) {
    {
      absl::MutexLock lock(&mu_);
      if (paused_) return absl::OkStatus();
      paused_ = true;
    }
    Logger("instance")
        ->warn("test hook: paused {} step {} of {}", at_commit_ ? "committing" : "before",
               StepName(step_), std::string(instance_id));
    if (!marker_.empty()) {
      std::ofstream(marker_) << instance_id << "\n";
    }
    stopping.WaitForNotification();
    return absl::AbortedError("stopping");
  }

  const bool at_commit_;
  const Step step_;
  const std::string marker_;
  absl::Mutex mu_;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<StepHook>> PauseHookFromEnv() {
  const char* at = std::getenv("GPUAAS_INSTANCE_PAUSE_AT");
  if (at == nullptr || *at == '\0') return nullptr;
  std::vector<std::string> parts = absl::StrSplit(at, ':');
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("GPUAAS_INSTANCE_PAUSE_AT: want before:<step> or commit:<step>, got ", at));
  };
  if (parts.size() != 2 || (parts[0] != "before" && parts[0] != "commit")) return bad();
  for (Step step : kAllSteps) {
    if (StepName(step) == parts[1]) {
      const char* marker = std::getenv("GPUAAS_INSTANCE_PAUSE_MARKER");
      return std::make_unique<PauseHook>(parts[0] == "commit", step,
                                         marker == nullptr ? "" : marker);
    }
  }
  return bad();
}

}  // namespace gpuaas::instance
