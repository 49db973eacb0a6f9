// For tests: the Ceph cluster GPUAAS_TEST_CEPH_DIR names. Under ctest that is the fixture
// `ceph`'s directory (tests/ceph_fixture: files `conf` and `keyring`, each holding a path); by
// hand it may be a cluster's own directory (tools/ceph-cluster start DIR: DIR/ceph.conf and
// DIR/ceph.client.admin.keyring).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/statusor.h"
#include "services/storage/ceph/subvolumes.h"

namespace gpuaas::storage::ceph {

// The admin client's options. FAILED_PRECONDITION saying how to get a cluster when there is none.
inline absl::StatusOr<ClusterOptions> TestClusterOptions() {
  const char* env = std::getenv("GPUAAS_TEST_CEPH_DIR");
  const std::filesystem::path dir = env != nullptr ? env : "";
  const auto first_line = [](const std::filesystem::path& file) {
    std::string line;
    std::ifstream in(file);
    std::getline(in, line);
    return line;
  };
  ClusterOptions options;
  if (!dir.empty() && std::filesystem::exists(dir / "conf")) {
    options.conf_path = first_line(dir / "conf");
    options.keyring_path = first_line(dir / "keyring");
  } else if (!dir.empty() && std::filesystem::exists(dir / "ceph.conf")) {
    options.conf_path = (dir / "ceph.conf").string();
    options.keyring_path = (dir / "ceph.client.admin.keyring").string();
  } else {
    return absl::FailedPreconditionError(
        "no Ceph cluster: run under ctest (fixture ceph) or set GPUAAS_TEST_CEPH_DIR to a "
        "directory made by tools/ceph-cluster start DIR");
  }
  options.timeout = absl::Seconds(20);
  return options;
}

}  // namespace gpuaas::storage::ceph
