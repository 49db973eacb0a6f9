// For tests: the admin client's options for the ctest fixture `ceph`'s cluster
// (libs/testing/ceph_test.h says how a test finds it).
#pragma once

#include "absl/status/statusor.h"
#include "libs/testing/ceph_test.h"
#include "services/storage/ceph/subvolumes.h"

namespace gpuaas::storage::ceph {

// FAILED_PRECONDITION naming the fixture when there is no cluster.
inline absl::StatusOr<ClusterOptions> TestClusterOptions() {
  absl::StatusOr<::gpuaas::testing::CephCluster> cluster =
      ::gpuaas::testing::CephClusterFromFixture();
  if (!cluster.ok()) return cluster.status();
  ClusterOptions options;
  options.conf_path = cluster->conf;
  options.keyring_path = cluster->keyring;
  options.timeout = absl::Seconds(20);
  return options;
}

}  // namespace gpuaas::storage::ceph
