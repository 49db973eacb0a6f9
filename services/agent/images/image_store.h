// The node's image store: pulls OCI images by digest, verifies them, keeps each layer once per
// node (by digest) unpacked in overlayfs lower-layer format, and garbage-collects unused images
// under a size limit. The OCI runtime builds each container's rootfs from the layer directories.
//
// On disk, under `root` (0700):
//   blobs/sha256/<hex>   the registry's blobs (skopeo's shared blob dir: a blob there is not
//                        downloaded again)
//   layers/<hex>/        each layer unpacked once, named by its blob's digest
//   images/<hex>.json    one record per pulled image, by manifest digest (image_record.h), so a
//                        restarted agent finds its cache
//   grants/<hex>         the tenants a blob is lent to, one a line: each one's own registry
//                        served it to that tenant's login (see Pull)
//   pulls/, tmp/         a pull's OCI layout, its own blob dir and private files while it runs
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/registry_policy/registry_policy.h"
#include "services/agent/images/image_record.h"
#include "services/agent/images/internal/blob_grants.h"
#include "services/agent/images/internal/pull_job.h"
#include "services/agent/images/layer_arrivals.h"
#include "services/agent/images/oci_layout.h"
#include "services/agent/images/skopeo_copy.h"
#include "services/agent/images/unpack_limits.h"
#include "services/agent/images/unpacker_client.h"

namespace gpuaas::agent {

struct PulledImage {
  std::string digest;                   // the manifest digest, "sha256:<hex>"
  std::vector<std::string> layer_dirs;  // unpacked layers, BOTTOM FIRST, each a directory in
                                        // overlayfs lower-layer format (whiteouts as 0/0 char
                                        // devices, opaque dirs with trusted.overlay.opaque=y),
                                        // files owned by the ids in the tar
  ImageConfig config;
  int64_t size_bytes = 0;  // unpacked size
};

struct ImageStoreOptions {
  std::string root;  // e.g. /var/lib/gpuaas/agent/images; made 0700
  std::string skopeo_path = "/usr/bin/skopeo";
  // GC keeps the store (blobs and unpacked layers) under this; unused images go first, least
  // recently used first.
  int64_t size_limit_bytes = 50LL << 30;
  // TLS is verified for every registry but the policy's insecure ones (the policy's addresses
  // are checked by the caller, container_setup.cc, before a pull).
  registry::RegistryPolicy registries;
  // A registry that answers slowly or not at all (a tenant's own can) fails the pull after
  // this long: DEADLINE_EXCEEDED.
  absl::Duration pull_timeout = absl::Minutes(30);
  // gpuaas-image-unpacker: every manifest, config and layer is parsed and unpacked in its
  // sandbox (unpacker_client.h). Empty: in this process (unit tests of the store only).
  std::string unpacker_path;
  int64_t unpacker_memory_bytes = 2LL << 30;
  UnpackLimits limits;
};

class ImageStore final {
 public:
  // Makes the directories, removes what a crashed pull left and loads the image records.
  // Blocks on disk I/O. Errors: INVALID_ARGUMENT for an empty root, INTERNAL when the root
  // cannot be made.
  static absl::StatusOr<std::unique_ptr<ImageStore>> Open(ImageStoreOptions options);

  // reference: "host[:port]/path@sha256:<64 hex>" (a tag is refused: INVALID_ARGUMENT).
  // `tenant`: who asks. The cache lends a blob (manifest, config or layer) only to a tenant its
  // registry served that blob to, with that tenant's login: a blob the tenant was never served
  // is downloaded again from the tenant's registry (which checks the login and the digest)
  // before the node's copy, or its unpacked layer, is used. A blob another tenant's pull left
  // is never used on the strength of its digest alone. Cached and lent: returns at once,
  // downloading and unpacking nothing. Blocks while downloading and unpacking.
  // Thread-safe; concurrent pulls of one digest by one tenant share one download (only the
  // first caller's `progress` is called). `login` nullptr: anonymous.
  // Errors, typed by code, message naming it for people: NOT_FOUND ("image not found: ..."),
  // PERMISSION_DENIED ("unauthorized: ..."; wrong or missing login), DATA_LOSS ("digest
  // mismatch: ..."), RESOURCE_EXHAUSTED ("no space: ..."), UNAVAILABLE (registry unreachable),
  // DEADLINE_EXCEEDED ("timed out: ..."; longer than pull_timeout),
  // INVALID_ARGUMENT (a bad reference, or a manifest, config or layer that is unsafe,
  // malformed, past a size or nesting cap or not the size its manifest says),
  // RESOURCE_EXHAUSTED ("unpack limit: ..." past a limit of `limits`), INTERNAL ("image
  // unpacker died ...": the sandboxed unpacker crashed or hit its memory, CPU or time limit).
  absl::StatusOr<PulledImage> Pull(const std::string& reference, const std::string& tenant,
                                   const RegistryLogin* login,
                                   const std::function<void(const PullProgress&)>& progress);
  // For the node's own pulls and tests: as one tenant of its own, "".
  absl::StatusOr<PulledImage> Pull(const std::string& reference, const RegistryLogin* login,
                                   const std::function<void(const PullProgress&)>& progress) {
    return Pull(reference, "", login, progress);
  }

  // Removes unused images' layers (not in `in_use`, by manifest digest), least recently used
  // first, until the store is under size_limit_bytes; never a layer that an in-use image
  // shares. Also removes blobs and layers no image refers to. While a pull runs it does
  // nothing (the next call collects). Pass images about to be started in `in_use` too.
  absl::Status CollectGarbage(const std::set<std::string>& in_use);

  // Bytes of blobs and unpacked layers that the image records account for.
  int64_t SizeBytes() const;

 private:
  struct Flight;

  explicit ImageStore(ImageStoreOptions options);
  absl::Status LoadRecords();
  absl::StatusOr<ImageRecord> PullUncached(
      const std::string& reference, const std::string& hex, const std::string& tenant,
      const RegistryLogin* login, const std::function<void(const PullProgress&)>& progress);
  // The layers the reference's linux/amd64 manifest lists, asked of the registry before the copy.
  absl::StatusOr<std::vector<OciLayer>> PlanLayers(const SkopeoOptions& skopeo,
                                                   const std::string& reference);
  absl::StatusOr<ManifestLayers> ParseManifestText(const std::string& text,
                                                   const std::string& work_dir);
  // The layer unpacked from the pull's blob unless it already is; returns its unpacked size. A
  // blob that does not match its digest is deleted (DATA_LOSS).
  absl::StatusOr<int64_t> EnsureLayer(PullJob& job, const OciLayer& layer);
  absl::StatusOr<StreamedLayer> UnpackDownload(
      PullJob& job, const std::string& path, int fd,
      const std::function<absl::StatusOr<bool>()>& complete);
  absl::StatusOr<ImageRecord> ReadPulledLayout(PullJob& job);
  // The unpacked size of a layer another image's record names.
  std::optional<int64_t> KnownUnpackedBytes(const std::string& layer_hex) const;
  PulledImage ToPulledImage(const ImageRecord& record) const;
  std::string Dir(absl::string_view name) const { return options_.root + "/" + std::string(name); }

  const ImageStoreOptions options_;
  std::unique_ptr<UnpackerClient> unpacker_;  // null: in this process
  std::unique_ptr<BlobGrants> grants_;
  // Held shared by every pull that writes, exclusively by the collector, so it never removes
  // what a running pull is writing or about to use.
  absl::Mutex gc_mu_;
  mutable absl::Mutex mu_;
  std::map<std::string, ImageRecord> records_ ABSL_GUARDED_BY(mu_);              // by manifest hex
  std::map<std::string, std::shared_ptr<Flight>> flights_ ABSL_GUARDED_BY(mu_);  // tenant/hex
};

}  // namespace gpuaas::agent
