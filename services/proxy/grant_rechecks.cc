#include "services/proxy/grant_rechecks.h"

namespace gpuaas::proxy {

std::optional<absl::Status> GrantRechecks::Fresh(const std::string& cookie, absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(cookie);
  if (it == entries_.end() || now - it->second.checked >= recheck_ || now < it->second.checked) {
    return std::nullopt;
  }
  return it->second.answer;
}

std::optional<absl::Time> GrantRechecks::ConfirmedAt(const std::string& cookie) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(cookie);
  if (it == entries_.end()) {
    return std::nullopt;
  }
  return it->second.checked;
}

void GrantRechecks::Remember(const std::string& cookie, const absl::Status& answer,
                             absl::Time now) {
  if (answer.code() == absl::StatusCode::kUnavailable ||
      answer.code() == absl::StatusCode::kDeadlineExceeded) {
    return;
  }
  absl::MutexLock lock(&mu_);
  if (entries_.size() >= max_entries_ && !entries_.contains(cookie)) {
    absl::erase_if(entries_, [&](const auto& e) { return now - e.second.checked >= recheck_; });
    if (entries_.size() >= max_entries_) {
      entries_.clear();
    }
  }
  entries_[cookie] = Entry{.answer = answer, .checked = now};
}

}  // namespace gpuaas::proxy
