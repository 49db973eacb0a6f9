#include "libs/authz/verified_token_cache.h"

#include <utility>

namespace gpuaas::authz {

std::optional<Principal> VerifiedTokenCache::Find(std::string_view token, uint64_t generation,
                                                  absl::Time now, absl::Duration leeway) {
  absl::MutexLock lock(&mu_);
  if (generation != generation_) {
    return std::nullopt;
  }
  auto it = entries_.find(absl::string_view(token.data(), token.size()));
  if (it == entries_.end()) {
    return std::nullopt;
  }
  const Entry& e = it->second;
  if (now - leeway >= e.exp || e.iat > now + leeway) {
    return std::nullopt;  // the full check reports why
  }
  return e.principal;
}

void VerifiedTokenCache::Insert(std::string_view token, uint64_t generation, Principal principal,
                                absl::Time iat, absl::Time exp, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (generation < generation_) {
    return;  // verified against keys that have since been replaced
  }
  if (generation > generation_) {
    entries_.clear();
    generation_ = generation;
  }
  if (entries_.size() >= capacity_) {
    absl::erase_if(entries_, [now](const auto& kv) { return now >= kv.second.exp; });
    if (entries_.size() >= capacity_) {
      entries_.clear();
    }
  }
  entries_.insert_or_assign(std::string(token), Entry{std::move(principal), iat, exp});
}

size_t VerifiedTokenCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace gpuaas::authz
