#include "services/agent/runtime/tenant_groups.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpuaas::agent {

TenantGroups::TenantGroups(std::string path, gid_t first, gid_t last)
    : path_(std::move(path)), first_(first), last_(last) {
  std::ifstream in(path_);
  std::string tenant;
  for (gid_t gid; in >> tenant >> gid;) gids_[tenant] = gid;
}

absl::StatusOr<gid_t> TenantGroups::GidOf(const std::string& tenant_id) {
  if (tenant_id.empty()) return absl::InvalidArgumentError("tenant_id: empty");
  for (char c : tenant_id) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("tenant_id: \"", tenant_id, "\" holds a space or control character"));
    }
  }
  absl::MutexLock lock(&mu_);
  if (auto it = gids_.find(tenant_id); it != gids_.end()) return it->second;
  std::set<gid_t> taken;
  for (const auto& [tenant, gid] : gids_) taken.insert(gid);
  gid_t gid = first_;
  while (gid <= last_ && taken.count(gid)) ++gid;
  if (gid > last_) {
    return absl::ResourceExhaustedError(absl::StrCat("no free tenant gid in ", first_, "-", last_));
  }
  // Written down before it is used: a gid that owns a storage must never go to another tenant.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [tenant, g] : gids_) out << tenant << " " << g << "\n";
    out << tenant_id << " " << gid << "\n";
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
  }
  gids_[tenant_id] = gid;
  return gid;
}

}  // namespace gpuaas::agent
