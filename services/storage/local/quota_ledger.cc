#include "services/storage/local/quota_ledger.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpuaas::storage::local {

Reservation::Reservation(Reservation&& other) noexcept
    : ledger_(std::exchange(other.ledger_, nullptr)), charge_(std::exchange(other.charge_, {})) {}

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    ledger_ = std::exchange(other.ledger_, nullptr);
    charge_ = std::exchange(other.charge_, {});
  }
  return *this;
}

Reservation::~Reservation() { Release(); }

void Reservation::Release() {
  if (ledger_ != nullptr) {
    ledger_->Return(charge_);
  }
  ledger_ = nullptr;
  charge_ = {};
}

void QuotaLedger::SetLimits(const VolumeLimits& limits) {
  absl::MutexLock lock(&mu_);
  limits_ = limits;
}

VolumeLimits QuotaLedger::limits() const {
  absl::MutexLock lock(&mu_);
  return limits_;
}

void QuotaLedger::SetUsed(const VolumeUsage& used) {
  absl::MutexLock lock(&mu_);
  used_ = used;
}

void QuotaLedger::SetUsedLagging(const VolumeUsage& counted, absl::Duration lag, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (now - last_change_ < lag) {
    used_.bytes = std::max(used_.bytes, counted.bytes);
    used_.files = std::max(used_.files, counted.files);
  } else {
    used_ = counted;
  }
}

VolumeUsage QuotaLedger::used() const {
  absl::MutexLock lock(&mu_);
  return used_;
}

Charge QuotaLedger::reserved() const {
  absl::MutexLock lock(&mu_);
  return reserved_;
}

absl::Status QuotaLedger::CheckFitsLocked(const Charge& extra) const {
  // Written as "extra > room" so that no sum can overflow, whatever size a client announces.
  if (extra.bytes > 0 && extra.bytes > limits_.max_bytes - used_.bytes - reserved_.bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("byte limit: the volume holds ", used_.bytes, " of its ", limits_.max_bytes,
                     " bytes (", reserved_.bytes, " more reserved by writes in progress); ",
                     extra.bytes, " more do not fit"));
  }
  if (extra.files > 0 && extra.files > limits_.max_files - used_.files - reserved_.files) {
    return absl::ResourceExhaustedError(
        absl::StrCat("file limit: the volume holds ", used_.files, " of its ", limits_.max_files,
                     " files (", reserved_.files, " more reserved by writes in progress); ",
                     extra.files, " more do not fit"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Reservation> QuotaLedger::Reserve(const Charge& charge) {
  const Charge positive{std::max<int64_t>(charge.bytes, 0), std::max<int64_t>(charge.files, 0)};
  absl::MutexLock lock(&mu_);
  absl::Status fits = CheckFitsLocked(positive);
  if (!fits.ok()) {
    return fits;
  }
  reserved_.bytes += positive.bytes;
  reserved_.files += positive.files;
  return Reservation(this, positive);
}

absl::Status QuotaLedger::Settle(Reservation& reservation, const Charge& delta) {
  const Charge held = reservation.ledger_ == this ? reservation.charge_ : Charge{};
  absl::MutexLock lock(&mu_);
  const Charge excess{delta.bytes - held.bytes, delta.files - held.files};
  absl::Status fits = CheckFitsLocked(excess);
  if (!fits.ok()) {
    return fits;
  }
  reserved_.bytes -= held.bytes;
  reserved_.files -= held.files;
  used_.bytes = std::max<int64_t>(used_.bytes + delta.bytes, 0);
  used_.files = std::max<int64_t>(used_.files + delta.files, 0);
  last_change_ = absl::Now();
  if (reservation.ledger_ == this) {
    reservation.ledger_ = nullptr;
    reservation.charge_ = {};
  }
  return absl::OkStatus();
}

void QuotaLedger::Apply(const Charge& delta) {
  absl::MutexLock lock(&mu_);
  used_.bytes = std::max<int64_t>(used_.bytes + delta.bytes, 0);
  used_.files = std::max<int64_t>(used_.files + delta.files, 0);
  last_change_ = absl::Now();
}

void QuotaLedger::Return(const Charge& charge) {
  absl::MutexLock lock(&mu_);
  reserved_.bytes -= charge.bytes;
  reserved_.files -= charge.files;
}

}  // namespace gpuaas::storage::local
