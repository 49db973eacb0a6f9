#include "services/agent/images/image_store.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "services/agent/images/bounded_json.h"
#include "services/agent/images/layer_arrivals.h"
#include "services/agent/images/layer_unpack.h"
#include "services/agent/images/oci_layout.h"

namespace gpuaas::agent {

namespace fs = std::filesystem;

struct ImageStore::Flight {
  absl::Notification done;
  absl::StatusOr<PulledImage> result;
};

namespace {

constexpr absl::string_view kDigestMark = "@sha256:";

// The manifest hex of "host[:port]/path@sha256:<64 hex>"; tags are refused (a tag can move).
absl::StatusOr<std::string> ReferenceDigest(absl::string_view reference) {
  const size_t at = reference.find(kDigestMark);
  if (at == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image reference: ", reference, " is not pinned by digest (want host/path@sha256:...)"));
  }
  const absl::string_view name = reference.substr(0, at);
  const absl::string_view hex = reference.substr(at + kDigestMark.size());
  const size_t slash = name.find('/');
  if (slash == absl::string_view::npos || slash == 0 || slash + 1 == name.size() ||
      name.find_first_of(" \t\n@") != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("image reference: ", reference,
                                                   " wants the form host[:port]/path@sha256:..."));
  }
  if (name.substr(name.rfind('/')).find(':') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("image reference: ", reference, " has a tag; give the digest alone"));
  }
  if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("image reference: ", reference, " has no sha256 digest of 64 hex digits"));
  }
  return std::string(hex);
}

void RemoveAll(const std::string& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

// Bytes of the regular files under `dir`, for a layer unpacked before its image's record was
// written (a crash, or a concurrent pull of another image sharing it).
int64_t UnpackedSize(const std::string& dir) {
  int64_t total = 0;
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(dir, error)) {
    if (entry.is_regular_file(error) && !entry.is_symlink(error)) {
      total += static_cast<int64_t>(entry.file_size(error));
    }
  }
  return total;
}

// Every blob of the image: its manifest, its config, its layers.
std::vector<std::string> Blobs(const ImageRecord& record) {
  std::vector<std::string> blobs = record.other_blobs;
  for (const LayerRecord& layer : record.layers) {
    blobs.push_back(layer.hex);
  }
  return blobs;
}

// A pull's error with the reference it is about.
absl::Status About(const absl::Status& status, absl::string_view reference) {
  return absl::Status(status.code(), absl::StrCat(status.message(), " (", reference, ")"));
}

}  // namespace

ImageStore::ImageStore(ImageStoreOptions options) : options_(std::move(options)) {
  if (!options_.unpacker_path.empty()) {
    unpacker_ = std::make_unique<UnpackerClient>(
        UnpackerOptions{.path = options_.unpacker_path,
                        .memory_bytes = options_.unpacker_memory_bytes,
                        .deadline = options_.pull_timeout});
  }
}

absl::StatusOr<std::unique_ptr<ImageStore>> ImageStore::Open(ImageStoreOptions options) {
  if (options.root.empty()) {
    return absl::InvalidArgumentError("image store: root is empty");
  }
  std::unique_ptr<ImageStore> store(new ImageStore(std::move(options)));
  std::error_code error;
  for (absl::string_view dir : {"blobs/sha256", "layers", "images", "grants", "pulls", "tmp"}) {
    fs::create_directories(store->Dir(dir), error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("image store: making ", store->Dir(dir), ": ", error.message()));
    }
  }
  // Layers are owned by the ids in their tars; only the agent walks down to them.
  if (::chmod(store->options_.root.c_str(), 0700) != 0) {
    return absl::InternalError(absl::StrCat("image store: chmod ", store->options_.root));
  }
  // What a crashed agent left: half-copied layouts, auth files, half-unpacked layers.
  for (absl::string_view dir : {"pulls", "tmp"}) {
    for (const auto& entry : fs::directory_iterator(store->Dir(dir), error)) {
      RemoveAll(entry.path());
    }
  }
  for (const auto& entry : fs::directory_iterator(store->Dir("layers"), error)) {
    if (absl::StrContains(entry.path().filename().string(), ".tmp-")) {
      RemoveAll(entry.path());
    }
  }
  store->grants_ = std::make_unique<BlobGrants>(store->Dir("grants"));
  GPUAAS_RETURN_IF_ERROR(store->LoadRecords());
  return store;
}

absl::Status ImageStore::LoadRecords() {
  std::error_code error;
  absl::MutexLock lock(&mu_);
  for (const auto& entry : fs::directory_iterator(Dir("images"), error)) {
    const std::string name = entry.path().filename();
    absl::string_view hex = name;
    if (!absl::ConsumeSuffix(&hex, ".json")) {
      RemoveAll(entry.path());  // a record's temp file
      continue;
    }
    absl::StatusOr<ImageRecord> record = ReadImageRecord(entry.path());
    bool complete = record.ok();
    for (size_t i = 0; complete && i < record->layers.size(); ++i) {
      complete = fs::is_directory(Dir("layers/") + record->layers[i].hex, error);
    }
    if (!complete) {
      Logger("images")->warn("dropping image record {}: {}", entry.path().native(),
                             record.ok() ? "a layer is missing" : record.status().ToString());
      RemoveAll(entry.path());
      continue;
    }
    record->hex = std::string(hex);
    records_[record->hex] = *std::move(record);
  }
  return absl::OkStatus();
}

absl::StatusOr<PulledImage> ImageStore::Pull(
    const std::string& reference, const std::string& tenant, const RegistryLogin* login,
    const std::function<void(const PullProgress&)>& progress) {
  GPUAAS_ASSIGN_OR_RETURN(const std::string hex, ReferenceDigest(reference));
  if (tenant.find_first_of("\n\r") != std::string::npos) {
    return absl::InvalidArgumentError("tenant: not a tenant id");
  }
  const std::string flight_key = absl::StrCat(tenant, "\n", hex);
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = records_.find(hex);
        it != records_.end() && grants_->LentAll(Blobs(it->second), tenant)) {
      it->second.last_used_unix_micros = absl::ToUnixMicros(absl::Now());
      // The use time only orders garbage collection: losing it in a crash is harmless.
      WriteImageRecord(Dir("images/") + hex + ".json", it->second).IgnoreError();
      return ToPulledImage(it->second);
    }
    auto [it, inserted] = flights_.try_emplace(flight_key);
    if (inserted) {
      it->second = std::make_shared<Flight>();
    }
    flight = it->second;
    leader = inserted;
  }
  if (!leader) {
    flight->done.WaitForNotification();
    return flight->result;
  }
  absl::StatusOr<ImageRecord> record = PullUncached(reference, hex, tenant, login, progress);
  {
    absl::MutexLock lock(&mu_);
    if (record.ok()) {
      flight->result = ToPulledImage(*record);
      records_[hex] = *std::move(record);
    } else {
      flight->result = record.status();
    }
    flights_.erase(flight_key);
  }
  flight->done.Notify();
  return flight->result;
}

absl::StatusOr<ImageRecord> ImageStore::PullUncached(
    const std::string& reference, const std::string& hex, const std::string& tenant,
    const RegistryLogin* login, const std::function<void(const PullProgress&)>& progress) {
  absl::ReaderMutexLock gc_lock(&gc_mu_);
  PullJob job;
  job.reference = reference;
  job.limits = options_.limits;
  job.dir = Dir("pulls/") + hex + ".XXXXXX";
  job.private_dir = Dir("tmp/pull-XXXXXX");
  if (::mkdtemp(job.dir.data()) == nullptr || ::mkdtemp(job.private_dir.data()) == nullptr) {
    return absl::InternalError("image store: cannot make a pull's directories");
  }
  // The auth file is gone when the pull ends, however it ends.
  const absl::Cleanup cleanup = [&] {
    RemoveAll(job.private_dir);
    RemoveAll(job.dir);
  };
  job.layout_dir = job.dir + "/layout";
  job.blob_root = job.dir + "/blobs";
  job.blob_dir = job.blob_root + "/sha256";
  std::error_code error;
  fs::create_directories(job.blob_dir, error);
  SkopeoOptions skopeo{.skopeo_path = options_.skopeo_path,
                       .private_dir = job.private_dir,
                       .tls_verify = options_.registries.VerifiesTls(reference),
                       .timeout = options_.pull_timeout};
  if (login != nullptr) {
    GPUAAS_ASSIGN_OR_RETURN(skopeo.auth_file, WriteAuthFile(job.private_dir, reference, *login));
  }
  GPUAAS_ASSIGN_OR_RETURN(job.planned, PlanLayers(skopeo, reference));
  // The copy's blob dir holds only blobs this tenant's registry served to this tenant before:
  // skopeo reuses those and fetches every other blob from the tenant's registry, with the
  // tenant's login, verifying its digest. A layer another tenant's pull left on the node is
  // never this tenant's until its registry serves it to them.
  for (const OciLayer& layer : job.planned) {
    if (grants_->LentAll({layer.hex}, tenant)) {
      ::link((Dir("blobs/sha256/") + layer.hex).c_str(), (job.blob_dir + "/" + layer.hex).c_str());
    }
  }
  // skopeo downloads in its own thread while the layers unpack as they arrive.
  LayerArrivals arrivals(
      {.planned = job.planned,
       .blob_dir = job.blob_dir,
       .layers_dir = Dir("layers"),
       .layout_dir = job.layout_dir,
       .unpack = [this,
                  &job](const std::string& hex) { return EnsureLayer(job, job.Planned(hex)); },
       .unpack_download =
           [this, &job](const std::string& path, int fd,
                        const std::function<absl::StatusOr<bool>()>& complete) {
             return UnpackDownload(job, path, fd, complete);
           },
       .progress = progress});
  absl::Status copied;
  std::thread copier([&] {
    copied = SkopeoCopy(skopeo, reference, job.layout_dir, job.blob_root);
    arrivals.CopyDone();
  });
  absl::StatusOr<std::map<std::string, int64_t>> unpacked = arrivals.Run();
  copier.join();
  GPUAAS_RETURN_IF_ERROR(copied);
  GPUAAS_RETURN_IF_ERROR(unpacked.status());

  GPUAAS_ASSIGN_OR_RETURN(ImageRecord record, ReadPulledLayout(job));
  record.hex = hex;
  for (LayerRecord& layer : record.layers) {
    if (auto it = unpacked->find(layer.hex); it != unpacked->end()) {
      layer.unpacked_bytes = it->second;
      continue;
    }
    // Not in the plan (the registry answered the copy with another manifest than the
    // inspection): unpacked now, after the download.
    GPUAAS_ASSIGN_OR_RETURN(layer.unpacked_bytes,
                            EnsureLayer(job, OciLayer{.hex = layer.hex, .size = layer.blob_bytes}));
  }
  // Every blob of the image is now one the tenant's registry served to the tenant: lent before,
  // or verified by skopeo in this copy. The node keeps one copy of each.
  const std::vector<std::string> blobs = Blobs(record);
  for (const std::string& blob : blobs) {
    const std::string kept = Dir("blobs/sha256/") + blob;
    if (::link((job.blob_dir + "/" + blob).c_str(), kept.c_str()) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("image store: keeping blob ", blob, ": ", strerror(errno)));
    }
  }
  grants_->Lend(blobs, tenant);
  record.last_used_unix_micros = absl::ToUnixMicros(absl::Now());
  // Under mu_: two tenants' pulls of one image write the same record (through one temp file).
  absl::MutexLock lock(&mu_);
  GPUAAS_RETURN_IF_ERROR(WriteImageRecord(Dir("images/") + hex + ".json", record));
  return record;
}

absl::StatusOr<std::vector<OciLayer>> ImageStore::PlanLayers(const SkopeoOptions& skopeo,
                                                             const std::string& reference) {
  GPUAAS_ASSIGN_OR_RETURN(const std::string raw, SkopeoInspectRaw(skopeo, reference));
  GPUAAS_ASSIGN_OR_RETURN(ManifestLayers manifest, ParseManifestText(raw, skopeo.private_dir));
  if (!manifest.platform_manifest_hex.empty()) {
    const std::string platform_reference =
        reference.substr(0, reference.find('@')) + "@sha256:" + manifest.platform_manifest_hex;
    GPUAAS_ASSIGN_OR_RETURN(const std::string platform_raw,
                            SkopeoInspectRaw(skopeo, platform_reference));
    GPUAAS_ASSIGN_OR_RETURN(manifest, ParseManifestText(platform_raw, skopeo.private_dir));
  }
  // A layer listed twice (empty layers often are) is unpacked and counted once.
  std::vector<OciLayer> distinct;
  std::set<std::string> seen;
  for (OciLayer& layer : manifest.layers) {
    if (seen.insert(layer.hex).second) {
      distinct.push_back(std::move(layer));
    }
  }
  return distinct;
}

absl::StatusOr<ManifestLayers> ImageStore::ParseManifestText(const std::string& text,
                                                             const std::string& work_dir) {
  if (unpacker_ == nullptr) {
    return ParseManifest(text);
  }
  if (text.size() > kMaxManifestBytes) {  // before it touches the disk
    return absl::InvalidArgumentError(
        absl::StrCat("image manifest: more than the limit of ", kMaxManifestBytes, " bytes"));
  }
  const std::string path = work_dir + "/inspected.json";
  std::ofstream(path, std::ios::trunc) << text;
  return unpacker_->ParseManifest(path, work_dir);
}

absl::StatusOr<int64_t> ImageStore::EnsureLayer(PullJob& job, const OciLayer& layer) {
  const std::string layer_dir = Dir("layers/") + layer.hex;
  std::error_code error;
  if (fs::is_directory(layer_dir, error)) {
    const int64_t bytes = KnownUnpackedBytes(layer.hex).value_or(UnpackedSize(layer_dir));
    GPUAAS_RETURN_IF_ERROR(job.Count(bytes, 0));
    return bytes;
  }
  const std::string blob = job.blob_dir + "/" + layer.hex;
  absl::StatusOr<StreamedLayer> unpacked =
      unpacker_ != nullptr
          ? unpacker_->UnpackLayer(blob, layer.hex, layer.size, Dir("layers"), job.LayerLimits(),
                                   job.private_dir)
          : UnpackLayerWithin(blob, layer.hex, layer.size, Dir("layers"), job.LayerLimits());
  if (!unpacked.ok()) {
    if (absl::IsDataLoss(unpacked.status())) {
      // So the next pull downloads it again: the node's copy may be the bad one it was lent.
      RemoveAll(blob);
      RemoveAll(Dir("blobs/sha256/") + layer.hex);
    }
    return About(unpacked.status(), job.reference);
  }
  GPUAAS_RETURN_IF_ERROR(job.Count(unpacked->size_bytes, unpacked->entries));
  return unpacked->size_bytes;
}

absl::StatusOr<StreamedLayer> ImageStore::UnpackDownload(
    PullJob& job, const std::string& path, int fd,
    const std::function<absl::StatusOr<bool>()>& complete) {
  int64_t largest = 0;
  for (const OciLayer& layer : job.planned) {
    largest = std::max(largest, layer.size);
  }
  absl::StatusOr<StreamedLayer> unpacked =
      unpacker_ != nullptr
          ? unpacker_->UnpackDownload(path, job.blob_dir, job.planned, Dir("layers"),
                                      job.LayerLimits(), job.private_dir)
          : UnpackGrowingLayer(fd, complete, Dir("layers"), job.LayerLimits(), largest);
  if (unpacked.ok() && job.Planned(unpacked->hex).size >= 0) {
    GPUAAS_RETURN_IF_ERROR(job.Count(unpacked->size_bytes, unpacked->entries));
  }
  return unpacked;
}

absl::StatusOr<ImageRecord> ImageStore::ReadPulledLayout(PullJob& job) {
  OciImage image;
  if (unpacker_ != nullptr) {
    GPUAAS_ASSIGN_OR_RETURN(UnpackedLayout layout,
                            unpacker_->ReadLayout(job.layout_dir, job.blob_root, job.private_dir));
    image = std::move(layout.image);
  } else {
    GPUAAS_ASSIGN_OR_RETURN(image, ReadOciLayout(job.layout_dir, job.blob_root));
  }
  ImageRecord record;
  record.reference = job.reference;
  record.config_json = image.config_json;
  record.other_blobs = {image.manifest_hex, image.config_hex};
  for (const OciLayer& layer : image.layers) {
    record.layers.push_back({.hex = layer.hex, .blob_bytes = layer.size});
  }
  // Refuse a config the runtime could not use before anything is unpacked.
  GPUAAS_RETURN_IF_ERROR(About(ParseImageConfig(record.config_json).status(), job.reference));
  return record;
}

std::optional<int64_t> ImageStore::KnownUnpackedBytes(const std::string& layer_hex) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [unused, record] : records_) {
    for (const LayerRecord& layer : record.layers) {
      if (layer.hex == layer_hex) {
        return layer.unpacked_bytes;
      }
    }
  }
  return std::nullopt;
}

PulledImage ImageStore::ToPulledImage(const ImageRecord& record) const {
  PulledImage image{.digest = "sha256:" + record.hex, .size_bytes = record.unpacked_bytes()};
  for (const LayerRecord& layer : record.layers) {
    image.layer_dirs.push_back(Dir("layers/") + layer.hex);
  }
  // Parsed when the record was made; a record that no longer parses gives an empty config.
  image.config = ParseImageConfig(record.config_json).value_or(ImageConfig{});
  return image;
}

int64_t ImageStore::SizeBytes() const {
  absl::MutexLock lock(&mu_);
  std::map<std::string, int64_t> layers;
  for (const auto& [hex, record] : records_) {
    for (const LayerRecord& layer : record.layers) {
      layers[layer.hex] = layer.blob_bytes + layer.unpacked_bytes;
    }
  }
  int64_t total = 0;
  for (const auto& [hex, bytes] : layers) {
    total += bytes;
  }
  return total;
}

absl::Status ImageStore::CollectGarbage(const std::set<std::string>& in_use) {
  // Never waits for pulls: a writer waiting here would hold back every new pull behind the
  // slowest running one, which a tenant's own registry can make as slow as it likes.
  if (!gc_mu_.TryLock()) return absl::OkStatus();
  const absl::Cleanup unlock = [this] { gc_mu_.Unlock(); };
  std::vector<std::string> doomed_records;
  std::set<std::string> kept_blobs;  // layers and other blobs of the images that stay
  {
    absl::MutexLock lock(&mu_);
    std::map<std::string, int> layer_users;
    std::map<std::string, int64_t> layer_bytes;
    for (const auto& [hex, record] : records_) {
      for (const LayerRecord& layer : record.layers) {
        ++layer_users[layer.hex];
        layer_bytes[layer.hex] = layer.blob_bytes + layer.unpacked_bytes;
      }
    }
    int64_t total = 0;
    for (const auto& [hex, bytes] : layer_bytes) {
      total += bytes;
    }
    std::vector<const ImageRecord*> unused;
    for (const auto& [hex, record] : records_) {
      if (!in_use.contains("sha256:" + hex)) {
        unused.push_back(&record);
      }
    }
    std::sort(unused.begin(), unused.end(), [](const ImageRecord* a, const ImageRecord* b) {
      return a->last_used_unix_micros < b->last_used_unix_micros;
    });
    for (const ImageRecord* record : unused) {
      if (total <= options_.size_limit_bytes) {
        break;
      }
      for (const LayerRecord& layer : record->layers) {
        if (--layer_users[layer.hex] == 0) {
          total -= layer_bytes[layer.hex];
        }
      }
      doomed_records.push_back(record->hex);
    }
    for (const std::string& hex : doomed_records) {
      records_.erase(hex);
    }
    for (const auto& [hex, record] : records_) {
      for (const LayerRecord& layer : record.layers) {
        kept_blobs.insert(layer.hex);
      }
      kept_blobs.insert(record.other_blobs.begin(), record.other_blobs.end());
    }
  }
  // Records first: a crash part-way leaves layers no record names, which the next run removes.
  for (const std::string& hex : doomed_records) {
    RemoveAll(Dir("images/") + hex + ".json");
    Logger("images")->info("garbage-collected image sha256:{}", hex);
  }
  std::error_code error;
  for (absl::string_view dir : {"layers", "blobs/sha256"}) {
    for (const auto& entry : fs::directory_iterator(Dir(dir), error)) {
      if (!kept_blobs.contains(entry.path().filename().native())) {
        RemoveAll(entry.path());
      }
    }
  }
  grants_->KeepOnly(kept_blobs);
  if (error) {
    return absl::InternalError(absl::StrCat("image store: collecting garbage: ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::agent
