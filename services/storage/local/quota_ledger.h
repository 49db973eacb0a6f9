// A volume's byte and file counters against its limits. Writers reserve what they announce
// before their first byte lands, so concurrent writers can never pass the limits together;
// commits settle the reservation against what really changed on disk.
#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::local {

struct Charge {
  int64_t bytes = 0;
  int64_t files = 0;
};

class QuotaLedger;

// What one writer holds against the limits until it commits or goes away (RAII).
class Reservation final {
 public:
  Reservation() = default;
  Reservation(Reservation&& other) noexcept;
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation();

  const Charge& charge() const { return charge_; }

 private:
  friend class QuotaLedger;
  Reservation(QuotaLedger* ledger, Charge charge) : ledger_(ledger), charge_(charge) {}
  void Release();

  QuotaLedger* ledger_ = nullptr;
  Charge charge_;
};

// Thread-safe. Reservations must not outlive their ledger.
class QuotaLedger final {
 public:
  void SetLimits(const VolumeLimits& limits);
  VolumeLimits limits() const;
  // Replaces the committed counters with a fresh count (reservations stay as they are).
  void SetUsed(const VolumeUsage& used);
  // SetUsed with a count from a file system whose counters follow writes `lag` late (CephFS's
  // recursive statistics): while this ledger has committed a change within `lag` before `now`,
  // the count may not include it yet, so the counters only grow.
  void SetUsedLagging(const VolumeUsage& counted, absl::Duration lag, absl::Time now);
  VolumeUsage used() const;
  // In flight: reserved by writers not yet committed.
  Charge reserved() const;

  // Reserves `charge` unless committed + reserved + charge would pass a limit: then
  // RESOURCE_EXHAUSTED naming the limit, the usage and what was asked. A zero charge always
  // fits, even in a volume over its limits.
  absl::StatusOr<Reservation> Reserve(const Charge& charge);

  // Applies `delta` (what the commit changes on disk) and returns `reservation` (which may be
  // empty). Where delta exceeds the reservation (the old object shrank or vanished since the
  // reservation was taken) the excess must fit like a new reservation; otherwise
  // RESOURCE_EXHAUSTED and nothing changes (the reservation is kept).
  absl::Status Settle(Reservation& reservation, const Charge& delta);

  // Applies `delta` without any check (deletes, dropped uploads, undoing a failed rename).
  // Counters never go below zero: a workload may have removed what they still count.
  void Apply(const Charge& delta);

 private:
  friend class Reservation;
  void Return(const Charge& charge);
  absl::Status CheckFitsLocked(const Charge& extra) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  VolumeLimits limits_ ABSL_GUARDED_BY(mu_);
  VolumeUsage used_ ABSL_GUARDED_BY(mu_);
  Charge reserved_ ABSL_GUARDED_BY(mu_);
  absl::Time last_change_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace gpuaas::storage::local
