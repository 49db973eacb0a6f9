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
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "services/storage/local/data_root.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/local_volume.h"
#include "services/storage/local/loop_filesystem.h"
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
constexpr char kImagesDir[] = "images";
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

// A volume with its own file system: images/<id>.img mounted on volumes/<id>/.
constexpr char kImageSuffix[] = ".img";
constexpr char kDataDir[] = "data";
constexpr char kVolumeStagingDir[] = ".staging";
constexpr char kVolumeUploadsDir[] = ".uploads";

std::string ImageName(const std::string& id) { return absl::StrCat(id, kImageSuffix); }

// The volume an entry of images/ belongs to; "" for anything else.
std::string VolumeOfImage(std::string_view name) {
  if (!name.ends_with(kImageSuffix)) {
    return "";
  }
  name.remove_suffix(sizeof kImageSuffix - 1);
  return ValidateStorageId(name).ok() ? std::string(name) : "";
}

bool HasImage(const DataRoot& root, const std::string& id) {
  struct stat st;
  return StatNoFollow(root.images.get(), ImageName(id).c_str(), &st).ok() && S_ISREG(st.st_mode);
}

std::string MountPoint(const DataRoot& root, const std::string& id) {
  return absl::StrCat(root.path, "/", kVolumesDir, "/", id);
}

std::string ImagePath(const DataRoot& root, const std::string& id) {
  return absl::StrCat(root.path, "/", kImagesDir, "/", ImageName(id));
}

// The ids of the volumes that have their own file system.
std::vector<std::string> ImageVolumes(const DataRoot& root) {
  std::vector<std::string> ids;
  for (const std::string& name : EntryNames(root.images.get(), EntryType::kOther, true)) {
    if (std::string id = VolumeOfImage(name); !id.empty()) {
      ids.push_back(std::move(id));
    }
  }
  return ids;
}

// Mounts the volume's image and makes what a crash may have left out of its layout.
absl::Status MountImageVolume(const DataRoot& root, const std::string& id) {
  GPUAAS_RETURN_IF_ERROR(MountFilesystemImage(ImagePath(root, id), MountPoint(root, id)));
  GPUAAS_ASSIGN_OR_RETURN(const UniqueFd top, OpenDirBeneath(root.volumes.get(), id, id));
  for (const auto& [name, mode] : {std::pair{kDataDir, 0777}, {kVolumeStagingDir, 0700}}) {
    if (::mkdirat(top.get(), name, mode) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat("create volume ", id, "'s ", name));
    }
  }
  return root.sync_writes ? SyncFd(top.get(), "volume") : absl::OkStatus();
}

// Where the volume's files, staged files and uploads are.
absl::StatusOr<VolumeDirs> OpenVolumeDirs(const DataRoot& root, const std::string& id) {
  GPUAAS_ASSIGN_OR_RETURN(UniqueFd top, OpenDirBeneath(root.volumes.get(), id, id));
  if (!HasImage(root, id)) {
    return VolumeDirs{std::move(top), UniqueFd(::dup(root.staging.get())),
                      UniqueFd(::dup(root.uploads.get())), id};
  }
  if (!IsMountPoint(MountPoint(root, id))) {
    GPUAAS_RETURN_IF_ERROR(MountImageVolume(root, id));
    GPUAAS_ASSIGN_OR_RETURN(top, OpenDirBeneath(root.volumes.get(), id, id));
  }
  GPUAAS_ASSIGN_OR_RETURN(UniqueFd data, OpenDirBeneath(top.get(), kDataDir, id));
  GPUAAS_ASSIGN_OR_RETURN(UniqueFd staging, OpenDirBeneath(top.get(), kVolumeStagingDir, id));
  return VolumeDirs{std::move(data), std::move(staging), std::move(top), kVolumeUploadsDir};
}

class LocalBackend final : public Backend {
 public:
  explicit LocalBackend(std::shared_ptr<const DataRoot> root) : root_(std::move(root)) {}

  // The mounts go with the backend; the next one mounts the images again.
  ~LocalBackend() override {
    for (const std::string& id : ImageVolumes(*root_)) {
      (void)UnmountFilesystem(MountPoint(*root_, id));
    }
  }

  std::string_view backend_class() const override { return "local"; }

  absl::Status CreateVolume(std::string_view storage_id, const VolumeLimits& limits) override {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId(storage_id));
    const std::string id(storage_id);
    absl::MutexLock lock(&mu_);
    struct stat st;
    const bool exists = StatNoFollow(root_->volumes.get(), id.c_str(), &st).ok();
    if (exists && !S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("volume ", id, ": exists and is not a directory"));
    }
    if (HasImage(*root_, id)) {
      return MountImageVolume(*root_, id);  // a retry: finish what the last call began
    }
    if (exists) {
      return absl::OkStatus();
    }
    if (root_->loop_volumes) {
      GPUAAS_RETURN_IF_ERROR(MakeImage(id, limits));
    }
    if (::mkdirat(root_->volumes.get(), id.c_str(), root_->loop_volumes ? 0755 : 0777) != 0) {
      return ErrnoStatus(errno, absl::StrCat("create volume ", id));
    }
    if (root_->sync_writes) {
      GPUAAS_RETURN_IF_ERROR(SyncFd(root_->volumes.get(), "volumes directory"));
    }
    return root_->loop_volumes ? MountImageVolume(*root_, id) : absl::OkStatus();
  }

  absl::Status DeleteVolume(std::string_view storage_id) override {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId(storage_id));
    const std::string id(storage_id);
    std::vector<std::string> trashed;
    {
      absl::MutexLock lock(&mu_);
      auto it = volumes_.find(id);
      if (it != volumes_.end()) {
        it->second.volume->MarkDeleted();
        volumes_.erase(it);
      }
      // Files still open keep a detached file system until they close; nothing reaches it by
      // name any more.
      GPUAAS_RETURN_IF_ERROR(UnmountFilesystem(MountPoint(*root_, id)));
      // One rename each moves the volume, then its uploads and image, out of reach at once;
      // removing them may take long and is finished at the next start if the process dies
      // meanwhile.
      const std::string image = ImageName(id);
      for (const auto& [from, name] : {std::pair{root_->volumes.get(), id},
                                       {root_->uploads.get(), id},
                                       {root_->images.get(), image}}) {
        std::string to = absl::StrCat(id, ".", RandomStagingName(".trash"));
        if (::renameat(from, name.c_str(), root_->trash.get(), to.c_str()) == 0) {
          trashed.push_back(std::move(to));
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
    // A workload sees only the user's files, never the staging and uploads beside them.
    if (HasImage(*root_, id)) {
      // About to be bound into a workload: the last moment its file system may be free to grow.
      absl::MutexLock lock(&mu_);
      if (absl::StatusOr<Entry*> entry = Load(id); entry.ok() && (*entry)->growth_pending) {
        (void)Grow(id);
      }
      return MountSource{absl::StrCat(MountPoint(*root_, id), "/", kDataDir)};
    }
    return MountSource{MountPoint(*root_, id)};
  }

  absl::StatusOr<VolumeUsage> Recount(std::string_view storage_id) override {
    // Called when a workload lets go of the volume: its file system may be free to grow.
    GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<LocalVolume> volume,
                            Find(storage_id, nullptr, /*retry_growth=*/true));
    return volume->Recount();
  }

  absl::StatusOr<int> ExpireUploads(absl::Time cutoff) override {
    std::vector<std::string> ids = EntryNames(root_->uploads.get(), EntryType::kDir, false);
    for (std::string& id : ImageVolumes(*root_)) {
      ids.push_back(std::move(id));
    }
    int expired = 0;
    for (const std::string& id : ids) {
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
  struct Entry {
    std::shared_ptr<LocalVolume> volume;
    // The size the volume's own file system is to have: its limits' bytes, or its image's size
    // after a restart. 0 for a volume in a plain directory.
    int64_t wanted_bytes = 0;
    // A growth to wanted_bytes has to wait until nothing holds the file system.
    bool growth_pending = false;
  };

  static absl::Status NoSuchVolume(const std::string& id) {
    return absl::NotFoundError(absl::StrCat("storage ", id, ": no such volume"));
  }

  // images/<id>.img of exactly the limits' bytes, made under a staging name and renamed into
  // place.
  absl::Status MakeImage(const std::string& id, const VolumeLimits& limits) {
    if (limits.max_bytes <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("volume ", id, ": max_bytes must be positive for its own file system"));
    }
    const std::string staged = RandomStagingName(kImageSuffix);
    absl::Status made =
        MakeFilesystemImage(absl::StrCat(root_->path, "/", kStagingDir, "/", staged),
                            limits.max_bytes, limits.max_files);
    if (made.ok() && ::renameat(root_->staging.get(), staged.c_str(), root_->images.get(),
                                ImageName(id).c_str()) != 0) {
      made = ErrnoStatus(errno, absl::StrCat("create volume ", id, "'s file system"));
    }
    if (!made.ok()) {
      ::unlinkat(root_->staging.get(), staged.c_str(), 0);
      return made;
    }
    return root_->sync_writes ? SyncFd(root_->images.get(), "images directory") : absl::OkStatus();
  }

  // The one LocalVolume of a storage, loaded (counted) before it is returned; `limits` replace
  // the volume's when given, and grow its file system when they are larger. `retry_growth`:
  // the file system may be free now, finish a growth that had to wait.
  absl::StatusOr<std::shared_ptr<LocalVolume>> Find(std::string_view storage_id,
                                                    const VolumeLimits* limits,
                                                    bool retry_growth = false) {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId(storage_id));
    const std::string id(storage_id);
    std::shared_ptr<LocalVolume> volume;
    {
      absl::MutexLock lock(&mu_);
      GPUAAS_ASSIGN_OR_RETURN(Entry * entry, Load(id));
      // Storages grow, never shrink (the service refuses a smaller spec).
      if (limits != nullptr && entry->wanted_bytes > 0 && limits->max_bytes > entry->wanted_bytes) {
        entry->wanted_bytes = limits->max_bytes;
        entry->growth_pending = retry_growth = true;
      }
      if (entry->growth_pending && retry_growth) {
        GPUAAS_ASSIGN_OR_RETURN(entry, Grow(id));
      }
      volume = entry->volume;
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

  // The volume's entry, made (its directories opened, its file system mounted) when missing.
  absl::StatusOr<Entry*> Load(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = volumes_.find(id);
    if (it != volumes_.end()) {
      return &it->second;
    }
    absl::StatusOr<VolumeDirs> dirs = OpenVolumeDirs(*root_, id);
    if (absl::IsNotFound(dirs.status())) {
      return NoSuchVolume(id);
    }
    if (!dirs.ok()) {
      return dirs.status();
    }
    struct stat st;
    const bool has_image = StatNoFollow(root_->images.get(), ImageName(id).c_str(), &st).ok();
    Entry entry{std::make_shared<LocalVolume>(root_, id, *std::move(dirs)),
                has_image ? static_cast<int64_t>(st.st_size) : 0,
                has_image && FilesystemGrowthPending(ImagePath(*root_, id))};
    return &volumes_.emplace(id, std::move(entry)).first->second;
  }

  // Grows the volume's file system to its wanted size. The volume's own open directories would
  // keep it mounted: when no caller holds the volume, its entry goes for the while (and is
  // counted again), so that the file system can be grown offline. A file system still in use
  // keeps its size, reported once per try; the volume serves on at that size (the service's
  // answer stays OK: the larger size is committed and the growth only waits).
  absl::StatusOr<Entry*> Grow(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = volumes_.find(id);
    const int64_t wanted = it->second.wanted_bytes;
    const bool alone = it->second.volume.use_count() == 1;
    const VolumeLimits limits = it->second.volume->limits();
    if (alone) {
      volumes_.erase(it);
    }
    absl::StatusOr<bool> grown =
        GrowFilesystemImage(ImagePath(*root_, id), MountPoint(*root_, id), wanted, alone);
    if (!grown.ok()) {
      Logger("storage")->error("volume {}: growing its file system: {}", id,
                               grown.status().ToString());
    } else if (!*grown) {
      Logger("storage")->warn(
          "volume {}: its file system is in use and grows when it is free (next attach, detach "
          "or restart)",
          id);
    }
    GPUAAS_ASSIGN_OR_RETURN(Entry * entry, Load(id));
    entry->wanted_bytes = std::max(entry->wanted_bytes, wanted);
    entry->growth_pending = !grown.ok() || !*grown;
    entry->volume->SetLimits(limits);  // a volume loaded again has none yet
    return entry;
  }

  const std::shared_ptr<const DataRoot> root_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> volumes_ ABSL_GUARDED_BY(mu_);
};

// Multipart uploads whose "meta" never landed.
absl::Status PurgeUploads(int uploads_fd) {
  for (const std::string& upload : EntryNames(uploads_fd, EntryType::kOther, true)) {
    absl::StatusOr<UniqueFd> dir = OpenDirBeneath(uploads_fd, upload, "upload");
    if (!IsUploadId(upload) || !dir.ok() || !ReadUploadMeta(dir->get()).ok()) {
      GPUAAS_RETURN_IF_ERROR(RemoveTree(uploads_fd, upload));
    }
  }
  return absl::OkStatus();
}

absl::Status PurgeDir(int dir_fd) {
  for (const std::string& name : EntryNames(dir_fd, EntryType::kOther, true)) {
    GPUAAS_RETURN_IF_ERROR(RemoveTree(dir_fd, name));
  }
  return absl::OkStatus();
}

// What a crash can leave behind: staged files and claimed uploads, volumes renamed into the
// trash but not yet removed, upload directories whose "meta" never landed, uploads of volumes
// that are gone, images of volumes half made or half deleted. Mounts every volume's own file
// system and purges inside it alike.
absl::Status Purge(const DataRoot& root) {
  GPUAAS_RETURN_IF_ERROR(PurgeDir(root.staging.get()));
  GPUAAS_RETURN_IF_ERROR(PurgeDir(root.trash.get()));
  for (const std::string& id : EntryNames(root.uploads.get(), EntryType::kOther, true)) {
    struct stat st;
    const bool volume_exists = StatNoFollow(root.volumes.get(), id.c_str(), &st).ok() &&
                               S_ISDIR(st.st_mode) && ValidateStorageId(id).ok();
    absl::StatusOr<UniqueFd> uploads = OpenDirBeneath(root.uploads.get(), id, "uploads");
    if (!volume_exists || !uploads.ok()) {
      GPUAAS_RETURN_IF_ERROR(RemoveTree(root.uploads.get(), id));
      continue;
    }
    GPUAAS_RETURN_IF_ERROR(PurgeUploads(uploads->get()));
  }
  for (const std::string& name : EntryNames(root.images.get(), EntryType::kOther, true)) {
    const std::string id = VolumeOfImage(name);
    struct stat st;
    if (id.empty() || !StatNoFollow(root.volumes.get(), id.c_str(), &st).ok() ||
        !S_ISDIR(st.st_mode)) {
      GPUAAS_RETURN_IF_ERROR(RemoveTree(root.images.get(), name));
      continue;
    }
    // One volume that cannot be mounted must not keep every other one from being served; its
    // own calls fail (mounting again) until an operator looks.
    if (absl::Status mounted = MountImageVolume(root, id); !mounted.ok()) {
      Logger("storage")->error("volume {}: mounting its file system: {}", id, mounted.ToString());
      continue;
    }
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd top, OpenDirBeneath(root.volumes.get(), id, id));
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd staging,
                            OpenDirBeneath(top.get(), kVolumeStagingDir, id));
    GPUAAS_RETURN_IF_ERROR(PurgeDir(staging.get()));
    absl::StatusOr<UniqueFd> uploads = OpenDirBeneath(top.get(), kVolumeUploadsDir, id);
    if (uploads.ok()) {
      GPUAAS_RETURN_IF_ERROR(PurgeUploads(uploads->get()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VolumeFilesystem> ParseVolumeFilesystem(std::string_view name) {
  if (name == "loop-ext4") {
    return VolumeFilesystem::kLoopExt4;
  }
  if (name == "directory") {
    return VolumeFilesystem::kDirectory;
  }
  return absl::InvalidArgumentError(absl::StrCat("volume filesystem \"", std::string(name),
                                                 "\": must be loop-ext4 or directory"));
}

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
  root->loop_volumes = options.volume_filesystem == VolumeFilesystem::kLoopExt4;
  if (root->loop_volumes) {
    GPUAAS_RETURN_IF_ERROR(CheckLoopFilesystemUsable());
  }
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
  GPUAAS_ASSIGN_OR_RETURN(root->images, MakeDir(root->root.get(), kImagesDir));
  struct stat first;
  if (::fstat(root->volumes.get(), &first) != 0) {
    return ErrnoStatus(errno, "data_root");
  }
  for (const int fd :
       {root->staging.get(), root->uploads.get(), root->trash.get(), root->images.get()}) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_dev != first.st_dev) {
      return absl::FailedPreconditionError(
          absl::StrCat("data_root ", root->path,
                       ": volumes, staging, uploads, trash and images must be on one file system"));
    }
  }
  // Made first, so that the volumes Purge mounts are unmounted again if it fails.
  auto backend = std::make_unique<LocalBackend>(root);
  GPUAAS_RETURN_IF_ERROR(Purge(*root));
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace gpuaas::storage::local
