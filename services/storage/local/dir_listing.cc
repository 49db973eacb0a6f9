#include "services/storage/local/dir_listing.h"

#include <errno.h>
#include <time.h>

#include <algorithm>

#include "libs/common/errno_status.h"
#include "libs/common/unique_fd.h"
#include "services/storage/local/dir_reader.h"

namespace gpuaas::storage::local {
namespace {

// File systems stamp mtime from a clock that advances once per tick (at most 10 ms on Linux);
// a directory last changed longer ago than this cannot change again under the same mtime.
constexpr int64_t kSettledNanos = 100'000'000;

int64_t Nanos(const timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const DirEntries>> ReadSortedDir(int dir_fd) {
  auto entries = std::make_shared<DirEntries>();
  absl::Status status = ReadDir(dir_fd, [&](std::string_view name, EntryType type) {
    if (type == EntryType::kFile) {
      entries->push_back(DirEntry{std::string(name), false});
    } else if (type == EntryType::kDir) {
      std::string sort_name(name);
      sort_name.push_back('/');
      entries->push_back(DirEntry{std::move(sort_name), true});
    }
    return true;
  });
  if (!status.ok()) {
    return status;
  }
  std::sort(entries->begin(), entries->end(),
            [](const DirEntry& a, const DirEntry& b) { return a.sort_name < b.sort_name; });
  return std::shared_ptr<const DirEntries>(std::move(entries));
}

bool DirListingCache::Stamp::operator==(const Stamp& o) const {
  return dev == o.dev && ino == o.ino && Nanos(mtime) == Nanos(o.mtime) &&
         Nanos(ctime) == Nanos(o.ctime);
}

DirListingCache::Stamp DirListingCache::StampOf(const struct stat& st) {
  return Stamp{st.st_dev, st.st_ino, st.st_mtim, st.st_ctim};
}

DirListingCache::DirListingCache(size_t min_entries, size_t max_total_entries)
    : min_entries_(min_entries), max_total_entries_(max_total_entries) {}

absl::StatusOr<std::shared_ptr<const DirEntries>> DirListingCache::Get(const std::string& rel,
                                                                       int dir_fd) {
  // The stamp is taken before reading: a change during the read moves the mtime on, so an
  // entry read across a change is never taken for current.
  struct stat st;
  if (::fstat(dir_fd, &st) != 0) {
    return ErrnoStatus(errno, "stat directory");
  }
  const Stamp stamp = StampOf(st);
  {
    absl::MutexLock lock(&mu_);
    auto it = cached_.find(rel);
    if (it != cached_.end()) {
      if (it->second.stamp == stamp) {
        it->second.last_use = ++clock_;
        return it->second.entries;
      }
      total_entries_ -= it->second.entries->size();
      cached_.erase(it);
    }
  }
  absl::StatusOr<std::shared_ptr<const DirEntries>> entries = ReadSortedDir(dir_fd);
  if (!entries.ok() || (*entries)->size() < min_entries_) {
    return entries;
  }
  timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  // Every change to the entries sets mtime to the current (coarse) time; once that is past the
  // stored mtime's tick, the next change cannot repeat it.
  if (Nanos(now) - Nanos(st.st_mtim) < kSettledNanos) {
    return entries;
  }
  absl::MutexLock lock(&mu_);
  Cached& slot = cached_[rel];
  if (slot.entries != nullptr) {
    total_entries_ -= slot.entries->size();
  }
  slot = Cached{stamp, *entries, ++clock_};
  total_entries_ += slot.entries->size();
  EvictLocked();
  return entries;
}

void DirListingCache::Invalidate(const std::string& rel) {
  absl::MutexLock lock(&mu_);
  auto it = cached_.find(rel);
  if (it != cached_.end()) {
    total_entries_ -= it->second.entries->size();
    cached_.erase(it);
  }
}

void DirListingCache::Clear() {
  absl::MutexLock lock(&mu_);
  cached_.clear();
  total_entries_ = 0;
}

void DirListingCache::EvictLocked() {
  while (total_entries_ > max_total_entries_ && !cached_.empty()) {
    auto oldest = cached_.begin();
    for (auto it = cached_.begin(); it != cached_.end(); ++it) {
      if (it->second.last_use < oldest->second.last_use) {
        oldest = it;
      }
    }
    total_entries_ -= oldest->second.entries->size();
    cached_.erase(oldest);
  }
}

}  // namespace gpuaas::storage::local
