// Writes a layer tar's entries into a directory in overlayfs lower-layer format, treating the
// tar as hostile (layer_unpack.h says what is kept, converted, skipped and refused).
#pragma once

#include <archive.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/agent/images/internal/layer_budget.h"

namespace gpuaas::agent {

// Reads every entry of the open archive `a` into the directory `root_fd`; returns the bytes of
// regular files written. Errors as UnpackLayer's, but DATA_LOSS (the caller checks the digest);
// RESOURCE_EXHAUSTED when `budget` says a limit is crossed.
absl::StatusOr<int64_t> WriteLayerEntries(archive* a, int root_fd, LayerBudget& budget);

// `what` failed with `err`: RESOURCE_EXHAUSTED "no space: ..." for a full disk or quota, else
// INTERNAL.
absl::Status LayerErrnoError(int err, absl::string_view what);

}  // namespace gpuaas::agent
