#include "services/agent/images/internal/pull_job.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gpuaas::agent {

UnpackLimits PullJob::LayerLimits() {
  absl::MutexLock lock(&mu_);
  UnpackLimits out = limits;
  out.max_layer_bytes = std::min(out.max_layer_bytes, limits.max_image_bytes - image_bytes_);
  out.max_layer_entries =
      std::min(out.max_layer_entries, limits.max_image_entries - image_entries_);
  return out;
}

absl::Status PullJob::Count(int64_t bytes, int64_t entries) {
  absl::MutexLock lock(&mu_);
  image_bytes_ += bytes;
  image_entries_ += entries;
  if (image_bytes_ > limits.max_image_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("unpack limit: the image unpacks to more than ", limits.max_image_bytes,
                     " bytes (", reference, ")"));
  }
  if (image_entries_ > limits.max_image_entries) {
    return absl::ResourceExhaustedError(absl::StrCat("unpack limit: the image has more than ",
                                                     limits.max_image_entries, " entries (",
                                                     reference, ")"));
  }
  return absl::OkStatus();
}

OciLayer PullJob::Planned(const std::string& hex) const {
  for (const OciLayer& layer : planned) {
    if (layer.hex == hex) {
      return layer;
    }
  }
  return OciLayer{.hex = hex, .size = -1};
}

}  // namespace gpuaas::agent
