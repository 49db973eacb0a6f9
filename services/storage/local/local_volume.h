// One storage's volume on the local file system: a directory of the user's files under the
// data root, its byte and file counters, and its multipart uploads. One LocalVolume per storage
// id lives in the backend and is shared by every caller, so the counters are the one truth that
// concurrent writers reserve against.
//
// Locks, always taken in this order: uploads_mu_ (an upload's directory appearing, changing or
// going), then names_mu_ (names in the volume appearing or going, and the counters settled with
// them). Data is written and fsync'ed outside both; only renames, unlinks and mkdirs happen under
// them.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "services/storage/backend.h"
#include "services/storage/local/data_root.h"
#include "services/storage/local/dir_listing.h"
#include "services/storage/local/quota_ledger.h"
#include "services/storage/local/safe_path.h"
#include "services/storage/local/staged_file.h"

namespace gpuaas::storage::local {

// Where a volume's files, staged files and uploads live; all on one file system, so that every
// move between them is a rename. A volume in a directory of the data root shares the data
// root's staging and uploads directories; a volume with its own file system has its own.
struct VolumeDirs {
  UniqueFd data;            // exactly the user's files
  UniqueFd staging;         // files being written
  UniqueFd uploads_parent;  // holds the uploads directory, named uploads_name
  std::string uploads_name;
};

// What a volume holds, counted from what is stored. The default walks the files and the
// uploads' parts; a file system that keeps recursive counters (CephFS's ceph.dir.rbytes) answers
// at once instead.
using UsageCounter = absl::AnyInvocable<absl::StatusOr<VolumeUsage>()>;

class LocalVolume final : public Volume, public std::enable_shared_from_this<LocalVolume> {
 public:
  // `count`, when given, replaces the walk in Recount (and so in EnsureLoaded).
  LocalVolume(std::shared_ptr<const DataRoot> root, std::string storage_id, VolumeDirs dirs,
              UsageCounter count = nullptr);

  // Counts the volume once (its files, and the parts of its uploads) before its first use;
  // later calls return at once. Blocks on disk I/O.
  absl::Status EnsureLoaded();
  // Counts again from what is stored and replaces the counters (reservations stay).
  absl::StatusOr<VolumeUsage> Recount();
  // Replaces the counters with `count`'s answer without the locks Recount takes (writes go on
  // meanwhile; what they settle later adds to the fresh count), as QuotaLedger::SetUsedLagging
  // does for a count `lag` behind the writes. Only with a UsageCounter.
  absl::Status RefreshUsage(absl::Duration lag);
  void SetLimits(const VolumeLimits& limits) { ledger_.SetLimits(limits); }
  VolumeLimits limits() const { return ledger_.limits(); }
  // From now on every call fails with NOT_FOUND and nothing more is published; the backend then
  // moves the directories away.
  void MarkDeleted();
  // Aborts the uploads created before `cutoff`; how many.
  absl::StatusOr<int> ExpireUploads(absl::Time cutoff);

  absl::StatusOr<ObjectInfo> Stat(std::string_view key) override;
  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view key) override;
  absl::StatusOr<std::unique_ptr<ObjectWriter>> Create(std::string_view key, int64_t size,
                                                       std::string_view content_type) override;
  absl::Status Delete(std::string_view key) override;
  absl::StatusOr<ObjectInfo> CreateFolder(std::string_view key) override;
  absl::StatusOr<ObjectInfo> Copy(std::string_view from_key, std::string_view to_key) override;
  absl::StatusOr<ListResult> List(const ListRequest& request) override;
  VolumeUsage Usage() override { return ledger_.used(); }

  absl::StatusOr<UploadInfo> CreateUpload(std::string_view key,
                                          std::string_view content_type) override;
  absl::StatusOr<std::unique_ptr<ObjectWriter>> CreatePart(std::string_view upload_id,
                                                           int part_number, int64_t size) override;
  absl::StatusOr<std::vector<PartInfo>> ListParts(std::string_view upload_id) override;
  absl::StatusOr<std::vector<UploadInfo>> ListUploads() override;
  absl::StatusOr<ObjectInfo> CompleteUpload(std::string_view upload_id,
                                            const std::vector<PartInfo>& parts) override;
  absl::Status AbortUpload(std::string_view upload_id) override;

 private:
  // An object's place: its key split into directories and a leaf.
  struct Target {
    std::string key;
    std::vector<std::string> segments;
    const std::string& leaf() const { return segments.back(); }
    size_t dir_count() const { return segments.size() - 1; }
  };
  // The regular file an existing key names, if any.
  struct Existing {
    bool exists = false;
    int64_t size = 0;
  };

  absl::Status CheckAlive() const;
  // Folder markers (folder_marker.h): local_volume_folders.cc.
  absl::StatusOr<UniqueFd> OpenFolder(std::string_view key) const;
  absl::StatusOr<ObjectInfo> StatFolder(std::string_view key) const;
  absl::Status DeleteFolder(std::string_view key);
  absl::StatusOr<Target> MakeTarget(std::string_view key) const;
  // What is stored under the target now, checking the way there without creating anything:
  // PERMISSION_DENIED for a symlink on the way or as the leaf, FAILED_PRECONDITION for a file
  // on the way or a directory as the leaf.
  absl::StatusOr<Existing> Inspect(const Target& target) const;
  absl::StatusOr<Existing> InspectLeaf(int parent_fd, const Target& target) const;
  // Opens the regular file under `key` for reading.
  absl::StatusOr<UniqueFd> OpenObject(std::string_view key, struct stat& st) const;

  // Publishes the sealed `file` (`st` as Seal returned it) under the target: under names_mu_
  // creates the directories, settles the counters (`reservation` against what the rename really
  // replaces, plus `extra` for what else goes with it, e.g. an upload's parts) and renames it
  // into place; fsyncs the directories afterwards.
  absl::StatusOr<ObjectInfo> PublishObject(const Target& target, StagedFile& file,
                                           const struct stat& st, Reservation& reservation,
                                           const Charge& extra, std::string etag,
                                           std::string content_type);
  void InvalidateListings(const Target& target, size_t first_changed_dir);

  // The volume's uploads directory, created when `create`.
  absl::StatusOr<UniqueFd> UploadsDir(bool create) const;
  absl::StatusOr<UniqueFd> OpenUpload(std::string_view upload_id) const;
  absl::StatusOr<ObjectInfo> PublishPart(const std::string& upload_id, int part_number,
                                         const std::string& key, StagedFile& file,
                                         Reservation& reservation);
  // Moves the upload's directory into staging under uploads_mu_ (so that no part lands in it any
  // more); returns the name it got there.
  absl::StatusOr<std::string> ClaimUpload(int uploads_fd, std::string_view upload_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(uploads_mu_);

  const std::shared_ptr<const DataRoot> root_;
  const std::string storage_id_;
  const VolumeDirs dirs_;
  UsageCounter count_;
  QuotaLedger ledger_;
  DirListingCache listings_;
  std::atomic<bool> deleted_{false};

  absl::Mutex load_mu_;
  bool loaded_ ABSL_GUARDED_BY(load_mu_) = false;
  absl::Mutex uploads_mu_ ABSL_ACQUIRED_BEFORE(names_mu_);
  absl::Mutex names_mu_;
};

}  // namespace gpuaas::storage::local
