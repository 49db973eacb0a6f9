// LocalVolume's folder markers (folder_marker.h): a marked directory per "a/b/" key.
#include <fcntl.h>

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"
#include "services/storage/local/folder_marker.h"
#include "services/storage/local/local_volume.h"
#include "services/storage/local/object_key.h"
#include "services/storage/local/safe_path.h"

namespace gpuaas::storage::local {
namespace {

// The folder's path ("a/b" of "a/b/"), checked as a key.
absl::StatusOr<std::string_view> FolderPath(std::string_view key) {
  if (!IsFolderKey(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(key), ": a folder marker's key ends in one \"/\""));
  }
  const std::string_view path = key.substr(0, key.size() - 1);
  GPUAAS_RETURN_IF_ERROR(ValidateKey(path));
  return path;
}

}  // namespace

absl::StatusOr<UniqueFd> LocalVolume::OpenFolder(std::string_view key) const {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(const std::string_view path, FolderPath(key));
  absl::StatusOr<UniqueFd> dir = OpenDirBeneath(dirs_.data.get(), std::string(path), Quoted(key));
  if (absl::IsFailedPrecondition(dir.status()) || (dir.ok() && !IsFolderMarker(dir->get()))) {
    return absl::NotFoundError(absl::StrCat(Quoted(key), ": no such folder marker"));
  }
  return dir;
}

absl::StatusOr<ObjectInfo> LocalVolume::StatFolder(std::string_view key) const {
  GPUAAS_ASSIGN_OR_RETURN(const UniqueFd dir, OpenFolder(key));
  return FolderInfo(dir.get(), std::string(key));
}

absl::StatusOr<ObjectInfo> LocalVolume::CreateFolder(std::string_view key) {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(const std::string_view path, FolderPath(key));
  // The listings to forget are the folder's parents': as a Target whose leaf is the folder's
  // (empty) content.
  Target target{std::string(key), KeySegments(path)};
  target.segments.emplace_back();
  const size_t dirs = target.dir_count();
  GPUAAS_ASSIGN_OR_RETURN(Reservation reservation, ledger_.Reserve(Charge{0, 1}));
  absl::MutexLock lock(&names_mu_);
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(DirChain chain, WalkDirs(dirs_.data.get(), target.segments, dirs,
                                                   /*create=*/true, Quoted(key)));
  const int folder = chain.Innermost(dirs_.data.get());
  absl::StatusOr<bool> marked = MarkFolder(folder);
  if (!marked.ok()) {
    RemoveEmptyDirs(dirs_.data.get(), target.segments, chain, chain.first_created);
    return marked.status();
  }
  if (*marked) GPUAAS_RETURN_IF_ERROR(ledger_.Settle(reservation, Charge{0, 1}));
  if (root_->sync_writes) {
    for (size_t i = chain.first_created; i < chain.fds.size(); ++i) {
      GPUAAS_RETURN_IF_ERROR(SyncFd(chain.ParentOf(i, dirs_.data.get()), "directory"));
    }
    GPUAAS_RETURN_IF_ERROR(SyncFd(folder, "directory"));
  }
  InvalidateListings(target, chain.first_created);
  return FolderInfo(folder, std::string(key));
}

absl::Status LocalVolume::DeleteFolder(std::string_view key) {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(const std::string_view path, FolderPath(key));
  Target target{std::string(key), KeySegments(path)};
  target.segments.emplace_back();
  const size_t dirs = target.dir_count();
  absl::MutexLock lock(&names_mu_);
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  absl::StatusOr<DirChain> chain =
      WalkDirs(dirs_.data.get(), target.segments, dirs, /*create=*/false, Quoted(key));
  if (absl::IsNotFound(chain.status()) || absl::IsFailedPrecondition(chain.status())) {
    return absl::OkStatus();  // no such folder
  }
  GPUAAS_RETURN_IF_ERROR(chain.status());
  if (!UnmarkFolder(chain->Innermost(dirs_.data.get()))) {
    return absl::OkStatus();  // a directory on the way to files, no marker
  }
  ledger_.Apply(Charge{0, -1});
  // The folder goes when nothing is left in it, and so do the unmarked directories above it.
  const size_t removed = RemoveEmptyDirs(dirs_.data.get(), target.segments, *chain, 0);
  InvalidateListings(target, dirs - removed);
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::local
