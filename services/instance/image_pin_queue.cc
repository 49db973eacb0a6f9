#include "services/instance/image_pin_queue.h"

#include <algorithm>

#include "libs/common/logging.h"
#include "services/instance/registry_secrets.h"

namespace gpuaas::instance {

ImagePinQueue::ImagePinQueue(db::Pool& pool, ImagePinner& pinner, const SecretBox* box,
                             ImagePinQueueOptions options)
    : pool_(pool), pinner_(pinner), box_(box), options_(options) {}

ImagePinQueue::~ImagePinQueue() { Stop(); }

void ImagePinQueue::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (!workers_.empty()) return;
    stopping_ = false;
  }
  for (int i = 0; i < std::max(1, options_.workers); ++i) workers_.emplace_back([this] { Work(); });
  absl::StatusOr<std::vector<PinKey>> pending = pool_.Read<std::vector<PinKey>>(
      "instance.pending_pins",
      [](db::Tx& tx) -> absl::StatusOr<std::vector<PinKey>> { return repo::PendingPins(tx); });
  if (!pending.ok()) {
    Logger("instance")
        ->warn("image pins: cannot list the PENDING images: {}", pending.status().ToString());
    return;
  }
  for (PinKey& key : *pending) Add(std::move(key));
}

void ImagePinQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  absl::MutexLock lock(&mu_);
  waiting_.clear();
}

void ImagePinQueue::Add(PinKey key) {
  absl::MutexLock lock(&mu_);
  waiting_.push_back(std::move(key));
}

bool ImagePinQueue::HasRoom(const std::string& tenant) const {
  const auto it = running_.find(tenant);
  return it == running_.end() || it->second < options_.per_tenant;
}

bool ImagePinQueue::HasWork() const {
  return stopping_ || std::any_of(waiting_.begin(), waiting_.end(),
                                  [this](const PinKey& k) { return HasRoom(k.tenant); });
}

bool ImagePinQueue::TakeRunnable(PinKey& key) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (HasRoom(it->tenant)) {
      key = std::move(*it);
      waiting_.erase(it);
      return true;
    }
  }
  return false;
}

void ImagePinQueue::Work() {
  for (;;) {
    PinKey key;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &ImagePinQueue::HasWork));
      if (stopping_) return;
      if (!TakeRunnable(key)) continue;
      ++running_[key.tenant];
    }
    PinOne(key);
    absl::MutexLock lock(&mu_);
    if (--running_[key.tenant] == 0) running_.erase(key.tenant);
  }
}

void ImagePinQueue::PinOne(const PinKey& key) {
  absl::StatusOr<std::optional<ImageRow>> row = pool_.Read<std::optional<ImageRow>>(
      "instance.get_image", [&](db::Tx& tx) -> absl::StatusOr<std::optional<ImageRow>> {
        return repo::GetImage(tx, key.tenant, key.name, key.version);
      });
  if (!row.ok()) {
    // Stays PENDING: the next Start (or a create of it again) retries.
    Logger("instance")
        ->warn("image pins: reading {}/{}:{}: {}", key.tenant, key.name, key.version,
               row.status().ToString());
    return;
  }
  if (!*row || (*row)->image.state() != pb::IMAGE_STATE_PENDING) return;
  const pb::Image& image = (*row)->image;
  absl::StatusOr<pb::RegistryCredentials> login = pb::RegistryCredentials();
  if (!(*row)->registry_secret.empty()) {
    login = box_ == nullptr ? absl::FailedPreconditionError("no --secret-key-file")
                            : OpenCredentials(*box_, (*row)->registry_secret,
                                              ImageSecretAad(key.tenant, key.name, key.version));
  }
  absl::StatusOr<std::string> pinned =
      login.ok() ? pinner_.Pin(image.oci_reference(), *login)
                 : absl::FailedPreconditionError(
                       "registry_credentials: the service cannot open the stored login");
  // Messages are the pinner's fixed ones: nothing a registry sent reaches the row.
  const std::string failure = pinned.ok() ? "" : std::string(pinned.status().message());
  Logger("instance")
      ->info("image pins: {}/{}:{} {}", key.tenant, key.name, key.version,
             pinned.ok() ? *pinned : "FAILED: " + failure);
  const absl::Status s = pool_.RunInTransaction("instance.finish_pin", [&](db::Tx& tx) {
    repo::FinishPin(tx, key, image.oci_reference(), pinned.ok() ? *pinned : "", failure);
    return absl::OkStatus();
  });
  if (!s.ok()) {
    Logger("instance")
        ->warn("image pins: writing {}/{}:{}: {}", key.tenant, key.name, key.version, s.ToString());
  }
}

}  // namespace gpuaas::instance
