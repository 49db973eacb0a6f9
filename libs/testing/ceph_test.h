// Ceph for tests: the throwaway cluster of the ctest fixture `ceph` (tests/ceph_fixture, made
// by tools/ceph-cluster: a mon, a mgr, an OSD, an MDS and the CephFS `gpuaas` with the mgr's
// `volumes` module). A test declared with gpuaas_test(... FIXTURES ceph) finds it through
// GPUAAS_TEST_CEPH_DIR:
//
//   class MountTest : public gpuaas::testing::CephTest {};
//   TEST_F(MountTest, Mounts) {
//     // ceph().conf, ceph().keyring: pass them to librados, libcephfs, `ceph -c`, ceph-fuse
//   }
//
// Without the fixture a CephTest fails (it never skips): a test that needs Ceph and passes
// without it would prove nothing.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::testing {

// The fixture's cluster. The admin keyring is 0600 and grants everything: pass its path, never
// its contents, to what a test starts.
struct CephCluster {
  std::string conf;     // its ceph.conf (which names the keyring for client.admin)
  std::string keyring;  // client.admin's keyring
  std::string fs;       // the CephFS, "gpuaas"
};

// The cluster the fixture wrote into $GPUAAS_TEST_CEPH_DIR (files `conf` and `keyring`, each
// holding a path). Reads two small files; does not contact the cluster. Errors:
// FAILED_PRECONDITION naming the fixture when the variable is unset or the files are missing.
absl::StatusOr<CephCluster> CephClusterFromFixture();

// A test on the fixture's cluster: SetUp fails the test when there is none.
class CephTest : public ::testing::Test {
 protected:
  void SetUp() override;

  const CephCluster& ceph() const { return ceph_; }

 private:
  CephCluster ceph_;
};

}  // namespace gpuaas::testing
