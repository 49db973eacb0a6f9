// One uncached pull's files and its image's unpack budget (image_store.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "services/agent/images/oci_layout.h"
#include "services/agent/images/unpack_limits.h"

namespace gpuaas::agent {

struct PullJob {
  std::string reference;
  std::string dir;          // pulls/<hex>.XXXXXX, removed when the pull ends
  std::string layout_dir;   // dir/layout: skopeo's OCI layout
  std::string blob_root;    // dir/blobs: skopeo's --dest-shared-blob-dir
  std::string blob_dir;     // dir/blobs/sha256: the blobs lent to the tenant, then the copy's
  std::string private_dir;  // tmp/pull-XXXXXX: the login, the unpacker's answers
  std::vector<OciLayer> planned;
  UnpackLimits limits;

  // The per-layer limits, shrunk to what the image has left. Thread-safe.
  UnpackLimits LayerLimits();
  // Counts an unpacked layer into the image's totals. Error: RESOURCE_EXHAUSTED past a limit.
  // Thread-safe.
  absl::Status Count(int64_t bytes, int64_t entries);
  // The planned layer `hex`; size -1 when it is not planned.
  OciLayer Planned(const std::string& hex) const;

 private:
  absl::Mutex mu_;
  int64_t image_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t image_entries_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace gpuaas::agent
