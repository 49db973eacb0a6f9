// What a failover drill's writers saw around a kill: every acknowledged write (its kind, its
// key, when it was sent and answered), every failed request and when. The drills retry each
// write with the same key until it is acknowledged, then check that every acknowledged key is
// still there; the ledger gives them the unavailability window and the failed requests.
#pragma once

#include <grpcpp/support/status.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace gpuaas::ha_testing {

struct WriteOutcome {
  // The acknowledged keys, by kind ("tenant", "instance", "s3"...).
  std::map<std::string, std::vector<std::string>> acknowledged;
  size_t acknowledged_total = 0;
  size_t acknowledged_before_kill = 0;
  absl::Time killed_at = absl::InfiniteFuture();
  // The first write acknowledged once the outage began: of a call sent after the first failed
  // one, or after the kill when none failed (calls in flight at the kill may still commit on
  // the old primary, and say nothing about when the new one takes writes). Infinite until then.
  absl::Time recovered_at = absl::InfiniteFuture();
  // The same for each kind.
  std::map<std::string, absl::Time> recovered_at_by_kind;
  int failed_after_kill = 0;
  // "N UNAVAILABLE, ..." overall, and by kind.
  std::string failures;
  std::map<std::string, std::string> failures_by_kind;

  absl::Duration window() const { return recovered_at - killed_at; }
};

class WriteLedger final {
 public:
  void Acknowledged(const std::string& kind, const std::string& key, absl::Time sent);
  // `reason`: a status code's name, "HTTP 503"...
  void Failed(const std::string& kind, const std::string& reason);
  // Runs `kill` with the ledger held, so that every write before it counts as before the kill
  // and every one after as after. Returns what `kill` returned.
  bool Kill(const std::function<bool()>& kill);
  WriteOutcome Summarize();

 private:
  struct Ack {
    std::string kind;
    std::string key;
    absl::Time sent;
    absl::Time acknowledged;
  };
  absl::Mutex mu_;
  std::vector<Ack> acks_ ABSL_GUARDED_BY(mu_);
  size_t acks_before_kill_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::map<std::string, int>> failures_ ABSL_GUARDED_BY(mu_);
  int failed_after_kill_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time killed_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // When the first call after the kill failed: the outage as the clients saw it began.
  absl::Time first_failure_after_kill_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
};

// Calls `write` until it succeeds (returns "") or `give_up` passes, 50 ms apart, with the same
// key each time; records `key` acknowledged, and every failure under the reason `write`
// returned. True when acknowledged. Blocks.
bool WriteUntilAcknowledged(WriteLedger& ledger, const std::string& kind, const std::string& key,
                            const std::function<std::string()>& write,
                            absl::Duration give_up = absl::Seconds(90));

// "" for OK, else the status code's name: what a write passed to WriteUntilAcknowledged returns.
std::string FailureOf(const grpc::Status& status);

}  // namespace gpuaas::ha_testing
