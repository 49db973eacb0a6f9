// Test hooks into the reconciler: a chance to stop it at a named step of a named instance, so
// tests (and crash drills, which kill -9 a paused process) can cut a chain anywhere. Production
// runs without one.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libs/common/stop_signal.h"
#include "services/instance/reconciler_plan.h"

namespace gpuaas::instance {

class StepHook {
 public:
  virtual ~StepHook() = default;

  // Before `step` of `instance_id` runs: its row is locked, nothing of the step is done. A
  // non-OK status abandons the step as a crash would (the transaction rolls back). May block;
  // `stopping` is raised when the reconciler stops, and a blocked hook must then return.
  virtual absl::Status BeforeStep(std::string_view instance_id, Step step,
                                  const StopSignal& stopping) = 0;
  // After the step's calls to other services and its writes, before the commit: a non-OK
  // status rolls the writes back while the calls stay done (a crash between a call and its
  // commit). Same rules as BeforeStep.
  virtual absl::Status BeforeCommit(std::string_view instance_id, Step step,
                                    const StopSignal& stopping) = 0;
};

// The hook gpuaas-instance installs when GPUAAS_INSTANCE_PAUSE_AT is set (crash drills): one or
// more comma-separated points "<when>:<step>", <when> "before" (BeforeStep) or "commit"
// (BeforeCommit) and <step> a StepName ("claim", "release" ...). The first time any instance
// reaches a point the hook logs it, writes the instance id to the file
// GPUAAS_INSTANCE_PAUSE_MARKER (when set) and blocks until the process is killed or stopped, or
// until that file is deleted: then the step goes on (drills that kill another service while the
// step waits, so it runs against the dead one), and the point is spent. Without a marker file
// (unset, or it could not be written) nothing releases a pause. Pauses share the file, so one
// waits for another to be released. A pause longer than the reconciler's call timeout + 5 s
// loses the step's transaction (the row is handed over as after a crash). Returns nullptr when
// the variable is unset.
// Errors: INVALID_ARGUMENT for a malformed value.
absl::StatusOr<std::unique_ptr<StepHook>> PauseHookFromEnv();

}  // namespace gpuaas::instance
