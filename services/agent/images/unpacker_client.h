// The agent's side of gpuaas-image-unpacker (unpacker_main.cc): each job of a pull that reads a
// registry's bytes (its manifest or index, the copied layout and config, each layer) runs in a
// process of its own in the unpacker's sandbox, and only the unpacker's small JSON answer is read
// here (itself under the same caps). A job that crashes, is killed by a limit or hangs past its
// deadline fails that pull with a reason; the agent goes on.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/agent/images/layer_unpack.h"
#include "services/agent/images/oci_layout.h"
#include "services/agent/images/unpack_limits.h"

namespace gpuaas::agent {

struct UnpackerOptions {
  std::string path;  // gpuaas-image-unpacker
  int64_t memory_bytes = 2LL << 30;
  int64_t cpu_seconds = 3600;
  absl::Duration deadline = absl::Minutes(30);  // each job's wall clock (the pull's timeout)
};

// The image a copy wrote, its config reduced to what the runtime reads (ParseImageConfig's
// input).
struct UnpackedLayout {
  OciImage image;  // image.config_json: the reduced config
};

class UnpackerClient final {
 public:
  explicit UnpackerClient(UnpackerOptions options) : options_(std::move(options)) {}

  // Each blocks until its job ends. `work_dir`: a private directory of the pull (the answer's
  // file). Errors: the job's own, by code, as the in-process functions they wrap
  // (ParseManifest, ReadOciLayout + ParseImageConfig, UnpackLayerWithin, UnpackGrowingLayer);
  // INTERNAL "image unpacker died ..." when it was killed (a crash, or its memory, CPU or time
  // limit), FAILED_PRECONDITION when it cannot be started.
  absl::StatusOr<ManifestLayers> ParseManifest(const std::string& manifest_path,
                                               const std::string& work_dir);
  absl::StatusOr<UnpackedLayout> ReadLayout(const std::string& layout_dir,
                                            const std::string& blob_dir,
                                            const std::string& work_dir);
  absl::StatusOr<StreamedLayer> UnpackLayer(const std::string& blob_path, const std::string& hex,
                                            int64_t blob_size, const std::string& layers_dir,
                                            const UnpackLimits& limits,
                                            const std::string& work_dir);
  // A download skopeo is still writing at `download_path`, whole once renamed to one of
  // `planned`'s blobs in `blob_dir`.
  absl::StatusOr<StreamedLayer> UnpackDownload(const std::string& download_path,
                                               const std::string& blob_dir,
                                               const std::vector<OciLayer>& planned,
                                               const std::string& layers_dir,
                                               const UnpackLimits& limits,
                                               const std::string& work_dir);

 private:
  absl::StatusOr<std::string> RunJob(std::vector<std::string> job, const UnpackLimits& limits,
                                     const std::string& work_dir);

  const UnpackerOptions options_;
  std::atomic<uint64_t> jobs_{0};
};

}  // namespace gpuaas::agent
