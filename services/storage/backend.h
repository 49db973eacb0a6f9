// Where a storage's bytes live. The service (volumes, attachments) and the S3 data plane talk
// to one Backend and never to a file system or a cluster directly, so a CephFS subvolume or a
// Kubernetes PVC backend is one more implementation of these two interfaces.
//
// Keys are S3 object keys ("a/b/c.txt"); every method refuses an invalid key (empty, over 1,024
// bytes, a leading "/", an empty, "." or ".." segment, a NUL byte) with INVALID_ARGUMENT, and a
// key that would lead outside the volume (a symlink planted inside it) with PERMISSION_DENIED;
// nothing outside the volume is ever read or written. Errors: NOT_FOUND (no such object or
// upload), RESOURCE_EXHAUSTED (the write would pass the byte or file limit; nothing already
// stored changes), FAILED_PRECONDITION (a key that names a directory or passes through a file).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace gpuaas::storage {

// What a volume may hold; from the storage's spec. Changed by passing new limits to OpenVolume.
struct VolumeLimits {
  int64_t max_bytes = 0;
  int64_t max_files = 0;
};

struct VolumeUsage {
  int64_t bytes = 0;
  int64_t files = 0;
};

struct ObjectInfo {
  std::string key;
  int64_t size = 0;
  absl::Time modify_time;
  // Without quotes. The MD5 of the content in hex for objects written in one piece; for
  // multipart objects the MD5 of the parts' MD5s, "-", the part count (as S3 does); for files
  // written by a workload through its mount, an opaque tag that changes with the file.
  std::string etag;
  std::string content_type;  // as uploaded; empty when unknown
};

// Reads one object; the object may be replaced meanwhile without affecting an open reader.
class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  virtual const ObjectInfo& info() const = 0;
  // Up to `size` bytes from `offset`; 0 at the end.
  virtual absl::StatusOr<size_t> ReadAt(int64_t offset, char* out, size_t size) = 0;
};

// Streams one new object (or part) to a temporary place; only Commit makes it visible, so an
// abandoned or failed write leaves the previous content intact. Destroying an uncommitted
// writer discards what was written and returns its quota reservation.
class ObjectWriter {
 public:
  virtual ~ObjectWriter() = default;
  // RESOURCE_EXHAUSTED when more than the announced size arrives.
  virtual absl::Status Write(std::string_view data) = 0;
  // The MD5 of the bytes written so far (16 raw bytes), for checking Content-MD5 before Commit.
  virtual std::string Md5() const = 0;
  // Publishes the object under its key (replacing any previous one atomically). Errors:
  // FAILED_PRECONDITION when fewer bytes than announced were written.
  virtual absl::StatusOr<ObjectInfo> Commit() = 0;
};

struct ListRequest {
  std::string prefix;
  std::string delimiter;    // "" or "/" (other delimiters: INVALID_ARGUMENT)
  std::string start_after;  // keys strictly greater than this (continuation and start-after)
  int max_keys = 1000;      // 1..1000
};

struct ListResult {
  std::vector<ObjectInfo> objects;           // in byte order of their keys
  std::vector<std::string> common_prefixes;  // with delimiter "/": "dir/" entries, in order
  bool truncated = false;
  // With truncated: the last key or common prefix returned; pass it as start_after to go on.
  std::string next_start_after;
};

struct UploadInfo {
  std::string upload_id;
  std::string key;
  absl::Time create_time;
};

struct PartInfo {
  int part_number = 0;  // 1..10000
  int64_t size = 0;
  std::string etag;  // MD5 hex of the part, without quotes
  absl::Time modify_time;
};

// One storage's data. Thread-safe: concurrent writers share the limits, and together they never
// pass them (a write reserves its announced size before its first byte lands).
class Volume {
 public:
  virtual ~Volume() = default;

  // Stat, Open and Delete also take a folder marker's key ("a/b/", CreateFolder's).
  virtual absl::StatusOr<ObjectInfo> Stat(std::string_view key) = 0;
  virtual absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view key) = 0;
  // `size` is exact (Content-Length, or the decoded length of a chunked upload).
  virtual absl::StatusOr<std::unique_ptr<ObjectWriter>> Create(std::string_view key, int64_t size,
                                                               std::string_view content_type) = 0;
  // OK when the key does not exist (S3 semantics). A folder marker's key removes the marker;
  // what is in the folder stays.
  virtual absl::Status Delete(std::string_view key) = 0;
  // A folder marker: the zero-byte object "a/b/" (one trailing "/"), which S3 clients make to
  // show an empty folder. Idempotent. It counts as a file against the limit.
  virtual absl::StatusOr<ObjectInfo> CreateFolder(std::string_view key) = 0;
  virtual absl::StatusOr<ObjectInfo> Copy(std::string_view from_key, std::string_view to_key) = 0;
  virtual absl::StatusOr<ListResult> List(const ListRequest& request) = 0;
  virtual VolumeUsage Usage() = 0;

  // Multipart uploads: parts live apart from the objects (and count against the limits) until
  // Complete assembles them without holding them in memory, or Abort drops them.
  virtual absl::StatusOr<UploadInfo> CreateUpload(std::string_view key,
                                                  std::string_view content_type) = 0;
  // Commit of the returned writer stores the part (replacing an earlier part of that number).
  virtual absl::StatusOr<std::unique_ptr<ObjectWriter>> CreatePart(std::string_view upload_id,
                                                                   int part_number,
                                                                   int64_t size) = 0;
  virtual absl::StatusOr<std::vector<PartInfo>> ListParts(std::string_view upload_id) = 0;
  virtual absl::StatusOr<std::vector<UploadInfo>> ListUploads() = 0;
  // `parts` in ascending part number, each with the etag the client got for it. Errors:
  // NOT_FOUND (upload), INVALID_ARGUMENT (a part missing, out of order, or with another etag;
  // every part but the last smaller than 5 MiB).
  virtual absl::StatusOr<ObjectInfo> CompleteUpload(std::string_view upload_id,
                                                    const std::vector<PartInfo>& parts) = 0;
  virtual absl::Status AbortUpload(std::string_view upload_id) = 0;
};

// A CephFS subvolume as a node mounts it (ceph-fuse): where, never with what secret.
struct CephMountSource {
  std::vector<std::string> monitors;  // "v2:10.0.0.1:3300", ...
  std::string fs_name;
  std::string path;  // the subvolume's path inside fs_name
};

// What an instance runtime mounts. The local backend's is a host directory; the ceph backend's
// is a subvolume (host_path empty).
struct MountSource {
  std::string host_path;
  std::optional<CephMountSource> ceph;
};

// A credential that reaches one volume only, made for one attachment. Backends whose mounts
// need none (local) answer an empty one. `key` is a secret: never log or store it.
struct MountCredential {
  std::string client_id;  // e.g. the cephx id, without "client."
  std::string key;
};

// A read-only copy of a volume at one moment.
struct SnapshotInfo {
  std::string snapshot_id;
  // What the volume held when it was taken, as the backend counts it (CephFS's recursive
  // counters trail writes by a few seconds, so a snapshot right after a write may count less).
  int64_t bytes = 0;
  absl::Time create_time;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // The spec's backend class this backend serves ("local").
  virtual std::string_view backend_class() const = 0;

  // Volumes are named by volume_id, the storage's identity (Storage.storage_uid), never by its
  // reusable storage_id: a storage created under a deleted one's id gets a volume of its own.
  //
  // `limits` are the storage's at creation (a backend that enforces the size in the file system
  // sizes it by them). Idempotent: an existing volume is kept as it is.
  virtual absl::Status CreateVolume(std::string_view volume_id, const VolumeLimits& limits) = 0;
  // Removes the volume and everything in it; OK when it does not exist (a retry after a crash).
  virtual absl::Status DeleteVolume(std::string_view volume_id) = 0;
  // The volume with the storage's current limits (larger ones grow it). NOT_FOUND when it was
  // never created.
  virtual absl::StatusOr<std::shared_ptr<Volume>> OpenVolume(std::string_view volume_id,
                                                             const VolumeLimits& limits) = 0;
  // Where a runtime on `node_id` finds the volume. Attachment bookkeeping is the service's.
  virtual absl::StatusOr<MountSource> MountSourceFor(std::string_view volume_id,
                                                     std::string_view node_id) = 0;
  // Makes (idempotently: the same attachment gets the same id back) the credential a node uses
  // to mount `volume_id` for the attachment `attachment_id` ([a-z0-9-], at most 64), reaching
  // that volume only, read-only when `read_only`. Blocks on the backend. Default: none needed.
  virtual absl::StatusOr<MountCredential> GrantMount(std::string_view volume_id,
                                                     std::string_view attachment_id,
                                                     bool read_only) {
    return MountCredential{};
  }
  // Revokes what GrantMount made and cuts off clients already mounted with it. OK when it is
  // gone already (a retry). Blocks on the backend. Default: nothing to revoke.
  virtual absl::Status RevokeMount(std::string_view volume_id, std::string_view attachment_id) {
    return absl::OkStatus();
  }
  // Re-counts a volume's bytes and files from what is really stored (after a workload wrote to
  // it through its mount). NOT_FOUND when it was never created.
  virtual absl::StatusOr<VolumeUsage> Recount(std::string_view volume_id) = 0;
  // Drops multipart uploads created before `cutoff` in every volume; returns how many.
  virtual absl::StatusOr<int> ExpireUploads(absl::Time cutoff) = 0;

  // Snapshots of a volume, named by snapshot_id (validated like a storage id). Backends that
  // have none (local) answer UNIMPLEMENTED naming their class. All of them block on the backend.
  //
  // Takes one. Errors: NOT_FOUND (no such volume), ALREADY_EXISTS (the name is taken).
  virtual absl::Status CreateSnapshot(std::string_view volume_id, std::string_view snapshot_id) {
    return NoSnapshots();
  }
  // The volume's snapshots, oldest first. NOT_FOUND: no such volume.
  virtual absl::StatusOr<std::vector<SnapshotInfo>> ListSnapshots(std::string_view volume_id) {
    return NoSnapshots();
  }
  // NOT_FOUND when the volume or the snapshot does not exist.
  virtual absl::Status DeleteSnapshot(std::string_view volume_id, std::string_view snapshot_id) {
    return NoSnapshots();
  }
  // Makes the new volume `new_volume_id` with `limits` holding the snapshot's data (and no
  // upload or staged file of the source). Idempotent: a retry finishes or keeps what an earlier
  // call made. Errors: NOT_FOUND (volume or snapshot), RESOURCE_EXHAUSTED (the snapshot holds
  // more than limits.max_bytes). Blocks until the copy is complete.
  virtual absl::Status RestoreSnapshot(std::string_view volume_id, std::string_view snapshot_id,
                                       std::string_view new_volume_id, const VolumeLimits& limits) {
    return NoSnapshots();
  }

 private:
  absl::Status NoSnapshots() const {
    return absl::UnimplementedError(absl::StrCat("the ", std::string(backend_class()),
                                                 " storage backend has no snapshots (storages of "
                                                 "the ceph backend class have them)"));
  }
};

}  // namespace gpuaas::storage
