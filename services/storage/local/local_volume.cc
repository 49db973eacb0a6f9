#include "services/storage/local/local_volume.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/folder_marker.h"
#include "services/storage/local/lister.h"
#include "services/storage/local/md5.h"
#include "services/storage/local/object_key.h"
#include "services/storage/local/object_meta.h"
#include "services/storage/local/staged_writer.h"
#include "services/storage/local/upload_store.h"
#include "services/storage/local/usage_walk.h"

namespace gpuaas::storage::local {
namespace {

constexpr int kReadFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

// The key prefix of the directory made of the first `count` segments: "" or "a/b/".
std::string DirKey(const std::vector<std::string>& segments, size_t count) {
  std::string key;
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(&key, segments[i], "/");
  }
  return key;
}

class FileReader final : public ObjectReader {
 public:
  FileReader(UniqueFd fd, ObjectInfo info) : fd_(std::move(fd)), info_(std::move(info)) {}

  const ObjectInfo& info() const override { return info_; }

  absl::StatusOr<size_t> ReadAt(int64_t offset, char* out, size_t size) override {
    if (offset < 0) {
      return absl::InvalidArgumentError("offset: must not be negative");
    }
    while (true) {
      const ssize_t n = ::pread(fd_.get(), out, size, offset);
      if (n >= 0) {
        return static_cast<size_t>(n);
      }
      if (errno != EINTR) {
        return ErrnoStatus(errno, Quoted(info_.key));
      }
    }
  }

 private:
  UniqueFd fd_;
  ObjectInfo info_;
};

}  // namespace

LocalVolume::LocalVolume(std::shared_ptr<const DataRoot> root, std::string storage_id,
                         VolumeDirs dirs, UsageCounter count)
    : root_(std::move(root)),
      storage_id_(std::move(storage_id)),
      dirs_(std::move(dirs)),
      count_(std::move(count)) {}

absl::Status LocalVolume::CheckAlive() const {
  if (deleted_.load(std::memory_order_acquire)) {
    return absl::NotFoundError(absl::StrCat("storage ", storage_id_, " was deleted"));
  }
  return absl::OkStatus();
}

absl::Status LocalVolume::EnsureLoaded() {
  absl::MutexLock lock(&load_mu_);
  if (loaded_) {
    return absl::OkStatus();
  }
  absl::StatusOr<VolumeUsage> usage = Recount();
  if (!usage.ok()) {
    return usage.status();
  }
  loaded_ = true;
  return absl::OkStatus();
}

absl::StatusOr<VolumeUsage> LocalVolume::Recount() {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  // Both locks: no name appears or goes and no counter moves while the walk counts.
  absl::MutexLock uploads_lock(&uploads_mu_);
  absl::MutexLock names_lock(&names_mu_);
  if (count_ != nullptr) {
    GPUAAS_ASSIGN_OR_RETURN(const VolumeUsage counted, count_());
    ledger_.SetUsed(counted);
    listings_.Clear();
    return counted;
  }
  absl::StatusOr<VolumeUsage> usage = CountTree(dirs_.data.get());
  if (!usage.ok()) {
    return usage.status();
  }
  absl::StatusOr<UniqueFd> uploads = UploadsDir(/*create=*/false);
  if (uploads.ok()) {
    std::vector<std::string> ids;
    absl::Status status = ReadDir(uploads->get(), [&](std::string_view name, EntryType type) {
      if (type == EntryType::kDir && IsUploadId(name)) {
        ids.emplace_back(name);
      }
      return true;
    });
    if (!status.ok()) {
      return status;
    }
    for (const std::string& id : ids) {
      absl::StatusOr<UniqueFd> upload = OpenDirBeneath(uploads->get(), id, "upload");
      absl::StatusOr<int64_t> bytes =
          upload.ok() ? PartBytes(upload->get()) : absl::StatusOr<int64_t>(0);
      if (!bytes.ok()) {
        return bytes.status();
      }
      usage->bytes += *bytes;
    }
  } else if (!absl::IsNotFound(uploads.status())) {
    return uploads.status();
  }
  ledger_.SetUsed(*usage);
  listings_.Clear();
  return *usage;
}

absl::Status LocalVolume::RefreshUsage(absl::Duration lag) {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  if (count_ == nullptr) {
    return absl::FailedPreconditionError("refresh usage: the volume has no usage counter");
  }
  GPUAAS_ASSIGN_OR_RETURN(const VolumeUsage counted, count_());
  ledger_.SetUsedLagging(counted, lag, absl::Now());
  return absl::OkStatus();
}

void LocalVolume::MarkDeleted() {
  absl::MutexLock uploads_lock(&uploads_mu_);
  absl::MutexLock names_lock(&names_mu_);
  deleted_.store(true, std::memory_order_release);
}

absl::StatusOr<LocalVolume::Target> LocalVolume::MakeTarget(std::string_view key) const {
  GPUAAS_RETURN_IF_ERROR(ValidateKey(key));
  return Target{std::string(key), KeySegments(key)};
}

absl::StatusOr<LocalVolume::Existing> LocalVolume::InspectLeaf(int parent_fd,
                                                               const Target& target) const {
  struct stat st;
  absl::Status status = StatNoFollow(parent_fd, target.leaf().c_str(), &st);
  if (absl::IsNotFound(status)) {
    return Existing{};
  }
  if (!status.ok()) {
    return status;
  }
  if (S_ISLNK(st.st_mode)) {
    return absl::PermissionDeniedError(
        absl::StrCat(Quoted(target.key), ": a symlink (symlinks are never followed)"));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(Quoted(target.key), ": names a directory"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(Quoted(target.key), ": names a special file"));
  }
  return Existing{true, st.st_size};
}

absl::StatusOr<LocalVolume::Existing> LocalVolume::Inspect(const Target& target) const {
  absl::StatusOr<DirChain> chain = WalkDirs(dirs_.data.get(), target.segments, target.dir_count(),
                                            /*create=*/false, Quoted(target.key));
  if (absl::IsNotFound(chain.status())) {
    return Existing{};  // created on publish
  }
  if (!chain.ok()) {
    return chain.status();
  }
  return InspectLeaf(chain->Innermost(dirs_.data.get()), target);
}

absl::StatusOr<UniqueFd> LocalVolume::OpenObject(std::string_view key, struct stat& st) const {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_RETURN_IF_ERROR(ValidateKey(key));
  absl::StatusOr<UniqueFd> fd =
      OpenBeneath(dirs_.data.get(), std::string(key), kReadFlags, Quoted(key));
  if (!fd.ok()) {
    return fd.status();
  }
  if (::fstat(fd->get(), &st) != 0) {
    return ErrnoStatus(errno, Quoted(key));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(Quoted(key), ": names a directory"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(Quoted(key), ": names a special file"));
  }
  return fd;
}

absl::StatusOr<ObjectInfo> LocalVolume::Stat(std::string_view key) {
  if (IsFolderKey(key)) return StatFolder(key);
  struct stat st;
  absl::StatusOr<UniqueFd> fd = OpenObject(key, st);
  if (!fd.ok()) {
    return fd.status();
  }
  return ReadObjectInfo(fd->get(), st, std::string(key));
}

absl::StatusOr<std::unique_ptr<ObjectReader>> LocalVolume::Open(std::string_view key) {
  if (IsFolderKey(key)) {
    GPUAAS_ASSIGN_OR_RETURN(ObjectInfo info, StatFolder(key));
    return FolderReader(std::move(info));
  }
  struct stat st;
  absl::StatusOr<UniqueFd> fd = OpenObject(key, st);
  if (!fd.ok()) {
    return fd.status();
  }
  ObjectInfo info = ReadObjectInfo(fd->get(), st, std::string(key));
  return std::make_unique<FileReader>(*std::move(fd), std::move(info));
}

absl::StatusOr<std::unique_ptr<ObjectWriter>> LocalVolume::Create(std::string_view key,
                                                                  int64_t size,
                                                                  std::string_view content_type) {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(Target target, MakeTarget(key));
  if (size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("size: ", size, " is negative"));
  }
  if (content_type.size() > kMaxContentTypeBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("content_type: at most ", kMaxContentTypeBytes, " bytes"));
  }
  // Refused before any byte is sent: a bad path, or a write that cannot fit. The old object's
  // size is credited, so replacing a file in a full volume with one no larger works.
  GPUAAS_ASSIGN_OR_RETURN(const Existing old, Inspect(target));
  GPUAAS_ASSIGN_OR_RETURN(Reservation reservation,
                          ledger_.Reserve(Charge{size - old.size, old.exists ? 0 : 1}));
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> file,
                          StagedFile::Create(dirs_.staging.get(), root_->hashers.get()));
  auto publish = [self = shared_from_this(), target = std::move(target),
                  type = std::string(content_type)](
                     StagedFile& staged, Reservation& held) -> absl::StatusOr<ObjectInfo> {
    std::string etag = ToHex(staged.Md5Digest());
    GPUAAS_ASSIGN_OR_RETURN(const struct stat st,
                            staged.Seal(etag, type, self->root_->sync_writes));
    return self->PublishObject(target, staged, st, held, Charge{}, std::move(etag), type);
  };
  return std::make_unique<StagedWriter>(std::move(publish), std::move(file), size,
                                        std::move(reservation));
}

absl::StatusOr<ObjectInfo> LocalVolume::PublishObject(const Target& target, StagedFile& file,
                                                      const struct stat& st,
                                                      Reservation& reservation, const Charge& extra,
                                                      std::string etag, std::string content_type) {
  DirChain chain;
  {
    absl::MutexLock lock(&names_mu_);
    GPUAAS_RETURN_IF_ERROR(CheckAlive());
    GPUAAS_ASSIGN_OR_RETURN(chain, WalkDirs(dirs_.data.get(), target.segments, target.dir_count(),
                                            /*create=*/true, Quoted(target.key)));
    const int parent = chain.Innermost(dirs_.data.get());
    absl::Status status;
    absl::StatusOr<Existing> old = InspectLeaf(parent, target);
    Charge delta;
    if (old.ok()) {
      delta = Charge{st.st_size - old->size + extra.bytes, (old->exists ? 0 : 1) + extra.files};
      status = ledger_.Settle(reservation, delta);
    } else {
      status = old.status();
    }
    if (status.ok()) {
      status = file.PublishAt(parent, target.leaf());
      if (!status.ok()) {
        ledger_.Apply(Charge{-delta.bytes, -delta.files});
      }
    }
    if (!status.ok()) {
      RemoveEmptyDirs(dirs_.data.get(), target.segments, chain, chain.first_created);
      return status;
    }
    InvalidateListings(target, chain.first_created);
  }
  if (root_->sync_writes) {
    GPUAAS_RETURN_IF_ERROR(SyncFd(chain.Innermost(dirs_.data.get()), "directory"));
    for (size_t i = chain.first_created; i < chain.fds.size(); ++i) {
      GPUAAS_RETURN_IF_ERROR(SyncFd(chain.ParentOf(i, dirs_.data.get()), "directory"));
    }
  }
  ObjectInfo info;
  info.key = target.key;
  info.size = st.st_size;
  info.modify_time = absl::TimeFromTimespec(st.st_mtim);
  info.etag = std::move(etag);
  info.content_type = std::move(content_type);
  return info;
}

void LocalVolume::InvalidateListings(const Target& target, size_t first_changed_dir) {
  for (size_t i = std::min(first_changed_dir, target.dir_count()); i <= target.dir_count(); ++i) {
    listings_.Invalidate(DirKey(target.segments, i));
  }
}

absl::Status LocalVolume::Delete(std::string_view key) {
  if (IsFolderKey(key)) return DeleteFolder(key);
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(const Target target, MakeTarget(key));
  absl::MutexLock lock(&names_mu_);
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  absl::StatusOr<DirChain> chain = WalkDirs(dirs_.data.get(), target.segments, target.dir_count(),
                                            /*create=*/false, Quoted(key));
  if (absl::IsNotFound(chain.status()) || absl::IsFailedPrecondition(chain.status())) {
    return absl::OkStatus();  // nothing can be stored under that key
  }
  if (!chain.ok()) {
    return chain.status();
  }
  const int parent = chain->Innermost(dirs_.data.get());
  GPUAAS_ASSIGN_OR_RETURN(const Existing old, InspectLeaf(parent, target));
  if (!old.exists) {
    return absl::OkStatus();
  }
  if (::unlinkat(parent, target.leaf().c_str(), 0) != 0) {
    if (errno == ENOENT) {
      return absl::OkStatus();
    }
    return ErrnoStatus(errno, Quoted(key));
  }
  ledger_.Apply(Charge{-old.size, -1});
  if (root_->sync_writes) {
    GPUAAS_RETURN_IF_ERROR(SyncFd(parent, "directory"));
  }
  const size_t removed = RemoveEmptyDirs(dirs_.data.get(), target.segments, *chain, 0);
  InvalidateListings(target, target.dir_count() - removed);
  return absl::OkStatus();
}

absl::StatusOr<ObjectInfo> LocalVolume::Copy(std::string_view from_key, std::string_view to_key) {
  struct stat src_st;
  GPUAAS_ASSIGN_OR_RETURN(UniqueFd src, OpenObject(from_key, src_st));
  const ObjectInfo src_info = ReadObjectInfo(src.get(), src_st, std::string(from_key));
  GPUAAS_ASSIGN_OR_RETURN(Target target, MakeTarget(to_key));
  GPUAAS_ASSIGN_OR_RETURN(const Existing old, Inspect(target));
  GPUAAS_ASSIGN_OR_RETURN(Reservation reservation,
                          ledger_.Reserve(Charge{src_st.st_size - old.size, old.exists ? 0 : 1}));
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> file,
                          StagedFile::Create(dirs_.staging.get()));
  GPUAAS_RETURN_IF_ERROR(file->AppendFrom(src.get(), 0, src_st.st_size));
  // The source's recorded ETag still describes the copy when the source did not change while
  // it was copied; otherwise hash the copy itself, so the ETag is never wrong.
  std::string etag;
  struct stat after;
  std::optional<std::string> fresh = FreshEtag(src.get(), src_st);
  if (fresh.has_value() && ::fstat(src.get(), &after) == 0 && after.st_size == src_st.st_size &&
      after.st_mtim.tv_sec == src_st.st_mtim.tv_sec &&
      after.st_mtim.tv_nsec == src_st.st_mtim.tv_nsec) {
    etag = *std::move(fresh);
  } else {
    GPUAAS_ASSIGN_OR_RETURN(const std::string md5, file->Md5FromDisk());
    etag = ToHex(md5);
  }
  GPUAAS_ASSIGN_OR_RETURN(const struct stat st,
                          file->Seal(etag, src_info.content_type, root_->sync_writes));
  return PublishObject(target, *file, st, reservation, Charge{}, std::move(etag),
                       src_info.content_type);
}

absl::StatusOr<ListResult> LocalVolume::List(const ListRequest& request) {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  return ListObjects(dirs_.data.get(), listings_, request);
}

}  // namespace gpuaas::storage::local
