// The group each tenant's workloads run in, so that every workload of one tenant may write the
// tenant's storages (mount_source.h ShareTreeWith) while each keeps a uid of its own. A tenant's
// gid comes from a range of its own (not the workloads' uids, not the host's groups) and is
// kept in one file, so it survives agent restarts; it is never handed to another tenant, even
// after the first one's workloads are gone, since its storages stay group-owned by it.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::agent {

class TenantGroups {
 public:
  // Reads `path` ("<tenant_id> <gid>" lines; missing is empty) for gids in [first, last].
  TenantGroups(std::string path, gid_t first, gid_t last);

  // The tenant's gid, handed out (and written down) on first use. Errors: INVALID_ARGUMENT for
  // an empty tenant_id or one with spaces or control characters; RESOURCE_EXHAUSTED when the
  // range is spent; INTERNAL when the file cannot be written.
  absl::StatusOr<gid_t> GidOf(const std::string& tenant_id);

 private:
  const std::string path_;
  const gid_t first_;
  const gid_t last_;
  absl::Mutex mu_;
  std::map<std::string, gid_t> gids_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::agent
