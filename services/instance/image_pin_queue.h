// The image pins' own workers: CreateImage stores an image PENDING and hands it here; a worker
// asks the registry (image_pinner.h) and makes it READY or FAILED. No call's thread waits on a
// registry, and one tenant's slow registry holds at most `per_tenant` of the workers: the
// others go on pinning other tenants' images.
//
// The queue is this replica's memory; the rows are the truth. Start() queues every PENDING
// row (a replica that died mid-pin leaves its images PENDING for the next start). Two replicas
// pinning one image agree: the first to finish writes, the other finds it no longer PENDING.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "services/instance/image_pinner.h"
#include "services/instance/repository_images.h"

namespace gpuaas::instance {

struct ImagePinQueueOptions {
  int workers = 4;
  // Pins of one tenant running at once; the rest of its pins wait their turn.
  int per_tenant = 1;
};

class ImagePinQueue final {
 public:
  // `pinner`, `box` (may be null: images with a login then fail) and `pool` outlive it.
  ImagePinQueue(db::Pool& pool, ImagePinner& pinner, const SecretBox* box,
                ImagePinQueueOptions options);
  // Stop().
  ~ImagePinQueue();
  ImagePinQueue(const ImagePinQueue&) = delete;
  ImagePinQueue& operator=(const ImagePinQueue&) = delete;

  // Starts the workers and queues every PENDING image. Blocks on one database read.
  void Start();
  // Lets running pins finish (each bounded by the pinner's timeouts) and joins the workers.
  // Queued pins stay PENDING in the database for the next Start.
  void Stop();
  // Queues `key` (a PENDING image). Never blocks.
  void Add(PinKey key);

 private:
  void Work();
  // `tenant` runs fewer than per_tenant pins.
  bool HasRoom(const std::string& tenant) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stopping, or a waiting key whose tenant has room.
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A waiting key whose tenant has room, removed from the queue, or false.
  bool TakeRunnable(PinKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PinOne(const PinKey& key);

  db::Pool& pool_;
  ImagePinner& pinner_;
  const SecretBox* box_;
  const ImagePinQueueOptions options_;
  mutable absl::Mutex mu_;
  std::deque<PinKey> waiting_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> running_ ABSL_GUARDED_BY(mu_);  // per tenant
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace gpuaas::instance
