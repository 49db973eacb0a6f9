#include "services/agent/images/layer_arrivals.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <system_error>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/time.h"

namespace gpuaas::agent {

namespace fs = std::filesystem;

LayerArrivals::LayerArrivals(LayerArrivalsOptions options) : options_(std::move(options)) {
  progress_.layers_total = static_cast<int>(options_.planned.size());
  for (const OciLayer& layer : options_.planned) {
    progress_.bytes_total += layer.size;
  }
}

absl::StatusOr<std::map<std::string, int64_t>> LayerArrivals::Run() {
  {
    absl::MutexLock lock(&mu_);
    if (options_.progress) {
      options_.progress(progress_);
    }
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([this] { Work(); });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  absl::MutexLock lock(&mu_);
  if (!error_.ok()) {
    return error_;
  }
  return std::move(unpacked_);
}

void LayerArrivals::Work() {
  for (;;) {
    // Read before looking, so a blob that lands just before skopeo ends is still seen.
    const bool copy_finished = copy_done_.HasBeenNotified();
    const OciLayer* next = nullptr;
    UniqueFd downloading;
    std::string download_path;
    {
      absl::MutexLock lock(&mu_);
      if (!error_.ok()) {
        return;
      }
      next = ClaimArrivedLayer();
      if (next == nullptr) {
        downloading = ClaimDownload(download_path);
      }
    }
    if (next != nullptr) {
      absl::StatusOr<int64_t> bytes = options_.unpack(next->hex);
      absl::MutexLock lock(&mu_);
      if (!bytes.ok()) {
        error_.Update(bytes.status());
        return;
      }
      Done(*next, *bytes);
    } else if (downloading.valid()) {
      UnpackWhileDownloading(download_path, downloading.get());
    } else if (copy_finished) {
      return;
    } else {
      copy_done_.WaitForNotificationWithTimeout(absl::Milliseconds(20));
    }
  }
}

const OciLayer* LayerArrivals::ClaimArrivedLayer() {
  for (const OciLayer& layer : options_.planned) {
    if (claimed_.contains(layer.hex)) {
      continue;
    }
    struct stat blob;
    const bool arrived = ::stat((options_.blob_dir + "/" + layer.hex).c_str(), &blob) == 0 &&
                         !streaming_.contains(blob.st_ino);
    std::error_code error;
    if (arrived || fs::is_directory(options_.layers_dir + "/" + layer.hex, error)) {
      claimed_.insert(layer.hex);
      return &layer;
    }
  }
  return nullptr;
}

UniqueFd LayerArrivals::ClaimDownload(std::string& path) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(options_.layout_dir, error)) {
    const std::string name = entry.path().filename();
    // containers/image writes each blob to <layout>/oci-put-blob<random>, then renames it.
    if (!absl::StartsWith(name, "oci-put-blob") || !downloads_.insert(name).second) {
      continue;
    }
    UniqueFd fd(::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    if (fd.valid() && ::fstat(fd.get(), &st) == 0) {
      streaming_.insert(st.st_ino);
      path = entry.path();
      return fd;
    }
  }
  return UniqueFd();
}

absl::StatusOr<bool> LayerArrivals::DownloadComplete(int fd, const struct stat& download) {
  struct stat now;
  if (::fstat(fd, &now) != 0 || now.st_nlink == 0) {
    return absl::AbortedError("the download was abandoned");
  }
  for (const OciLayer& layer : options_.planned) {
    struct stat blob;
    if (::stat((options_.blob_dir + "/" + layer.hex).c_str(), &blob) == 0 &&
        blob.st_ino == download.st_ino && blob.st_dev == download.st_dev) {
      return true;
    }
  }
  if (copy_done_.HasBeenNotified()) {  // skopeo ended without keeping it as a layer
    return absl::AbortedError("the download is not a layer");
  }
  copy_done_.WaitForNotificationWithTimeout(absl::Milliseconds(5));
  return false;
}

void LayerArrivals::UnpackWhileDownloading(const std::string& path, int fd) {
  struct stat download;
  ::fstat(fd, &download);
  absl::StatusOr<StreamedLayer> streamed =
      options_.unpack_download(path, fd, [&] { return DownloadComplete(fd, download); });
  absl::MutexLock lock(&mu_);
  // On failure the blob, once in place, is unpacked from the file and any error reported then.
  streaming_.erase(download.st_ino);
  if (!streamed.ok() || claimed_.contains(streamed->hex)) {
    return;
  }
  for (const OciLayer& layer : options_.planned) {
    if (layer.hex == streamed->hex) {
      claimed_.insert(layer.hex);
      Done(layer, streamed->size_bytes);
    }
  }
}

void LayerArrivals::Done(const OciLayer& layer, int64_t unpacked_bytes) {
  unpacked_[layer.hex] = unpacked_bytes;
  ++progress_.layers_done;
  progress_.bytes_done += layer.size;
  if (options_.progress) {
    options_.progress(progress_);
  }
}

}  // namespace gpuaas::agent
