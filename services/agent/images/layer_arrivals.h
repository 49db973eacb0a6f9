// One pull's layers unpacked as they arrive, while skopeo still downloads the others: each
// from the file skopeo is writing when a thread is free for it (skopeo downloads layers in
// parallel and finishes them close together, so waiting for whole blobs would put all the
// unpacking after the download), else from its blob once in place.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "libs/common/unique_fd.h"
#include "services/agent/images/layer_unpack.h"
#include "services/agent/images/oci_layout.h"

namespace gpuaas::agent {

// Reported to the pulling caller: once the manifest is read (layers_done 0), then as each layer
// is downloaded and unpacked (layers unpack while later ones still download). Bytes are the
// layers' blob sizes from the manifest. Called from the pulling thread or the pull's own
// unpacking threads, one call at a time.
struct PullProgress {
  int layers_done = 0, layers_total = 0;
  int64_t bytes_done = 0, bytes_total = 0;
};

struct LayerArrivalsOptions {
  std::vector<OciLayer> planned;  // distinct layers
  std::string blob_dir;           // where skopeo renames each blob once complete and verified
  std::string layers_dir;         // unpacked layers, by hex
  std::string layout_dir;         // the copy's OCI layout, where skopeo writes blobs meanwhile
  // Unpacks a layer from its whole blob (or finds it unpacked): its unpacked bytes.
  std::function<absl::StatusOr<int64_t>(const std::string& hex)> unpack;
  // Unpacks the download skopeo is writing at `path` (open at `fd`), whole once `complete`
  // says so, into layers_dir/<hex of its bytes>; the caller checks the hex is planned.
  std::function<absl::StatusOr<StreamedLayer>(
      const std::string& path, int fd, const std::function<absl::StatusOr<bool>()>& complete)>
      unpack_download;
  std::function<void(const PullProgress&)> progress;  // may be empty
};

class LayerArrivals final {
 public:
  explicit LayerArrivals(LayerArrivalsOptions options);

  // Tells Run that skopeo ended (whatever its outcome). Thread-safe.
  void CopyDone() { copy_done_.Notify(); }

  // Reports progress once, then unpacks the planned layers as they arrive, in kThreads
  // threads, until all are or the copy is done and nothing more arrives. Blocks. Returns the
  // unpacked bytes of each layer unpacked, by hex; the first unpack error otherwise.
  absl::StatusOr<std::map<std::string, int64_t>> Run();

 private:
  static constexpr int kThreads = 6;  // containers/image copies up to 6 layers at once

  void Work();
  // A planned layer whose blob is complete (and not being read while downloading) or that is
  // unpacked already, claimed; nullptr if none.
  const OciLayer* ClaimArrivedLayer() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A file skopeo is downloading that no thread reads yet, opened and claimed.
  UniqueFd ClaimDownload(std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnpackWhileDownloading(const std::string& path, int fd);
  // Whether the download open at `fd` (inode `download`) is whole: skopeo renamed it to a
  // planned layer's blob. Waits a little when it may still grow; an error when abandoned.
  absl::StatusOr<bool> DownloadComplete(int fd, const struct stat& download);
  void Done(const OciLayer& layer, int64_t unpacked_bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const LayerArrivalsOptions options_;
  absl::Notification copy_done_;
  absl::Mutex mu_;
  std::set<std::string> claimed_ ABSL_GUARDED_BY(mu_);            // by layer hex
  std::set<std::string> downloads_ ABSL_GUARDED_BY(mu_);          // skopeo's temp file names
  std::set<ino_t> streaming_ ABSL_GUARDED_BY(mu_);                // their inodes, while read
  std::map<std::string, int64_t> unpacked_ ABSL_GUARDED_BY(mu_);  // unpacked bytes by hex
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  PullProgress progress_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::agent
