// One layer's unpack measured against its UnpackLimits as it goes: entries, declared bytes, the
// compression ratio and the free space left on the disk it fills.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/agent/images/unpack_limits.h"

namespace gpuaas::agent {

class LayerBudget final {
 public:
  // `root_fd`: a directory on the filesystem the layer fills. `blob_bytes_read`: how much of
  // the (compressed) blob has been read so far, kept up to date by the reader.
  LayerBudget(const UnpackLimits& limits, int root_fd, const int64_t* blob_bytes_read)
      : limits_(limits), root_fd_(root_fd), blob_bytes_read_(blob_bytes_read) {}

  // Each error is RESOURCE_EXHAUSTED "unpack limit: ..." (or "no space: ..." for the reserve),
  // naming the limit and the entry `shown` that crossed it.
  absl::Status AddEntry(absl::string_view shown);
  // A regular file of `declared` bytes, before any of it is written.
  absl::Status AddFile(int64_t declared, absl::string_view shown);
  // `n` more bytes written to disk.
  absl::Status Wrote(int64_t n, absl::string_view shown);

  int64_t bytes() const { return bytes_; }
  int64_t entries() const { return entries_; }

 private:
  absl::Status CheckFreeSpace(absl::string_view shown);

  const UnpackLimits limits_;
  const int root_fd_;
  const int64_t* const blob_bytes_read_;
  int64_t bytes_ = 0, entries_ = 0, written_ = 0, written_at_last_check_ = 0;
};

}  // namespace gpuaas::agent
