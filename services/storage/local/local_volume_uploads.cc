// LocalVolume's multipart uploads: parts staged and renamed into the upload's directory (outside
// the volume), assembled by Complete into one staged file without passing through memory.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/local_volume.h"
#include "services/storage/local/md5.h"
#include "services/storage/local/object_key.h"
#include "services/storage/local/object_meta.h"
#include "services/storage/local/staged_writer.h"
#include "services/storage/local/upload_store.h"

namespace gpuaas::storage::local {
namespace {

absl::Status NoSuchUpload(std::string_view upload_id) {
  return absl::NotFoundError(absl::StrCat("upload \"", std::string(upload_id),
                                          "\": no such upload (completed, aborted or expired)"));
}

}  // namespace

absl::StatusOr<UniqueFd> LocalVolume::UploadsDir(bool create) const {
  const int parent = dirs_.uploads_parent.get();
  if (create && ::mkdirat(parent, dirs_.uploads_name.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "create the uploads directory");
  }
  return OpenDirBeneath(parent, dirs_.uploads_name, "uploads directory");
}

absl::StatusOr<UniqueFd> LocalVolume::OpenUpload(std::string_view upload_id) const {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  if (!IsUploadId(upload_id)) {
    return NoSuchUpload(upload_id);
  }
  absl::StatusOr<UniqueFd> uploads = UploadsDir(/*create=*/false);
  if (absl::IsNotFound(uploads.status())) {
    return NoSuchUpload(upload_id);
  }
  if (!uploads.ok()) {
    return uploads.status();
  }
  absl::StatusOr<UniqueFd> upload =
      OpenDirBeneath(uploads->get(), std::string(upload_id), "upload");
  if (absl::IsNotFound(upload.status())) {
    return NoSuchUpload(upload_id);
  }
  return upload;
}

absl::StatusOr<UploadInfo> LocalVolume::CreateUpload(std::string_view key,
                                                     std::string_view content_type) {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(const Target target, MakeTarget(key));
  if (content_type.size() > kMaxContentTypeBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("content_type: at most ", kMaxContentTypeBytes, " bytes"));
  }
  // A key that can never be written is refused now rather than after gigabytes of parts.
  GPUAAS_RETURN_IF_ERROR(Inspect(target).status());
  const UploadMeta meta{target.key, std::string(content_type), absl::Now()};
  const std::string upload_id = NewUploadId();
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> file,
                          StagedFile::Create(dirs_.staging.get()));
  GPUAAS_RETURN_IF_ERROR(file->Append(EncodeUploadMeta(meta)));
  GPUAAS_RETURN_IF_ERROR(file->Seal(ToHex(file->Md5Digest()), "", root_->sync_writes).status());
  absl::MutexLock lock(&uploads_mu_);
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  GPUAAS_ASSIGN_OR_RETURN(const UniqueFd uploads, UploadsDir(/*create=*/true));
  if (::mkdirat(uploads.get(), upload_id.c_str(), 0700) != 0) {
    return ErrnoStatus(errno, "create the upload's directory");
  }
  // Until "meta" lands the directory is no upload; the backend purges such leftovers at start.
  GPUAAS_ASSIGN_OR_RETURN(const UniqueFd upload,
                          OpenDirBeneath(uploads.get(), upload_id, "upload"));
  GPUAAS_RETURN_IF_ERROR(file->PublishAt(upload.get(), kUploadMetaName));
  if (root_->sync_writes) {
    GPUAAS_RETURN_IF_ERROR(SyncFd(upload.get(), "upload directory"));
    GPUAAS_RETURN_IF_ERROR(SyncFd(uploads.get(), "uploads directory"));
  }
  return UploadInfo{upload_id, target.key, meta.create_time};
}

absl::StatusOr<std::unique_ptr<ObjectWriter>> LocalVolume::CreatePart(std::string_view upload_id,
                                                                      int part_number,
                                                                      int64_t size) {
  if (part_number < 1 || part_number > kMaxPartNumber) {
    return absl::InvalidArgumentError(
        absl::StrCat("part_number: ", part_number, " is outside 1..", kMaxPartNumber));
  }
  if (size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("size: ", size, " is negative"));
  }
  GPUAAS_ASSIGN_OR_RETURN(const UniqueFd upload, OpenUpload(upload_id));
  GPUAAS_ASSIGN_OR_RETURN(const UploadMeta meta, ReadUploadMeta(upload.get()));
  const std::string name = PartFileName(part_number);
  struct stat old;
  const int64_t old_size =
      StatNoFollow(upload.get(), name.c_str(), &old).ok() && S_ISREG(old.st_mode) ? old.st_size : 0;
  // Parts count bytes against the limit (they are on disk), not files: the object they become
  // is one file, counted when it is completed.
  GPUAAS_ASSIGN_OR_RETURN(Reservation reservation, ledger_.Reserve(Charge{size - old_size, 0}));
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> file,
                          StagedFile::Create(dirs_.staging.get(), root_->hashers.get()));
  auto publish = [self = shared_from_this(), id = std::string(upload_id), part_number,
                  key = meta.key](StagedFile& staged, Reservation& held) {
    return self->PublishPart(id, part_number, key, staged, held);
  };
  return std::make_unique<StagedWriter>(std::move(publish), std::move(file), size,
                                        std::move(reservation));
}

absl::StatusOr<ObjectInfo> LocalVolume::PublishPart(const std::string& upload_id, int part_number,
                                                    const std::string& key, StagedFile& file,
                                                    Reservation& reservation) {
  std::string etag = ToHex(file.Md5Digest());
  GPUAAS_ASSIGN_OR_RETURN(const struct stat st, file.Seal(etag, "", root_->sync_writes));
  const std::string name = PartFileName(part_number);
  UniqueFd upload;
  {
    absl::MutexLock lock(&uploads_mu_);
    // Opened again under the lock: an upload completed or aborted meanwhile has moved away, and
    // its parts must not reappear.
    GPUAAS_ASSIGN_OR_RETURN(upload, OpenUpload(upload_id));
    struct stat old;
    const int64_t old_size =
        StatNoFollow(upload.get(), name.c_str(), &old).ok() && S_ISREG(old.st_mode) ? old.st_size
                                                                                    : 0;
    const Charge delta{st.st_size - old_size, 0};
    GPUAAS_RETURN_IF_ERROR(ledger_.Settle(reservation, delta));
    absl::Status status = file.PublishAt(upload.get(), name);
    if (!status.ok()) {
      ledger_.Apply(Charge{-delta.bytes, 0});
      return status;
    }
  }
  if (root_->sync_writes) {
    GPUAAS_RETURN_IF_ERROR(SyncFd(upload.get(), "upload directory"));
  }
  ObjectInfo info;
  info.key = key;
  info.size = st.st_size;
  info.modify_time = absl::TimeFromTimespec(st.st_mtim);
  info.etag = std::move(etag);
  return info;
}

absl::StatusOr<std::vector<PartInfo>> LocalVolume::ListParts(std::string_view upload_id) {
  GPUAAS_ASSIGN_OR_RETURN(const UniqueFd upload, OpenUpload(upload_id));
  return ReadParts(upload.get());
}

absl::StatusOr<std::vector<UploadInfo>> LocalVolume::ListUploads() {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  std::vector<UploadInfo> uploads;
  absl::StatusOr<UniqueFd> dir = UploadsDir(/*create=*/false);
  if (absl::IsNotFound(dir.status())) {
    return uploads;
  }
  if (!dir.ok()) {
    return dir.status();
  }
  std::vector<std::string> ids;
  GPUAAS_RETURN_IF_ERROR(ReadDir(dir->get(), [&](std::string_view name, EntryType type) {
    if (type == EntryType::kDir && IsUploadId(name)) {
      ids.emplace_back(name);
    }
    return true;
  }));
  for (const std::string& id : ids) {
    absl::StatusOr<UniqueFd> upload = OpenDirBeneath(dir->get(), id, "upload");
    if (!upload.ok()) {
      continue;  // completed or aborted meanwhile
    }
    absl::StatusOr<UploadMeta> meta = ReadUploadMeta(upload->get());
    if (!meta.ok()) {
      continue;  // still being created
    }
    uploads.push_back(UploadInfo{id, meta->key, meta->create_time});
  }
  std::sort(uploads.begin(), uploads.end(), [](const UploadInfo& a, const UploadInfo& b) {
    return std::tie(a.key, a.create_time, a.upload_id) <
           std::tie(b.key, b.create_time, b.upload_id);
  });
  return uploads;
}

absl::StatusOr<std::string> LocalVolume::ClaimUpload(int uploads_fd, std::string_view upload_id) {
  std::string claimed = RandomStagingName(".upload");
  if (::renameat(uploads_fd, std::string(upload_id).c_str(), dirs_.staging.get(),
                 claimed.c_str()) != 0) {
    if (errno == ENOENT) {
      return NoSuchUpload(upload_id);
    }
    return ErrnoStatus(errno, "claim the upload");
  }
  return claimed;
}

absl::StatusOr<ObjectInfo> LocalVolume::CompleteUpload(std::string_view upload_id,
                                                       const std::vector<PartInfo>& parts) {
  GPUAAS_ASSIGN_OR_RETURN(const UniqueFd upload, OpenUpload(upload_id));
  GPUAAS_ASSIGN_OR_RETURN(const UploadMeta meta, ReadUploadMeta(upload.get()));
  if (parts.empty()) {
    return absl::InvalidArgumentError("parts: at least one part is required");
  }
  if (parts.size() > static_cast<size_t>(kMaxPartNumber)) {
    return absl::InvalidArgumentError(absl::StrCat("parts: at most ", kMaxPartNumber, " parts"));
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const int number = parts[i].part_number;
    if (number < 1 || number > kMaxPartNumber) {
      return absl::InvalidArgumentError(
          absl::StrCat("parts: part number ", number, " is outside 1..", kMaxPartNumber));
    }
    if (i > 0 && number <= parts[i - 1].part_number) {
      return absl::InvalidArgumentError(absl::StrCat("parts: part ", number, " comes after part ",
                                                     parts[i - 1].part_number,
                                                     "; part numbers must ascend"));
    }
  }
  GPUAAS_ASSIGN_OR_RETURN(const Target target, MakeTarget(meta.key));
  GPUAAS_RETURN_IF_ERROR(Inspect(target).status());

  // Assemble. Each part is opened once and checked against the ETag the client names through
  // that same fd, so a part replaced meanwhile is either the one named or refused.
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> file,
                          StagedFile::Create(dirs_.staging.get()));
  std::vector<std::string> md5s;
  md5s.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const int number = parts[i].part_number;
    absl::StatusOr<UniqueFd> part =
        OpenBeneath(upload.get(), PartFileName(number), O_RDONLY | O_NOFOLLOW, "part");
    if (absl::IsNotFound(part.status())) {
      return absl::InvalidArgumentError(absl::StrCat("parts: part ", number, " was not uploaded"));
    }
    if (!part.ok()) {
      return part.status();
    }
    struct stat st;
    if (::fstat(part->get(), &st) != 0) {
      return ErrnoStatus(errno, "part");
    }
    const std::optional<std::string> etag = FreshEtag(part->get(), st);
    std::optional<std::string> md5 = Md5FromHex(etag.value_or(""));
    if (!md5.has_value() || NormalizeEtag(parts[i].etag) != *etag) {
      return absl::InvalidArgumentError(absl::StrCat("parts: part ", number, ": ETag \"",
                                                     NormalizeEtag(parts[i].etag),
                                                     "\" is not the uploaded part's"));
    }
    if (i + 1 < parts.size() && st.st_size < kMinPartBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("parts: part ", number, " holds ", st.st_size,
                       " bytes; every part but the last must hold at least 5 MiB"));
    }
    md5s.push_back(*std::move(md5));
    GPUAAS_RETURN_IF_ERROR(file->AppendFrom(part->get(), 0, st.st_size));
  }
  std::string etag = MultipartEtag(md5s);
  GPUAAS_ASSIGN_OR_RETURN(const struct stat st,
                          file->Seal(etag, meta.content_type, root_->sync_writes));

  // Claim the upload (no part lands in it any more), then publish: the object's bytes replace
  // those of all its parts, listed or not, in one settlement.
  std::string claimed;
  absl::StatusOr<ObjectInfo> info;
  {
    absl::MutexLock lock(&uploads_mu_);
    GPUAAS_RETURN_IF_ERROR(CheckAlive());
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd uploads, UploadsDir(/*create=*/false));
    // Counted before the claim, under the lock that every part's arrival takes.
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd current, OpenUpload(upload_id));
    GPUAAS_ASSIGN_OR_RETURN(const int64_t part_bytes, PartBytes(current.get()));
    GPUAAS_ASSIGN_OR_RETURN(claimed, ClaimUpload(uploads.get(), upload_id));
    Reservation none;
    info = PublishObject(target, *file, st, none, Charge{-part_bytes, 0}, etag, meta.content_type);
    if (!info.ok()) {
      // The upload stays as it was, for the client to fix what failed (e.g. free space) and
      // complete again.
      if (::renameat(dirs_.staging.get(), claimed.c_str(), uploads.get(),
                     std::string(upload_id).c_str()) != 0) {
        return ErrnoStatus(errno, "restore the upload");
      }
      return info;
    }
  }
  (void)RemoveTree(dirs_.staging.get(), claimed);  // else purged at the next start
  return info;
}

absl::Status LocalVolume::AbortUpload(std::string_view upload_id) {
  GPUAAS_RETURN_IF_ERROR(CheckAlive());
  if (!IsUploadId(upload_id)) {
    return NoSuchUpload(upload_id);
  }
  std::string claimed;
  {
    absl::MutexLock lock(&uploads_mu_);
    GPUAAS_RETURN_IF_ERROR(CheckAlive());
    absl::StatusOr<UniqueFd> uploads = UploadsDir(/*create=*/false);
    if (absl::IsNotFound(uploads.status())) {
      return NoSuchUpload(upload_id);
    }
    if (!uploads.ok()) {
      return uploads.status();
    }
    GPUAAS_ASSIGN_OR_RETURN(const UniqueFd current, OpenUpload(upload_id));
    GPUAAS_ASSIGN_OR_RETURN(const int64_t part_bytes, PartBytes(current.get()));
    GPUAAS_ASSIGN_OR_RETURN(claimed, ClaimUpload(uploads->get(), upload_id));
    ledger_.Apply(Charge{-part_bytes, 0});
  }
  (void)RemoveTree(dirs_.staging.get(), claimed);  // else purged at the next start
  return absl::OkStatus();
}

absl::StatusOr<int> LocalVolume::ExpireUploads(absl::Time cutoff) {
  GPUAAS_ASSIGN_OR_RETURN(const std::vector<UploadInfo> uploads, ListUploads());
  int expired = 0;
  for (const UploadInfo& upload : uploads) {
    if (upload.create_time >= cutoff) {
      continue;
    }
    absl::Status status = AbortUpload(upload.upload_id);
    if (status.ok()) {
      ++expired;
    } else if (!absl::IsNotFound(status)) {
      return status;
    }
  }
  return expired;
}

}  // namespace gpuaas::storage::local
