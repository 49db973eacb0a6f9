#include "services/storage/ceph/ceph_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libs/common/errno_status.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "services/storage/ceph/fuse_mount.h"
#include "services/storage/ceph/rstats.h"
#include "services/storage/ceph/tree_copy.h"
#include "services/storage/ceph_mount/mount_grants.h"
#include "services/storage/local/data_root.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/local_volume.h"
#include "services/storage/local/object_key.h"
#include "services/storage/local/safe_path.h"

namespace gpuaas::storage::ceph {
namespace {

using local::LocalVolume;

constexpr char kDataDir[] = "data";
constexpr char kStagingDir[] = ".staging";
constexpr char kUploadsDir[] = ".uploads";
// How stale a volume's counters may get before an open reads CephFS's again: other replicas
// and workloads change what a volume holds behind this process's back.
constexpr absl::Duration kUsageRefresh = absl::Seconds(2);
// How far CephFS's recursive counters of a subvolume trail the writes (measured here: a synced
// write reaches data/'s at once and the subvolume's 2.5 s later; the MDS propagates them one
// level at a time). Within this of a write of its own, a refresh only raises the counters.
constexpr absl::Duration kRstatLag = absl::Seconds(10);
// A staged file nobody has written to for this long belongs to a writer that died (the S3
// body timeouts are far shorter); ExpireUploads drops it. Replicas share .staging/, so nothing
// is dropped at start.
constexpr absl::Duration kStagedFileIdle = absl::Hours(1);
// Beside data/ in a volume restored from a snapshot, once the copy is complete.
constexpr char kRestoredMark[] = ".restored";

absl::Status NoSuchVolume(std::string_view id) {
  return absl::NotFoundError(absl::StrCat("storage ", std::string(id), ": no such volume"));
}

absl::Status NoSuchSnapshot(std::string_view id, std::string_view snapshot_id) {
  return absl::NotFoundError(
      absl::StrCat("storage ", std::string(id), ": no snapshot ", std::string(snapshot_id)));
}

absl::Status MakeDirIn(int parent_fd, const char* name, mode_t mode, std::string_view id) {
  if (::mkdirat(parent_fd, name, mode) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("create volume ", std::string(id), "'s ", name));
  }
  if (::fchmodat(parent_fd, name, mode, AT_SYMLINK_NOFOLLOW) != 0 && errno != EOPNOTSUPP) {
    return ErrnoStatus(errno, absl::StrCat("chmod volume ", std::string(id), "'s ", name));
  }
  return absl::OkStatus();
}

// Removes what writers that died left in `staging_fd`.
void DropIdleStagedFiles(int staging_fd, absl::Time now) {
  std::vector<std::string> idle;
  (void)local::ReadDir(staging_fd, [&](std::string_view name, local::EntryType) {
    struct stat st;
    if (::fstatat(staging_fd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        absl::TimeFromTimespec(st.st_mtim) < now - kStagedFileIdle) {
      idle.emplace_back(name);
    }
    return true;
  });
  for (const std::string& name : idle) {
    (void)local::RemoveTree(staging_fd, name);
  }
}

class CephBackend final : public Backend {
 public:
  CephBackend(std::unique_ptr<ceph_mount::RadosMgr> mgr, std::unique_ptr<Subvolumes> subvolumes,
              std::unique_ptr<ceph_mount::MountGrants> grants, std::string fs_name,
              std::unique_ptr<FuseMount> mount, UniqueFd mount_fd,
              std::shared_ptr<const local::DataRoot> root)
      : mgr_(std::move(mgr)),
        subvolumes_(std::move(subvolumes)),
        grants_(std::move(grants)),
        fs_name_(std::move(fs_name)),
        mount_(std::move(mount)),
        mount_fd_(std::move(mount_fd)),
        root_(std::move(root)) {}

  ~CephBackend() override {
    absl::MutexLock lock(&mu_);
    for (auto& [id, entry] : volumes_) {
      entry.volume->MarkDeleted();  // nothing is published through a mount about to go
    }
    volumes_.clear();
  }

  std::string_view backend_class() const override { return "ceph"; }

  absl::Status CreateVolume(std::string_view volume_id, const VolumeLimits& limits) override {
    GPUAAS_RETURN_IF_ERROR(local::ValidateStorageId(volume_id));
    // Ceph's "subvolume create" of an existing one would set its size: a retry keeps it.
    absl::StatusOr<std::string> path = subvolumes_->Path(volume_id);
    if (absl::IsNotFound(path.status())) {
      if (limits.max_bytes <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "volume ", std::string(volume_id), ": max_bytes must be positive (it is the quota)"));
      }
      GPUAAS_RETURN_IF_ERROR(subvolumes_->Create(volume_id, limits.max_bytes));
      path = subvolumes_->Path(volume_id);
    }
    if (!path.ok()) {
      return path.status();
    }
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd top, OpenTop(volume_id, *path));
    if (limits.max_files > 0) {
      GPUAAS_RETURN_IF_ERROR(WriteQuota(top.get(), "max_files", limits.max_files));
    }
    return MakeLayout(top.get(), volume_id);
  }

  absl::Status DeleteVolume(std::string_view volume_id) override {
    GPUAAS_RETURN_IF_ERROR(local::ValidateStorageId(volume_id));
    {
      absl::MutexLock lock(&mu_);
      if (auto it = volumes_.find(std::string(volume_id)); it != volumes_.end()) {
        it->second.volume->MarkDeleted();
        volumes_.erase(it);
      }
    }
    // A storage's snapshots go with it (Ceph refuses to remove a subvolume that has some).
    absl::StatusOr<std::vector<std::string>> snapshots = subvolumes_->ListSnapshots(volume_id);
    if (absl::IsNotFound(snapshots.status())) {
      return absl::OkStatus();
    }
    if (!snapshots.ok()) {
      return snapshots.status();
    }
    for (const std::string& snapshot : *snapshots) {
      absl::Status removed = subvolumes_->RemoveSnapshot(volume_id, snapshot);
      if (!removed.ok() && !absl::IsNotFound(removed)) {
        return removed;
      }
    }
    return subvolumes_->Remove(volume_id);
  }

  absl::StatusOr<std::shared_ptr<Volume>> OpenVolume(std::string_view volume_id,
                                                     const VolumeLimits& limits) override {
    GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<LocalVolume> volume, Find(volume_id, &limits));
    return std::shared_ptr<Volume>(std::move(volume));
  }

  // The subvolume's data/, which a node mounts itself with the attachment's credential
  // (GrantMount): nothing of this process's own mount reaches a node.
  absl::StatusOr<MountSource> MountSourceFor(std::string_view volume_id,
                                             std::string_view node_id) override {
    GPUAAS_RETURN_IF_ERROR(local::ValidateStorageId(volume_id));
    absl::StatusOr<std::string> path = subvolumes_->Path(volume_id);
    if (absl::IsNotFound(path.status())) {
      return NoSuchVolume(volume_id);
    }
    if (!path.ok()) {
      return path.status();
    }
    return MountSource{.ceph = CephMountSource{.monitors = grants_->monitors(),
                                               .fs_name = fs_name_,
                                               .path = absl::StrCat(*path, "/", kDataDir)}};
  }

  absl::StatusOr<MountCredential> GrantMount(std::string_view volume_id,
                                             std::string_view attachment_id,
                                             bool read_only) override {
    return grants_->credentials().Grant(volume_id, attachment_id, read_only);
  }

  absl::Status RevokeMount(std::string_view volume_id, std::string_view attachment_id) override {
    return grants_->credentials().Revoke(volume_id, attachment_id);
  }

  absl::StatusOr<VolumeUsage> Recount(std::string_view volume_id) override {
    // CephFS keeps the count; only its lag behind this process's own writes is minded.
    GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<LocalVolume> volume, Find(volume_id, nullptr));
    GPUAAS_RETURN_IF_ERROR(volume->RefreshUsage(kRstatLag));
    return volume->Usage();
  }

  absl::StatusOr<int> ExpireUploads(absl::Time cutoff) override {
    GPUAAS_ASSIGN_OR_RETURN(const std::vector<std::string> ids, subvolumes_->List());
    int expired = 0;
    for (const std::string& id : ids) {
      if (!local::ValidateStorageId(id).ok()) {
        continue;
      }
      absl::StatusOr<std::shared_ptr<LocalVolume>> volume = Find(id, nullptr);
      if (absl::IsNotFound(volume.status())) {
        continue;  // deleted meanwhile
      }
      if (!volume.ok()) {
        return volume.status();
      }
      GPUAAS_ASSIGN_OR_RETURN(const int n, (*volume)->ExpireUploads(cutoff));
      expired += n;
      absl::StatusOr<std::string> path = subvolumes_->Path(id);
      if (path.ok()) {
        absl::StatusOr<UniqueFd> top = OpenTop(id, *path);
        absl::StatusOr<UniqueFd> staging =
            top.ok() ? local::OpenDirBeneath(top->get(), kStagingDir, "volume") : top.status();
        if (staging.ok()) {
          DropIdleStagedFiles(staging->get(), absl::Now());
        }
      }
    }
    return expired;
  }

  absl::Status CreateSnapshot(std::string_view volume_id, std::string_view snapshot_id) override {
    GPUAAS_RETURN_IF_ERROR(ValidateSnapshot(volume_id, snapshot_id));
    // Ceph 16 answers success for a name already taken; a second snapshot under one name would
    // silently be the first.
    if (subvolumes_->SnapshotInfo(volume_id, snapshot_id).ok()) {
      return absl::AlreadyExistsError(absl::StrCat("storage ", std::string(volume_id),
                                                   ": snapshot ", std::string(snapshot_id),
                                                   " already exists"));
    }
    absl::Status created = subvolumes_->CreateSnapshot(volume_id, snapshot_id);
    if (absl::IsNotFound(created)) {
      return NoSuchVolume(volume_id);
    }
    return created;
  }

  absl::StatusOr<std::vector<SnapshotInfo>> ListSnapshots(std::string_view volume_id) override {
    GPUAAS_RETURN_IF_ERROR(local::ValidateStorageId(volume_id));
    absl::StatusOr<std::vector<std::string>> names = subvolumes_->ListSnapshots(volume_id);
    if (absl::IsNotFound(names.status())) {
      return NoSuchVolume(volume_id);
    }
    if (!names.ok()) {
      return names.status();
    }
    std::vector<SnapshotInfo> snapshots;
    for (const std::string& name : *names) {
      absl::StatusOr<Subvolumes::SnapshotDetails> details =
          subvolumes_->SnapshotInfo(volume_id, name);
      if (absl::IsNotFound(details.status())) {
        continue;  // deleted meanwhile
      }
      if (!details.ok()) {
        return details.status();
      }
      snapshots.push_back({.snapshot_id = name,
                           .bytes = SnapshotBytes(volume_id, name).value_or(details->bytes),
                           .create_time = details->created});
    }
    std::stable_sort(snapshots.begin(), snapshots.end(),
                     [](const auto& a, const auto& b) { return a.create_time < b.create_time; });
    return snapshots;
  }

  absl::Status DeleteSnapshot(std::string_view volume_id, std::string_view snapshot_id) override {
    GPUAAS_RETURN_IF_ERROR(ValidateSnapshot(volume_id, snapshot_id));
    absl::Status removed = subvolumes_->RemoveSnapshot(volume_id, snapshot_id);
    if (absl::IsNotFound(removed)) {
      return subvolumes_->Path(volume_id).ok() ? NoSuchSnapshot(volume_id, snapshot_id)
                                               : NoSuchVolume(volume_id);
    }
    return removed;
  }

  // A new volume of its own (CreateVolume: its own RADOS namespace and quota) filled by copying
  // the snapshot's data/ through this process's mount. Not Ceph's `fs subvolume snapshot
  // clone`: a clone keeps the source's RADOS namespace (measured on Ceph 16), so a node's
  // credential for the copy (`fs subvolume authorize`) would reach the source's objects too. The
  // source's staged files and uploads are not copied: they belong to its writers. A mark beside
  // data/ says the copy is complete; a copy cut short starts over.
  absl::Status RestoreSnapshot(std::string_view volume_id, std::string_view snapshot_id,
                               std::string_view new_volume_id,
                               const VolumeLimits& limits) override {
    GPUAAS_RETURN_IF_ERROR(ValidateSnapshot(volume_id, snapshot_id));
    GPUAAS_RETURN_IF_ERROR(local::ValidateStorageId(new_volume_id));
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd snapshot, OpenSnapshotDir(volume_id, snapshot_id));
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd from,
                            local::OpenDirBeneath(snapshot.get(), kDataDir, "snapshot"));
    GPUAAS_ASSIGN_OR_RETURN(const VolumeUsage held, ReadRecursiveUsage(from.get()));
    if (held.bytes > limits.max_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "snapshot ", std::string(snapshot_id), " of storage ", std::string(volume_id), " holds ",
          held.bytes, " bytes, more than the new storage's ", limits.max_bytes));
    }
    GPUAAS_RETURN_IF_ERROR(CreateVolume(new_volume_id, limits));
    GPUAAS_ASSIGN_OR_RETURN(const std::string path, subvolumes_->Path(new_volume_id));
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd top, OpenTop(new_volume_id, path));
    struct stat st;
    if (local::StatNoFollow(top.get(), kRestoredMark, &st).ok()) {
      return absl::OkStatus();  // a retry of a restore that completed
    }
    GPUAAS_RETURN_IF_ERROR(local::RemoveTree(top.get(), kDataDir));
    GPUAAS_RETURN_IF_ERROR(MakeLayout(top.get(), new_volume_id));
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd to,
                            local::OpenDirBeneath(top.get(), kDataDir, new_volume_id));
    GPUAAS_RETURN_IF_ERROR(CopyTree(from.get(), to.get()));
    const UniqueFd mark(
        ::openat(top.get(), kRestoredMark, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!mark.valid() || ::fsync(top.get()) != 0) {
      return ErrnoStatus(errno, absl::StrCat("restore into ", std::string(new_volume_id)));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ValidateSnapshot(std::string_view volume_id, std::string_view snapshot_id) const {
    GPUAAS_RETURN_IF_ERROR(local::ValidateStorageId(volume_id));
    if (absl::Status valid = local::ValidateStorageId(snapshot_id); !valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("snapshot_id \"", std::string(snapshot_id),
                       "\": must be 1..128 of [A-Za-z0-9_.-], not starting with \".\""));
    }
    return absl::OkStatus();
  }

  // The snapshot's directory on this process's mount (what the subvolume's top held).
  // Subvolumes of version 1 keep their snapshots in <path>/.snap/, version 2 in
  // <path>/../.snap/<snapshot>/<uuid>. NOT_FOUND naming the volume or the snapshot.
  absl::StatusOr<UniqueFd> OpenSnapshotDir(std::string_view volume_id,
                                           std::string_view snapshot_id) {
    absl::StatusOr<std::string> path = subvolumes_->Path(volume_id);
    if (absl::IsNotFound(path.status())) {
      return NoSuchVolume(volume_id);
    }
    if (!path.ok()) {
      return path.status();
    }
    const std::string snapshot(snapshot_id);
    const size_t slash = path->rfind('/');
    for (const std::string& candidate :
         {absl::StrCat(*path, "/.snap/", snapshot),
          absl::StrCat(path->substr(0, slash), "/.snap/", snapshot, path->substr(slash))}) {
      absl::StatusOr<UniqueFd> dir = local::OpenDirBeneath(mount_fd_.get(), candidate.substr(1),
                                                           absl::StrCat("snapshot ", snapshot));
      if (dir.ok()) {
        return dir;
      }
    }
    return NoSuchSnapshot(volume_id, snapshot_id);
  }

  // CephFS's recursive byte count of the snapshot (Ceph 16's "snapshot info" answers size 0).
  absl::StatusOr<int64_t> SnapshotBytes(std::string_view volume_id, std::string_view snapshot_id) {
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd dir, OpenSnapshotDir(volume_id, snapshot_id));
    GPUAAS_ASSIGN_OR_RETURN(const VolumeUsage usage, ReadRecursiveUsage(dir.get()));
    return usage.bytes;
  }

  struct Entry {
    std::shared_ptr<LocalVolume> volume;
    std::string path;  // the subvolume's, in the file system
    UniqueFd top;      // what was there when it was loaded
    int64_t quota_bytes = 0;
    int64_t quota_files = 0;
    absl::Time counted;
  };

  // The subvolume's directory on this process's mount.
  absl::StatusOr<UniqueFd> OpenTop(std::string_view id, const std::string& path) const {
    absl::StatusOr<UniqueFd> top = local::OpenDirBeneath(mount_fd_.get(), path.substr(1),
                                                         absl::StrCat("volume ", std::string(id)));
    if (absl::IsNotFound(top.status())) {
      return NoSuchVolume(id);
    }
    return top;
  }

  absl::Status MakeLayout(int top_fd, std::string_view id) const {
    // data/ is written by workloads under any uid; the rest only by this service.
    GPUAAS_RETURN_IF_ERROR(MakeDirIn(top_fd, kDataDir, 0777, id));
    return MakeDirIn(top_fd, kStagingDir, 0700, id);
  }

  // The volume's shared LocalVolume, loaded on first use. With `limits`: applies them (a larger
  // size or file count grows the quota online) and refreshes stale counters.
  absl::StatusOr<std::shared_ptr<LocalVolume>> Find(std::string_view volume_id,
                                                    const VolumeLimits* limits) {
    GPUAAS_RETURN_IF_ERROR(local::ValidateStorageId(volume_id));
    absl::MutexLock lock(&mu_);
    auto it = volumes_.find(std::string(volume_id));
    if (it == volumes_.end()) {
      GPUAAS_ASSIGN_OR_RETURN(Entry entry, Load(volume_id));
      it = volumes_.emplace(std::string(volume_id), std::move(entry)).first;
    } else if (limits != nullptr && absl::Now() - it->second.counted > kUsageRefresh) {
      absl::Status refreshed = StillThere(it->second);
      if (refreshed.ok()) {
        refreshed = it->second.volume->RefreshUsage(kRstatLag);
      }
      if (!refreshed.ok()) {
        // Deleted through another replica (Ceph moved its directory to the trash), or the
        // mount failed: load it again, which says NOT_FOUND for a volume that is gone.
        it->second.volume->MarkDeleted();
        volumes_.erase(it);
        GPUAAS_ASSIGN_OR_RETURN(Entry entry, Load(volume_id));
        it = volumes_.emplace(std::string(volume_id), std::move(entry)).first;
      } else {
        it->second.counted = absl::Now();
      }
    }
    Entry& entry = it->second;
    if (limits != nullptr) {
      GPUAAS_RETURN_IF_ERROR(Grow(volume_id, entry, *limits));
      entry.volume->SetLimits(*limits);
    }
    return entry.volume;
  }

  absl::StatusOr<Entry> Load(std::string_view id) {
    absl::StatusOr<std::string> path = subvolumes_->Path(id);
    if (absl::IsNotFound(path.status())) {
      return NoSuchVolume(id);
    }
    if (!path.ok()) {
      return path.status();
    }
    GPUAAS_ASSIGN_OR_RETURN(UniqueFd top, OpenTop(id, *path));
    GPUAAS_RETURN_IF_ERROR(MakeLayout(top.get(), id));
    Entry entry;
    GPUAAS_ASSIGN_OR_RETURN(entry.quota_bytes, ReadQuota(top.get(), "max_bytes"));
    GPUAAS_ASSIGN_OR_RETURN(entry.quota_files, ReadQuota(top.get(), "max_files"));
    GPUAAS_ASSIGN_OR_RETURN(UniqueFd data, local::OpenDirBeneath(top.get(), kDataDir, id));
    GPUAAS_ASSIGN_OR_RETURN(UniqueFd staging, local::OpenDirBeneath(top.get(), kStagingDir, id));
    // What the volume holds without the staged files: a writer's own are counted by its
    // reservation, and other replicas' by theirs (and by CephFS's quota meanwhile).
    // Close-on-exec: a ceph-fuse started later (another backend in this process) must not
    // hold this mount open.
    auto dirs = std::make_shared<std::pair<UniqueFd, UniqueFd>>(
        UniqueFd(::fcntl(top.get(), F_DUPFD_CLOEXEC, 0)),
        UniqueFd(::fcntl(staging.get(), F_DUPFD_CLOEXEC, 0)));
    entry.path = *path;
    entry.top = UniqueFd(::fcntl(top.get(), F_DUPFD_CLOEXEC, 0));
    auto counter = [dirs]() -> absl::StatusOr<VolumeUsage> {
      GPUAAS_ASSIGN_OR_RETURN(VolumeUsage all, ReadRecursiveUsage(dirs->first.get()));
      GPUAAS_ASSIGN_OR_RETURN(const VolumeUsage staged, ReadRecursiveUsage(dirs->second.get()));
      all.bytes = std::max<int64_t>(all.bytes - staged.bytes, 0);
      all.files = std::max<int64_t>(all.files - staged.files, 0);
      return all;
    };
    entry.volume = std::make_shared<LocalVolume>(
        root_, std::string(id),
        local::VolumeDirs{std::move(data), std::move(staging), std::move(top), kUploadsDir},
        std::move(counter));
    GPUAAS_RETURN_IF_ERROR(entry.volume->EnsureLoaded());
    entry.counted = absl::Now();
    return entry;
  }

  // NOT_FOUND when the subvolume's path no longer leads to the directory loaded: a volume
  // deleted through another replica is moved to Ceph's trash, where its open directories
  // would still take writes.
  absl::Status StillThere(const Entry& entry) const {
    struct stat now;
    struct stat loaded;
    const std::string path = mount_->path() + entry.path;
    if (::stat(path.c_str(), &now) != 0 || ::fstat(entry.top.get(), &loaded) != 0 ||
        now.st_ino != loaded.st_ino) {
      return absl::NotFoundError("the volume was deleted");
    }
    return absl::OkStatus();
  }

  // A larger size is a larger quota, online: writers see it at once.
  absl::Status Grow(std::string_view id, Entry& entry, const VolumeLimits& limits)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (limits.max_bytes > entry.quota_bytes) {
      GPUAAS_RETURN_IF_ERROR(subvolumes_->Resize(id, limits.max_bytes));
      entry.quota_bytes = limits.max_bytes;
    }
    if (limits.max_files > entry.quota_files) {
      GPUAAS_ASSIGN_OR_RETURN(const std::string path, subvolumes_->Path(id));
      GPUAAS_ASSIGN_OR_RETURN(const UniqueFd top, OpenTop(id, path));
      GPUAAS_RETURN_IF_ERROR(WriteQuota(top.get(), "max_files", limits.max_files));
      entry.quota_files = limits.max_files;
    }
    return absl::OkStatus();
  }

  // One connection for both (declared first: destroyed last).
  const std::unique_ptr<ceph_mount::RadosMgr> mgr_;
  const std::unique_ptr<Subvolumes> subvolumes_;
  const std::unique_ptr<ceph_mount::MountGrants> grants_;
  const std::string fs_name_;
  const std::unique_ptr<FuseMount> mount_;
  const UniqueFd mount_fd_;
  const std::shared_ptr<const local::DataRoot> root_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> volumes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> NewCephBackend(const CephBackendOptions& options) {
  for (const auto& [name, value] : {std::pair{"conf", &options.cluster.conf_path},
                                    {"keyring", &options.cluster.keyring_path},
                                    {"client id", &options.cluster.client_id},
                                    {"fs name", &options.fs_name},
                                    {"mount point", &options.mount_point}}) {
    if (value->empty()) {
      return absl::InvalidArgumentError(absl::StrCat("ceph ", name, ": must not be empty"));
    }
  }
  for (const auto& [name, path] : {std::pair{"conf", &options.cluster.conf_path},
                                   {"keyring", &options.cluster.keyring_path}}) {
    if (::access(path->c_str(), R_OK) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ceph ", name, " ", *path, ": cannot be read (", strerror(errno), ")"));
    }
  }
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<ceph_mount::RadosMgr> mgr,
                          ceph_mount::RadosMgr::Connect(options.cluster));
  auto subvolumes = std::make_unique<Subvolumes>(*mgr, options.fs_name);
  // The volumes module answers ENOENT for a file system that is not there.
  if (absl::Status listed = subvolumes->List().status(); absl::IsNotFound(listed)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ceph fs ", options.fs_name, ": no such file system (", listed.message(), ")"));
  } else if (!listed.ok()) {
    return listed;
  }
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<ceph_mount::MountGrants> grants,
                          ceph_mount::MountGrants::Connect(*mgr, options.cluster, options.fs_name));
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<FuseMount> mount,
                          FuseMount::Mount(options.cluster, options.fs_name, options.mount_point));
  UniqueFd mount_fd(::open(mount->path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!mount_fd.valid()) {
    return ErrnoStatus(errno, absl::StrCat("ceph mount ", mount->path()));
  }
  auto root = std::make_shared<local::DataRoot>();
  root->path = mount->path();
  root->sync_writes = options.sync_writes;
  root->hashers = std::make_unique<ThreadPool>(
      static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u)),
      /*max_queued=*/64);
  return std::unique_ptr<Backend>(std::make_unique<CephBackend>(
      std::move(mgr), std::move(subvolumes), std::move(grants), options.fs_name, std::move(mount),
      std::move(mount_fd), std::move(root)));
}

}  // namespace gpuaas::storage::ceph
