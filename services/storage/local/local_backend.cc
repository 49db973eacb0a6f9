#include "services/storage/local/local_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libs/common/status_macros.h"
#include "services/storage/local/data_root.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/local_volume.h"
#include "services/storage/local/object_key.h"
#include "services/storage/local/safe_path.h"
#include "services/storage/local/staged_file.h"
#include "services/storage/local/upload_store.h"

namespace gpuaas::storage::local {
namespace {

constexpr char kVolumesDir[] = "volumes";
constexpr char kStagingDir[] = "staging";
constexpr char kUploadsDir[] = "uploads";
constexpr char kTrashDir[] = "trash";
constexpr char kLockFile[] = "lock";

absl::StatusOr<UniqueFd> MakeDir(int root_fd, const char* name) {
  if (::mkdirat(root_fd, name, 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("create ", name));
  }
  return OpenDirBeneath(root_fd, name, name);
}

std::vector<std::string> EntryNames(int dir_fd, EntryType only, bool any_type) {
  std::vector<std::string> names;
  (void)ReadDir(dir_fd, [&](std::string_view name, EntryType type) {
    if (any_type || type == only) {
      names.emplace_back(name);
    }
    return true;
  });
  return names;
}

class LocalBackend final : public Backend {
 public:
  explicit LocalBackend(std::shared_ptr<const DataRoot> root) : root_(std::move(root)) {}

  std::string_view backend_class() const override { return "local"; }

  absl::Status CreateVolume(std::string_view storage_id) override {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId(storage_id));
    const std::string id(storage_id);
    absl::MutexLock lock(&mu_);
    if (::mkdirat(root_->volumes.get(), id.c_str(), 0777) == 0) {
      if (root_->sync_writes) {
        GPUAAS_RETURN_IF_ERROR(SyncFd(root_->volumes.get(), "volumes directory"));
      }
      return absl::OkStatus();
    }
    if (errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat("create volume ", id));
    }
    absl::StatusOr<UniqueFd> existing = OpenDirBeneath(root_->volumes.get(), id, id);
    if (!existing.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("volume ", id, ": exists and is not a directory"));
    }
    return absl::OkStatus();
  }

  absl::Status DeleteVolume(std::string_view storage_id) override {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId(storage_id));
    const std::string id(storage_id);
    std::vector<std::string> trashed;
    {
      absl::MutexLock lock(&mu_);
      auto it = volumes_.find(id);
      if (it != volumes_.end()) {
        it->second->MarkDeleted();
        volumes_.erase(it);
      }
      // One rename each moves the volume, then its uploads, out of reach at once; removing
      // them may take long and is finished at the next start if the process dies meanwhile.
      for (const int from : {root_->volumes.get(), root_->uploads.get()}) {
        std::string name = absl::StrCat(id, ".", RandomStagingName(".trash"));
        if (::renameat(from, id.c_str(), root_->trash.get(), name.c_str()) == 0) {
          trashed.push_back(std::move(name));
          if (root_->sync_writes) {
            GPUAAS_RETURN_IF_ERROR(SyncFd(from, "data root"));
            GPUAAS_RETURN_IF_ERROR(SyncFd(root_->trash.get(), "trash"));
          }
        } else if (errno != ENOENT) {
          return ErrnoStatus(errno, absl::StrCat("delete volume ", id));
        }
      }
    }
    for (const std::string& name : trashed) {
      GPUAAS_RETURN_IF_ERROR(RemoveTree(root_->trash.get(), name));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::shared_ptr<Volume>> OpenVolume(std::string_view storage_id,
                                                     const VolumeLimits& limits) override {
    GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<LocalVolume> volume, Find(storage_id, &limits));
    return std::shared_ptr<Volume>(std::move(volume));
  }

  absl::StatusOr<MountSource> MountSourceFor(std::string_view storage_id,
                                             std::string_view node_id) override {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId(storage_id));
    const std::string id(storage_id);
    struct stat st;
    if (!StatNoFollow(root_->volumes.get(), id.c_str(), &st).ok() || !S_ISDIR(st.st_mode)) {
      return NoSuchVolume(id);
    }
    return MountSource{absl::StrCat(root_->path, "/", kVolumesDir, "/", id)};
  }

  absl::StatusOr<VolumeUsage> Recount(std::string_view storage_id) override {
    GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<LocalVolume> volume, Find(storage_id, nullptr));
    return volume->Recount();
  }

  absl::StatusOr<int> ExpireUploads(absl::Time cutoff) override {
    int expired = 0;
    for (const std::string& id : EntryNames(root_->uploads.get(), EntryType::kDir, false)) {
      if (!ValidateStorageId(id).ok()) {
        continue;
      }
      absl::StatusOr<std::shared_ptr<LocalVolume>> volume = Find(id, nullptr);
      if (absl::IsNotFound(volume.status())) {
        continue;  // deleted meanwhile; its uploads went with it
      }
      if (!volume.ok()) {
        return volume.status();
      }
      GPUAAS_ASSIGN_OR_RETURN(const int n, (*volume)->ExpireUploads(cutoff));
      expired += n;
    }
    return expired;
  }

 private:
  static absl::Status NoSuchVolume(const std::string& id) {
    return absl::NotFoundError(absl::StrCat("storage ", id, ": no such volume"));
  }

  // The one LocalVolume of a storage, loaded (counted) before it is returned; `limits` replace
  // the volume's when given.
  absl::StatusOr<std::shared_ptr<LocalVolume>> Find(std::string_view storage_id,
                                                    const VolumeLimits* limits) {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId(storage_id));
    const std::string id(storage_id);
    std::shared_ptr<LocalVolume> volume;
    {
      absl::MutexLock lock(&mu_);
      auto it = volumes_.find(id);
      if (it != volumes_.end()) {
        volume = it->second;
      } else {
        absl::StatusOr<UniqueFd> dir = OpenDirBeneath(root_->volumes.get(), id, id);
        if (absl::IsNotFound(dir.status())) {
          return NoSuchVolume(id);
        }
        if (!dir.ok()) {
          return dir.status();
        }
        volume = std::make_shared<LocalVolume>(root_, id, *std::move(dir));
        volumes_.emplace(id, volume);
      }
    }
    if (limits != nullptr) {
      volume->SetLimits(*limits);
    }
    // Outside the backend's lock: counting a large volume delays only its own callers.
    absl::Status loaded = volume->EnsureLoaded();
    if (absl::IsNotFound(loaded)) {
      return NoSuchVolume(id);  // deleted while loading
    }
    if (!loaded.ok()) {
      return loaded;
    }
    return volume;
  }

  const std::shared_ptr<const DataRoot> root_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<LocalVolume>> volumes_ ABSL_GUARDED_BY(mu_);
};

// What a crash can leave behind: staged files and claimed uploads, volumes renamed into the
// trash but not yet removed, upload directories whose "meta" never landed, uploads of volumes
// that are gone.
absl::Status Purge(const DataRoot& root) {
  for (const int dir : {root.staging.get(), root.trash.get()}) {
    for (const std::string& name : EntryNames(dir, EntryType::kOther, true)) {
      GPUAAS_RETURN_IF_ERROR(RemoveTree(dir, name));
    }
  }
  for (const std::string& id : EntryNames(root.uploads.get(), EntryType::kOther, true)) {
    struct stat st;
    const bool volume_exists = StatNoFollow(root.volumes.get(), id.c_str(), &st).ok() &&
                               S_ISDIR(st.st_mode) && ValidateStorageId(id).ok();
    absl::StatusOr<UniqueFd> uploads = OpenDirBeneath(root.uploads.get(), id, "uploads");
    if (!volume_exists || !uploads.ok()) {
      GPUAAS_RETURN_IF_ERROR(RemoveTree(root.uploads.get(), id));
      continue;
    }
    for (const std::string& upload : EntryNames(uploads->get(), EntryType::kOther, true)) {
      absl::StatusOr<UniqueFd> dir = OpenDirBeneath(uploads->get(), upload, "upload");
      if (!IsUploadId(upload) || !dir.ok() || !ReadUploadMeta(dir->get()).ok()) {
        GPUAAS_RETURN_IF_ERROR(RemoveTree(uploads->get(), upload));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> NewLocalBackend(const LocalBackendOptions& options) {
  if (options.data_root.empty()) {
    return absl::InvalidArgumentError("data_root: must not be empty");
  }
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::absolute(options.data_root, ec);
  if (!ec) {
    std::filesystem::create_directories(path, ec);
  }
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("data_root ", options.data_root, ": ", ec.message()));
  }
  auto root = std::make_shared<DataRoot>();
  root->path = path.lexically_normal().string();
  while (root->path.size() > 1 && root->path.back() == '/') {
    root->path.pop_back();
  }
  root->sync_writes = options.sync_writes;
  root->hashers = std::make_unique<ThreadPool>(
      static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u)),
      /*max_queued=*/64);
  // The data root itself may be a symlink an administrator made; nothing below it may.
  root->root.Reset(::open(root->path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root->root.valid()) {
    return ErrnoStatus(errno, absl::StrCat("data_root ", root->path));
  }
  root->lock.Reset(
      ::openat(root->root.get(), kLockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!root->lock.valid()) {
    return ErrnoStatus(errno, absl::StrCat("data_root ", root->path, ": lock file"));
  }
  if (::flock(root->lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("data_root ", root->path, " is in use by another storage backend"));
    }
    return ErrnoStatus(errno, absl::StrCat("data_root ", root->path, ": lock"));
  }
  GPUAAS_ASSIGN_OR_RETURN(root->volumes, MakeDir(root->root.get(), kVolumesDir));
  GPUAAS_ASSIGN_OR_RETURN(root->staging, MakeDir(root->root.get(), kStagingDir));
  GPUAAS_ASSIGN_OR_RETURN(root->uploads, MakeDir(root->root.get(), kUploadsDir));
  GPUAAS_ASSIGN_OR_RETURN(root->trash, MakeDir(root->root.get(), kTrashDir));
  struct stat first;
  if (::fstat(root->volumes.get(), &first) != 0) {
    return ErrnoStatus(errno, "data_root");
  }
  for (const int fd : {root->staging.get(), root->uploads.get(), root->trash.get()}) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_dev != first.st_dev) {
      return absl::FailedPreconditionError(
          absl::StrCat("data_root ", root->path,
                       ": volumes, staging, uploads and trash must be on one file system"));
    }
  }
  GPUAAS_RETURN_IF_ERROR(Purge(*root));
  return std::unique_ptr<Backend>(std::make_unique<LocalBackend>(std::move(root)));
}

}  // namespace gpuaas::storage::local
