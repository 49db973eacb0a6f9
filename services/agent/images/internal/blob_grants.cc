#include "services/agent/images/internal/blob_grants.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace gpuaas::agent {

BlobGrants::BlobGrants(std::string dir) : dir_(std::move(dir)) {
  std::error_code error;
  absl::MutexLock lock(&mu_);
  for (const auto& entry : std::filesystem::directory_iterator(dir_, error)) {
    std::ifstream in(entry.path());
    for (std::string tenant; std::getline(in, tenant);) {
      tenants_[entry.path().filename()].insert(tenant);
    }
  }
}

bool BlobGrants::LentAll(const std::vector<std::string>& hexes, const std::string& tenant) const {
  absl::MutexLock lock(&mu_);
  for (const std::string& hex : hexes) {
    const auto it = tenants_.find(hex);
    if (it == tenants_.end() || !it->second.contains(tenant)) {
      return false;
    }
  }
  return true;
}

void BlobGrants::Lend(const std::vector<std::string>& hexes, const std::string& tenant) {
  absl::MutexLock lock(&mu_);
  for (const std::string& hex : hexes) {
    if (tenants_[hex].insert(tenant).second) {
      std::ofstream(dir_ + "/" + hex, std::ios::app) << tenant << "\n";
    }
  }
}

void BlobGrants::KeepOnly(const std::set<std::string>& kept) {
  std::error_code error;
  absl::MutexLock lock(&mu_);
  for (auto it = tenants_.begin(); it != tenants_.end();) {
    if (kept.contains(it->first)) {
      ++it;
      continue;
    }
    std::filesystem::remove(dir_ + "/" + it->first, error);
    it = tenants_.erase(it);
  }
}

}  // namespace gpuaas::agent
