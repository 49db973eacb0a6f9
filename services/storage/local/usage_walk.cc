#include "services/storage/local/usage_walk.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "services/storage/local/dir_reader.h"
#include "services/storage/local/folder_marker.h"
#include "services/storage/local/safe_path.h"

namespace gpuaas::storage::local {
namespace {

absl::Status Walk(int dir_fd, VolumeUsage& usage) {
  std::vector<std::string> subdirs;
  absl::Status status = ReadDir(dir_fd, [&](std::string_view name, EntryType type) {
    if (type == EntryType::kDir) {
      subdirs.emplace_back(name);
    } else if (type == EntryType::kFile) {
      struct stat st;
      const std::string file(name);
      if (StatNoFollow(dir_fd, file.c_str(), &st).ok() && S_ISREG(st.st_mode)) {
        usage.files += 1;
        usage.bytes += st.st_size;
      }
    }
    return true;
  });
  if (!status.ok()) {
    return status;
  }
  for (const std::string& name : subdirs) {
    absl::StatusOr<UniqueFd> sub = OpenDirBeneath(dir_fd, name, "count");
    if (!sub.ok()) {
      continue;  // gone or replaced by a symlink meanwhile: nothing of the volume's to count
    }
    if (IsFolderMarker(sub->get())) {
      usage.files += 1;  // an object of no bytes
    }
    status = Walk(sub->get(), usage);
    if (!status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VolumeUsage> CountTree(int dir_fd) {
  VolumeUsage usage;
  absl::Status status = Walk(dir_fd, usage);
  if (!status.ok()) {
    return status;
  }
  return usage;
}

}  // namespace gpuaas::storage::local
