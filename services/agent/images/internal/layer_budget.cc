#include "services/agent/images/internal/layer_budget.h"

#include <sys/statvfs.h>

#include "absl/strings/str_cat.h"

namespace gpuaas::agent {
namespace {

// The free space is asked again after this many bytes written (a statvfs per 16 MiB is free
// next to the writes; the reserve absorbs what is written between two asks).
constexpr int64_t kFreeSpaceEvery = 16 << 20;

absl::Status Limit(absl::string_view what, absl::string_view shown) {
  return absl::ResourceExhaustedError(absl::StrCat("unpack limit: ", what, " (at ", shown, ")"));
}

}  // namespace

absl::Status LayerBudget::AddEntry(absl::string_view shown) {
  if (++entries_ > limits_.max_layer_entries) {
    return Limit(absl::StrCat("more than ", limits_.max_layer_entries, " entries in one layer"),
                 shown);
  }
  return absl::OkStatus();
}

absl::Status LayerBudget::AddFile(int64_t declared, absl::string_view shown) {
  if (declared < 0 || declared > limits_.max_layer_bytes - bytes_) {
    return Limit(absl::StrCat("more than ", limits_.max_layer_bytes, " bytes in one layer"), shown);
  }
  bytes_ += declared;
  return CheckFreeSpace(shown);
}

absl::Status LayerBudget::Wrote(int64_t n, absl::string_view shown) {
  written_ += n;
  // Bytes written, not declared: the blob is read a chunk ahead of them, so this errs low.
  if (written_ > limits_.ratio_floor_bytes && *blob_bytes_read_ > 0 &&
      written_ / *blob_bytes_read_ > limits_.max_ratio) {
    return Limit(absl::StrCat("compressed more than ", limits_.max_ratio, " to 1"), shown);
  }
  if (written_ - written_at_last_check_ < kFreeSpaceEvery) {
    return absl::OkStatus();
  }
  written_at_last_check_ = written_;
  return CheckFreeSpace(shown);
}

absl::Status LayerBudget::CheckFreeSpace(absl::string_view shown) {
  struct statvfs fs;
  if (::fstatvfs(root_fd_, &fs) != 0) {
    return absl::OkStatus();  // the writes themselves still report ENOSPC
  }
  const int64_t free_bytes = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
  if (free_bytes < limits_.min_free_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("no space: the image cache's disk is down to its reserve of ",
                     limits_.min_free_bytes, " free bytes (at ", shown, ")"));
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::agent
