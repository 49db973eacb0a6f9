// A directory's entries in the order their keys sort in, and a cache of them for large
// directories, so that paging through 100,000 files does not re-read and re-sort the directory
// for every page of 1,000.
//
// Order: a directory sorts as its name followed by "/" ("a/" after "a.b" and before "a0"),
// which makes a depth-first walk over sorted directories yield keys in byte order.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::storage::local {

struct DirEntry {
  std::string sort_name;  // the name, and "/" after a directory's
  bool is_dir = false;
  std::string name() const {
    return is_dir ? sort_name.substr(0, sort_name.size() - 1) : sort_name;
  }
};
using DirEntries = std::vector<DirEntry>;  // ascending by sort_name

// The regular files and directories in `dir_fd` (symlinks and special files are left out),
// sorted. Blocks on disk I/O.
absl::StatusOr<std::shared_ptr<const DirEntries>> ReadSortedDir(int dir_fd);

// Thread-safe. An entry is used only while the directory's inode, mtime and ctime are what they
// were when it was read, so changes made through a workload's mount are seen too; an entry is
// stored only when the directory's mtime is old enough that a later change cannot carry the
// same coarse timestamp. The backend's own changes also drop entries explicitly.
class DirListingCache final {
 public:
  // Directories with fewer than `min_entries` are cheap to read and are not kept; at most
  // `max_total_entries` names are kept over all directories (least recently used go first):
  // four directories of 100,000, some 20 MB.
  explicit DirListingCache(size_t min_entries = 256, size_t max_total_entries = 400'000);

  // The sorted entries of `dir_fd`, whose key prefix within the volume is `rel` ("" for the
  // root, "a/b/" below it).
  absl::StatusOr<std::shared_ptr<const DirEntries>> Get(const std::string& rel, int dir_fd);
  void Invalidate(const std::string& rel);
  // Drops every entry (after a volume-wide change such as a recount).
  void Clear();

 private:
  struct Stamp {
    dev_t dev = 0;
    ino_t ino = 0;
    timespec mtime{};
    timespec ctime{};
    bool operator==(const Stamp& o) const;
  };
  struct Cached {
    Stamp stamp;
    std::shared_ptr<const DirEntries> entries;
    uint64_t last_use = 0;
  };
  static Stamp StampOf(const struct stat& st);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t min_entries_;
  const size_t max_total_entries_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Cached> cached_ ABSL_GUARDED_BY(mu_);
  size_t total_entries_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace gpuaas::storage::local
