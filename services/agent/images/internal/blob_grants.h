// Which tenants the node's image cache lends each blob to: those whose own registry served it to
// them, with their own login (image_store.h, Pull). Kept in <root>/grants/<blob hex>, one tenant
// a line, so a restarted agent lends what it lent before; a grant lost in a crash only costs that
// tenant one more download.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::agent {

class BlobGrants final {
 public:
  // `dir`: <root>/grants, which exists. Reads what it holds. Blocks on disk I/O.
  explicit BlobGrants(std::string dir);

  // Whether every one of `hexes` is lent to `tenant`. Thread-safe.
  bool LentAll(const std::vector<std::string>& hexes, const std::string& tenant) const;
  // Records that `tenant` was served `hexes`. Thread-safe; blocks on disk I/O.
  void Lend(const std::vector<std::string>& hexes, const std::string& tenant);
  // Forgets every blob not in `kept` (garbage collection). Thread-safe.
  void KeepOnly(const std::set<std::string>& kept);

 private:
  const std::string dir_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::set<std::string>> tenants_ ABSL_GUARDED_BY(mu_);  // by blob hex
};

}  // namespace gpuaas::agent
