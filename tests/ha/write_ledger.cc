#include "tests/ha/write_ledger.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace gpuaas::ha_testing {

void WriteLedger::Acknowledged(const std::string& kind, const std::string& key, absl::Time sent) {
  absl::MutexLock lock(&mu_);
  acks_.push_back({kind, key, sent, absl::Now()});
}

void WriteLedger::Failed(const std::string& kind, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  ++failures_[kind][reason];
  if (now >= killed_at_) {
    ++failed_after_kill_;
    first_failure_after_kill_ = std::min(first_failure_after_kill_, now);
  }
}

bool WriteLedger::Kill(const std::function<bool()>& kill) {
  absl::MutexLock lock(&mu_);
  acks_before_kill_ = acks_.size();
  const bool killed = kill();
  killed_at_ = absl::Now();
  return killed;
}

namespace {

// "N UNAVAILABLE, M INTERNAL"
void AppendCounts(const std::map<std::string, int>& counts, std::string& out) {
  for (const auto& [reason, count] : counts) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", count, " ", reason);
  }
}

}  // namespace

WriteOutcome WriteLedger::Summarize() {
  absl::MutexLock lock(&mu_);
  WriteOutcome out{.acknowledged_total = acks_.size(),
                   .acknowledged_before_kill = acks_before_kill_,
                   .killed_at = killed_at_,
                   .failed_after_kill = failed_after_kill_};
  const absl::Time outage =
      first_failure_after_kill_ != absl::InfiniteFuture() ? first_failure_after_kill_ : killed_at_;
  for (const Ack& ack : acks_) {
    out.acknowledged[ack.kind].push_back(ack.key);
    if (ack.sent <= outage) continue;
    out.recovered_at = std::min(out.recovered_at, ack.acknowledged);
    auto [it, inserted] = out.recovered_at_by_kind.emplace(ack.kind, ack.acknowledged);
    if (!inserted) it->second = std::min(it->second, ack.acknowledged);
  }
  std::map<std::string, int> all;
  for (const auto& [kind, counts] : failures_) {
    AppendCounts(counts, out.failures_by_kind[kind]);
    for (const auto& [reason, count] : counts) all[reason] += count;
  }
  AppendCounts(all, out.failures);
  return out;
}

bool WriteUntilAcknowledged(WriteLedger& ledger, const std::string& kind, const std::string& key,
                            const std::function<std::string()>& write, absl::Duration give_up) {
  const absl::Time deadline = absl::Now() + give_up;
  while (absl::Now() < deadline) {
    const absl::Time sent = absl::Now();
    const std::string failure = write();
    if (failure.empty()) {
      ledger.Acknowledged(kind, key, sent);
      return true;
    }
    ledger.Failed(kind, failure);
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

std::string FailureOf(const grpc::Status& status) {
  if (status.ok()) return "";
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));
}

}  // namespace gpuaas::ha_testing
